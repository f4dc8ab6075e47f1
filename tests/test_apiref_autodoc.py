"""autodoc and mkdocstrings directives filled from the release's own entries."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apiref_fixtures import unpack_sdist

from context_cli.apiref.autodoc import Expander
from context_cli.apiref.python import extract_api
from context_cli.parse import parse_file
from context_cli.parse.sphinx_conf import SphinxConf
from context_cli.symbol import Symbol


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Symbol], Path]:
    root = unpack_sdist("itsdangerous-2.2.0", tmp_path_factory.mktemp("sdist"))
    return extract_api(root, registry="pip", name="itsdangerous", version="2.2.0").symbols, root


@pytest.fixture
def expander(release: tuple[list[Symbol], Path]) -> tuple[Expander, Path]:
    symbols, root = release
    return Expander(symbols), root


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
    assert "### itsdangerous.encoding.base64_encode" in text and "base64_encode(string: str | bytes" in text
    assert "want_bytes" not in text  # no docstring: mkdocstrings shows it only with `show_if_no_docstring`
    assert "::: nowhere.thing" in text  # not an entry: left as it is
    assert fill.expand("docs/other.md", b"# Plain\n") == b"# Plain\n"


def test_members_are_picked_as_sphinx_picks_them(expander) -> None:
    fill, _ = expander

    def members(options: str) -> set[str]:
        page = f".. autoclass:: itsdangerous.signer.Signer\n{options}\n".encode()
        text = fill.expand("docs/pick.rst", page).decode()
        return set(re.findall(r"^   \.\. py:\w+:: (?:[\w]+\.)*(\w+)", text, re.MULTILINE))

    documented = {"secret_key", "derive_key", "get_signature", "sign", "verify_signature", "unsign", "validate"}
    assert members("   :members:") == documented  # `default_digest_method` has no docstring
    assert members("   :members:\n   :undoc-members:") == documented | {"default_digest_method",
                                                                        "default_key_derivation"}
    assert members("   :members:\n   :exclude-members: sign, unsign") == documented - {"sign", "unsign"}
    assert members("   :members: sign, default_digest_method") == {"sign", "default_digest_method"}
    assert members("") == set()
    assert fill.shown["itsdangerous.signer.Signer.default_digest_method"] == "docs/pick.rst"  # its class's page


@pytest.mark.parametrize(("conf", "options", "want"), [
    (b"autodoc_default_options = {'members': True}", "", "documented"),
    (b"autodoc_default_options = {'members': None, 'undoc-members': True}", "", "all"),
    (b"autodoc_default_options = {'members': True, 'undoc-members': False}", "", "documented"),
    (b"autodoc_default_options = {'members': True}", "   :no-members:", "none"),
    (b"autodoc_default_options = {'members': True, 'exclude-members': 'sign'}", "", "documented less sign"),
    (b"autodoc_default_options = {'members': True, 'exclude-members': 'sign'}", "   :exclude-members: unsign",
     "documented less unsign"),
    (b"autodoc_default_flags = ['members', 'undoc-members']", "", "all"),
    (b"autodoc_default_options = {'members': True}\nautodoc_default_options = {}", "", "none"),  # the last wins
    (b"autodoc_default_options = dict(members=True)", "", "none"),  # computed: not read
    (b"autodoc_default_options = {'members': 1}", "", "none"),  # neither True, None nor a string
    (b"", "", "none"),
])
def test_conf_py_default_options_fill_a_bare_directive(expander, conf: bytes, options: str, want: str) -> None:
    fill, _ = expander
    fill.use_conf(SphinxConf(conf))
    page = f".. autoclass:: itsdangerous.signer.Signer\n{options}\n".encode()
    text = fill.expand("docs/pick.rst", page).decode()
    got = set(re.findall(r"^   \.\. py:\w+:: (?:[\w]+\.)*(\w+)", text, re.MULTILINE))
    documented = {"secret_key", "derive_key", "get_signature", "sign", "verify_signature", "unsign", "validate"}
    assert got == {"documented": documented, "all": documented | {"default_digest_method", "default_key_derivation"},
                   "none": set(), "documented less sign": documented - {"sign"},
                   "documented less unsign": documented - {"unsign"}}[want]


def test_a_page_that_shows_a_member_is_its_home_over_a_fill_that_passed_it_over(expander) -> None:
    fill, _ = expander
    fill.expand("docs/a.rst", b".. autoclass:: itsdangerous.signer.Signer\n   :members:\n")  # passes it over
    fill.expand("docs/b.rst", b".. autoattribute:: itsdangerous.signer.Signer.default_digest_method\n")
    assert fill.shown["itsdangerous.signer.Signer.default_digest_method"] == "docs/b.rst"


def test_a_docstrings_section_title_becomes_a_rubric() -> None:
    """A title cannot stand inside a directive's body: SQLAlchemy's module docstrings have
    them, and they sent the whole page to docutils' slow reader (and out of the text)."""
    from context_cli.parse import rst_fast
    from context_cli.parse.common import BlockBuilder
    from context_cli.parse.rst import _Inline, _prepare

    module = Symbol("pkg.ext", "module", doc="Extends it.\n\nSynopsis\n========\n\nUse it so.\n\n-----\nUsage\n-----\n\nSo.")
    page = Expander([module]).expand("docs/ext.rst", b"Ext\n===\n\n.. automodule:: pkg.ext\n").decode()
    assert ".. rubric:: Synopsis\n" in page and ".. rubric:: Usage\n" in page and "====" not in page.split("Ext\n===")[1]
    _prepare(page)
    rst_fast.render(page, BlockBuilder(), _Inline("docs/ext.rst", None))  # (raises Unsupported for a title inside)
    text = "\n".join(b.text for b in parse_file("docs/ext.rst", page.encode()).blocks)
    assert "Synopsis" in text and "Use it so." in text and "Usage" in text


def test_an_expanded_page_stops_growing_at_its_cap() -> None:
    from context_cli.apiref.autodoc import MAX_PAGE_BYTES

    big = "word " * (MAX_PAGE_BYTES * 3 // 50)  # 30 % of the cap: the fifth starts past it
    fill = Expander([Symbol(f"pkg.f{i}", "function", f"f{i}()", doc=big) for i in range(5)])
    page = "\n\n".join(f".. autofunction:: pkg.f{i}" for i in range(5)).encode()
    out = fill.expand("api.rst", page).decode()
    assert [f"py:function:: f{i}()" in out for i in range(5)] == [True, True, True, True, False]
    assert ".. autofunction:: pkg.f4" in out and ".. autofunction:: pkg.f3" not in out
