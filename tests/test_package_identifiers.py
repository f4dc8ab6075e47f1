"""The identifier-first rule's half outside search: which queries are identifiers, the parts of
a name, and the sections (`symbols.chunk_id`) of the entries such a query names."""

from __future__ import annotations

from pathlib import Path

import pytest
from apiref_fixtures import install_release, unpack_sdist
from hypothesis import given
from hypothesis import strategies as st

from context_cli.package.identifiers import identifier, identifier_chunks, parts, tails
from context_cli.package.reader import Package, open_package


@pytest.mark.parametrize(("query", "name"), [
    ("send_file", "send_file"), ("flask.send_file()", "flask.send_file"), ("useEffect", "useEffect"),
    ("z.string", "z.string"), ("Session.request", "Session.request"), ("Session::request", "Session.request"),
    ("  `BaseModel`  ", "BaseModel"), ("render()", "render"), ("HTTPServer", "HTTPServer"),
    ("@babel/code-frame.codeFrameColumns", "@babel/code-frame.codeFrameColumns"), ("$http", "$http"),
    ("render", None), ("Response", None), ("how do I send a file", None), ("send_file flask", None),
    ("x-y", None), ("1.2.3", None), ("", None), ("a_" * 200, None), ("ünïcode_name", None)])
def test_what_counts_as_an_identifier(query: str, name: str | None) -> None:
    assert identifier(query) == name


def test_parts_and_tail_keys_join_case_styles() -> None:
    assert parts("useEffect") == ("use", "effect") and parts("HTTPServer.serve_forever") == (
        "http", "server", "serve", "forever")
    assert parts("toJSON") == ("to", "json") and parts("base64Encode") == ("base", "64", "encode")
    assert tails("react.useEffect") == ("useeffect", "use_effect")
    assert tails("send_file") == ("send_file", "sendfile") and tails("get") == ("get",)


@given(st.text(max_size=80))
def test_any_text_is_an_identifier_or_not_without_error(text: str) -> None:
    name = identifier(text)
    assert name is None or (name and len(name) <= 200 and " " not in name)


@pytest.fixture(scope="module")
def itsdangerous(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scratch = tmp_path_factory.mktemp("itsdangerous")
    return install_release(scratch / "store", "2.2.0", scratch)


def _first(pkg: Package, query: str) -> str:
    """The text of the first section `query` names."""
    ids = identifier_chunks(query, pkg)
    return dict(pkg.chunks(ids[:1]))[ids[0]].content


def test_an_identifier_query_names_its_entrys_section_first(itsdangerous: Path) -> None:
    with open_package(itsdangerous) as pkg:
        sign = identifier_chunks("Signer.sign", pkg)
        assert len(sign) == 1  # not TimestampSigner.sign: a name part is matched whole
        assert "Signer.sign(value: str | bytes) -> bytes" in _first(pkg, "Signer.sign")
        for same in ("itsdangerous.Signer.sign", "itsdangerous.signer.Signer.sign()", "signer.SIGN",
                     "its.Signer.sign"):  # a re-export name, a call, case ignored, an import alias in front
            assert identifier_chunks(same, pkg)[:1] == sign, same
        assert "`URLSafeSerializer(URLSafeSerializerMixin" in _first(pkg, "URLSafeSerializer")  # autodoc-filled docs
        assert identifier_chunks("url_safe_serializer", pkg) == identifier_chunks("URLSafeSerializer", pkg)
        assert identifier_chunks("sign", pkg) == [] and identifier_chunks("how to sign a value", pkg) == []
        assert identifier_chunks("no_such_name", pkg) == []


def test_a_package_without_symbols_names_nothing(tmp_path: Path) -> None:
    from context_cli.build import BuildOptions, build
    from context_cli.sources.base import Fetched

    root = unpack_sdist("itsdangerous-2.2.0", tmp_path)
    fetched = Fetched(source_type="folder", source_url="itsdangerous", folder=root / "docs", name="its", version="1")
    built = build(fetched, tmp_path / "plain.db", BuildOptions(embed=False, api=False))
    with open_package(built.path) as pkg:
        assert not pkg.has_symbols and identifier_chunks("Signer.sign", pkg) == []
