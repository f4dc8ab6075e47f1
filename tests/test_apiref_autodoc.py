"""autodoc and mkdocstrings directives filled from the release's own entries."""

from __future__ import annotations

from pathlib import Path

import pytest
from apiref_fixtures import unpack_sdist

from context_cli.apiref.autodoc import Expander
from context_cli.apiref.python import extract_api
from context_cli.parse import parse_file


@pytest.fixture(scope="module")
def expander(tmp_path_factory: pytest.TempPathFactory) -> tuple[Expander, Path]:
    root = unpack_sdist("itsdangerous-2.2.0", tmp_path_factory.mktemp("sdist"))
    return Expander(extract_api(root, registry="pip", name="itsdangerous", version="2.2.0").symbols), root


def test_autoclass_with_members_comes_out_whole(expander) -> None:
    fill, root = expander
    rel = "docs/signer.rst"
    data = fill.expand(rel, (root / rel).read_bytes())
    doc = parse_file(rel, data)
    text = "\n".join(b.text for b in doc.blocks)
    assert "Signer.sign(value: str | bytes) -> bytes" in text  # a member, from `:members:`
    assert "Signs the given string." in text and "Also available as" in text
    assert "Provides signature generation using HMACs." in text  # a plain `autoclass` (current module)


def test_mkdocstrings_block_and_unknown_targets(expander) -> None:
    fill, _ = expander
    page = b"# API\n\n::: itsdangerous.encoding\n\n::: nowhere.thing\n"
    text = fill.expand("docs/api.md", page).decode()
    assert "### itsdangerous.encoding.want_bytes" in text and "want_bytes(s: str | bytes" in text
    assert "::: nowhere.thing" in text  # not an entry: left as it is
    assert fill.expand("docs/other.md", b"# Plain\n") == b"# Plain\n"
