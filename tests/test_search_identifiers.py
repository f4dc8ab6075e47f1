"""A question that is an identifier puts the entry it names first (docs/search.md, "The
ranking rules", 1): `Signer.sign`, with or without the package in front, as a call."""

from __future__ import annotations

from pathlib import Path

import pytest
from apiref_fixtures import install_release

import context_cli as cx
from context_cli.package.identifiers import identifier_chunks
from context_cli.package.reader import open_package
from context_cli.search.engine import answer, rank
from context_cli.search.searcher import open_searcher


@pytest.fixture(scope="module")
def itsdangerous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scratch = tmp_path_factory.mktemp("itsdangerous")
    return install_release(scratch / "store", "2.2.0", scratch)


@pytest.mark.parametrize("query", ["Signer.sign", "itsdangerous.Signer.sign", "Signer.sign()", "URLSafeSerializer",
                                   "dumps"])
def test_the_named_entry_comes_first(itsdangerous: Path, query: str) -> None:
    with open_package(itsdangerous) as pkg:
        wanted = identifier_chunks(query, pkg)
    ranked, _, _ = rank(query, [open_searcher(cx.open(itsdangerous))], "hybrid")
    if query == "dumps":  # a bare word is words: searched as any question
        assert not wanted
        return
    assert wanted and [c.chunk_id for c in ranked[:len(wanted)]] == wanted
    assert answer(query, [cx.open(itsdangerous)]).results[0].source == ranked[0].doc_path  # (its page, first)


def test_as_words_the_entry_was_not_first(itsdangerous: Path) -> None:
    """The rule matters: the same name searched as words ranks a guide's section first."""
    s = open_searcher(cx.open(itsdangerous))
    with open_package(itsdangerous) as pkg:
        wanted = identifier_chunks("Serializer.load_payload", pkg)[0]
    assert rank("Serializer.load_payload", [s], "hybrid")[0][0].chunk_id == wanted
    assert rank("serializer load payload", [s], "hybrid")[0][0].chunk_id != wanted
