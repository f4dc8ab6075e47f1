"""A package built from a release carries its API: a `symbols` table and reference pages."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from apiref_fixtures import pypi  # noqa: F401 - a fixture
from click.testing import CliRunner

from context_cli.package.reader import open_package
from context_cli.store.store import Store
from context_cli.surfaces.cli import cli


def test_add_pypi_release_gains_its_api(pypi, context_home: Path) -> None:  # noqa: F811
    result = CliRunner().invoke(cli, ["add", "pypi:itsdangerous==2.2.0", "--no-embed"])
    assert result.exit_code == 0, result.output
    assert "API: 69 symbols in 7 modules" in result.output
    path = Store().resolve("itsdangerous@2.2.0").path
    with sqlite3.connect(path) as db:  # plain SQLite, as another tool would read it
        assert db.execute("SELECT value FROM meta WHERE key = 'symbol_count'").fetchone() == ("69",)
        assert db.execute("SELECT count(*) FROM symbols").fetchone() == (69,)
        kinds = dict(db.execute("SELECT doc_path, kind FROM pages"))
    # its docs (autodoc) show 40 of its 45 documented entries: they are its reference, no page of ours repeats them
    assert "reference" not in kinds.values() and kinds["docs/concepts.rst"] == "guide"
    assert kinds["docs/changes.rst"] == "changelog"
    with open_package(path) as pkg:
        assert pkg.has_symbols
        [(sign, cid)] = [r for r in pkg.symbols(["sign"]) if r[0].name == "itsdangerous.signer.Signer.sign"]
        assert sign.aliases == ("itsdangerous.Signer.sign",) and cid is not None
        [(_, chunk)] = pkg.chunks([cid])
        # docs/signer.rst's `autoclass :members:` shows it, so that section is its home
        assert chunk.doc_path == "docs/signer.rst" and "Signer.sign(value: str | bytes)" in chunk.content
        # no docstring: `:members:` passes it over, as Sphinx does, and its class's section is its home
        [cid] = [c for s, c in pkg.symbols(["default_digest_method"]) if s.name.startswith("itsdangerous.signer.S")]
        [(_, chunk)] = pkg.chunks([cid])
        assert chunk.doc_path == "docs/signer.rst" and "\n`Signer(secret_key: str" in chunk.content
        assert "`Signer.default_digest_method" not in chunk.content


def test_packages_without_symbols_still_read(tmp_path: Path) -> None:
    from context_cli.document import Chunk
    from context_cli.package.writer import write_package

    path = write_package(tmp_path / "p.db", {"name": "p", "version": "1"},
                         [Chunk("a.md", "A", "", "Some text about widgets.", 6, False)])
    with open_package(path) as pkg:
        assert not pkg.has_symbols and pkg.symbols() == [] and "symbol_count" not in pkg.meta


def test_readme_only_release_gains_its_whole_api(tmp_path: Path) -> None:
    from apiref_fixtures import unpack_sdist

    from context_cli.build import BuildOptions, build
    from context_cli.sources.base import Fetched

    root = unpack_sdist("itsdangerous-2.2.0", tmp_path)
    fetched = Fetched(source_type="pypi", source_url="pypi:itsdangerous==2.2.0", folder=root,
                      docs_path="README.md", code=root, name="itsdangerous", version="2.2.0", registry="pip")
    result = build(fetched, tmp_path / "out.db", BuildOptions(embed=False))
    assert result.symbols == 69 and result.pages == 7  # the README and 6 modules (__init__ defines nothing)
    off = build(fetched, tmp_path / "off.db", BuildOptions(embed=False, api=False))
    assert off.symbols == 0 and off.pages == 1
    with open_package(off.path) as pkg:
        assert not pkg.has_symbols


def test_docs_from_elsewhere_still_carry_the_releases_api(pypi, tmp_path: Path) -> None:  # noqa: F811
    """The ladder found the docs on a site (no code there): the release's own sdist gives the
    API, and the summary says where it came from; a plain site build fetches nothing."""
    from context_cli.build import BuildOptions, build
    from context_cli.document import Block, Document
    from context_cli.sources.base import Fetched

    def site(meta: dict[str, str]) -> Fetched:
        page = Document(path="index.html", title="itsdangerous", blocks=[
            Block(1, "itsdangerous", "Sign data with a secret key, then verify it came back unchanged.")])
        return Fetched(source_type="web", source_url="https://itsdangerous.example/", documents=[page],
                       name="itsdangerous", version="2.2.0", registry="pip", meta=meta)

    result = build(site({"docs_source": "site"}), tmp_path / "a.db", BuildOptions(embed=False, registry="pip"))
    assert result.symbols == 69 and "API: 69 symbols in 7 modules from pypi:itsdangerous==2.2.0" in result.notes
    plain = build(site({}), tmp_path / "b.db", BuildOptions(embed=False, registry="pip"))
    assert plain.symbols == 0 and not any(n.startswith("API") for n in plain.notes)


def test_a_page_worker_reads_the_api_while_the_others_parse(tmp_path: Path) -> None:
    """A tree big enough for the page workers: one of them reads the API, and the page with
    an autodoc directive waits for it and comes out filled."""
    from apiref_fixtures import write_tree

    from context_cli.build import BuildOptions, build
    from context_cli.build_pages import PARALLEL_MIN_FILES
    from context_cli.sources.base import Fetched

    pages = {f"docs/topic{i}.md": f"# Topic {i}\n\nThe greeting library, part {i}, says hello in many ways.\n"
             for i in range(PARALLEL_MIN_FILES)}
    root = write_tree(tmp_path / "hello", {
        **pages, "pyproject.toml": '[project]\nname = "hello"\nversion = "1.0"\n',
        "hello/__init__.py": 'def greet(name: str) -> str:\n    """Say hello to `name`."""\n',
        "docs/api.rst": "API\n===\n\n.. autofunction:: hello.greet\n"})
    fetched = Fetched(source_type="folder", source_url="hello", folder=root, name="hello", version="1.0")
    result = build(fetched, tmp_path / "out.db", BuildOptions(embed=False))
    assert result.symbols == 2 and "API: 2 symbols in 1 module" in result.notes
    with open_package(result.path) as pkg:
        [(greet, cid)] = [r for r in pkg.symbols(["greet"])]
        [(_, chunk)] = pkg.chunks([cid])
    assert greet.signature == "greet(name: str) -> str"
    assert chunk.doc_path == "docs/api.rst" and "Say hello to" in chunk.content


def test_long_docstrings_are_stored_deflated_and_read_back(tmp_path: Path) -> None:
    from context_cli.document import Chunk
    from context_cli.package.writer import write_package
    from context_cli.symbol import Symbol

    long_doc = "Sign the value with the key. " * 40 + "Ω."
    rows = [(Symbol("p.sign", "function", "sign(v)", long_doc), 1), (Symbol("p.x", "attribute", "x", "Short."), 1)]
    path = write_package(tmp_path / "p.db", {"name": "p", "version": "1"},
                         [Chunk("a.md", "A", "", "Some text about signing.", 6, False)], symbols=rows)
    with sqlite3.connect(path) as db:
        stored = dict(db.execute("SELECT name, length(doc) + coalesce(length(doc_zlib), 0) FROM symbols"))
    assert stored["p.sign"] < len(long_doc) // 4 and stored["p.x"] == len("Short.")
    with open_package(path) as pkg:
        assert [s.doc for s, _ in pkg.symbols()] == [long_doc, "Short."]


def test_packages_from_before_deflated_docstrings_still_read(tmp_path: Path) -> None:
    from context_cli.document import Chunk
    from context_cli.package.writer import write_package

    path = write_package(tmp_path / "p.db", {"name": "p", "version": "1"},
                         [Chunk("a.md", "A", "", "Some text about signing.", 6, False)], symbols=[])
    with sqlite3.connect(path) as db:  # the table as packages had it before `doc_zlib`
        db.execute("DROP TABLE symbols")
        db.executescript("CREATE TABLE symbols (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tail TEXT NOT NULL,"
                         " kind TEXT NOT NULL, signature TEXT NOT NULL DEFAULT '', doc TEXT NOT NULL DEFAULT '',"
                         " deprecated TEXT, since TEXT, source TEXT NOT NULL DEFAULT '', line INTEGER NOT NULL"
                         " DEFAULT 0, aliases TEXT NOT NULL DEFAULT '', chunk_id INTEGER);")
        db.execute("INSERT INTO symbols(name, tail, kind, doc) VALUES ('p.sign', 'sign', 'function', ?)",
                   ("A docstring stored as text. " * 20,))
    with open_package(path) as pkg:
        assert pkg.has_symbols and [s.doc for s, _ in pkg.symbols()] == ["A docstring stored as text. " * 20]


def test_each_source_path_is_stored_once_and_tails_come_from_names(tmp_path: Path) -> None:
    """`symbol_files` holds each path once (Django's 8,195 rows name 636 files); the index on
    the name's last part finds entries as the `tail` column did, whatever the name's case."""
    from context_cli.apiref.lookup import find_api
    from context_cli.document import Chunk
    from context_cli.package.identifiers import identifier_chunks
    from context_cli.package.writer import write_package
    from context_cli.symbol import Symbol

    rows = [(Symbol("p", "module", source="p/__init__.py"), None),
            (Symbol("p.signer.Signer", "class", "class Signer", source="p/signer.py", line=3), 1),
            (Symbol("p.signer.Signer.sign", "method", "Signer.sign(value)", source="p/signer.py", line=9,
                    aliases=("p.Signer.sign",)), 1),
            (Symbol("p.x.fÄrger", "function", "fÄrger()", source="p/ärger.py"), 1),
            (Symbol("top_level", "function", "top_level()", source=""), None)]
    path = write_package(tmp_path / "p.db", {"name": "p", "version": "1"},
                         [Chunk("p/signer.py", "p.signer", "Signer", "class Signer", 3, True)], symbols=rows)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT path FROM symbol_files ORDER BY id").fetchall() == [
            ("p/__init__.py",), ("p/signer.py",), ("p/ärger.py",), ("",)]
        plan = " ".join(str(r) for r in db.execute("EXPLAIN QUERY PLAN SELECT name FROM symbols WHERE "
                                                    "lower(substr(name, length(rtrim(name, replace(name, '.', '')))"
                                                    " + 1)) IN ('sign', 'x')"))
        assert "USING INDEX symbols_tail" in plan
    with open_package(path) as pkg:
        assert pkg.has_symbol_files
        assert [(s.name, s.source, s.line) for s, _ in pkg.symbols(["sign"])] == [
            ("p.signer.Signer.sign", "p/signer.py", 9)]
        assert [s.name for s, _ in pkg.symbols(["top_level"])] == ["top_level"]
        assert [(s.source, cid) for s, cid in pkg.symbols()] == [(r.source, c) for r, c in rows]
        assert identifier_chunks("Signer.sign", pkg) == [1] and identifier_chunks("fÄrger()", pkg) == [1]
    found = find_api("p.Signer.sign", [Store(tmp_path / "store").install(path)])
    assert [(f.symbol.name, f.symbol.source) for f in found.symbols] == [("p.signer.Signer.sign", "p/signer.py")]


def test_packages_from_before_symbol_files_still_read(tmp_path: Path) -> None:
    """Packages built before `symbol_files` hold `tail` and `source` on every row, with the
    index on `tail` (lower case as Python makes it)."""
    from context_cli.document import Chunk
    from context_cli.package.identifiers import identifier_chunks
    from context_cli.package.writer import write_package

    path = write_package(tmp_path / "p.db", {"name": "p", "version": "1"},
                         [Chunk("a.md", "A", "", "Some text about signing.", 6, False)], symbols=[])
    with sqlite3.connect(path) as db:
        db.executescript("DROP TABLE symbols; DROP TABLE symbol_files;"
                         "CREATE TABLE symbols (id INTEGER PRIMARY KEY, name TEXT NOT NULL, tail TEXT NOT NULL,"
                         " kind TEXT NOT NULL, signature TEXT NOT NULL DEFAULT '', doc TEXT NOT NULL DEFAULT '',"
                         " deprecated TEXT, since TEXT, source TEXT NOT NULL DEFAULT '', line INTEGER NOT NULL"
                         " DEFAULT 0, aliases TEXT NOT NULL DEFAULT '', chunk_id INTEGER, doc_zlib BLOB);"
                         "CREATE INDEX symbols_tail ON symbols(tail);")
        db.executemany("INSERT INTO symbols(name, tail, kind, source, line, chunk_id) VALUES (?, ?, ?, ?, ?, 1)",
                       [("p.signer.Signer.sign", "sign", "method", "p/signer.py", 9),
                        ("p.x.fÄrger", "färger", "function", "p/ärger.py", 2)])
    with open_package(path) as pkg:
        assert pkg.has_symbols and not pkg.has_symbol_files
        assert [(s.name, s.source, s.line) for s, _ in pkg.symbols(["sign"])] == [
            ("p.signer.Signer.sign", "p/signer.py", 9)]
        assert identifier_chunks("Signer.sign", pkg) == [1] and identifier_chunks("fÄrger()", pkg) == [1]


def test_a_short_module_docstring_opens_its_first_entry_a_long_one_has_its_own_section() -> None:
    """A section per one-line module docstring (143 of Django's 827 reference sections) costs
    more in the index than its text; a long one is a guide of its own."""
    from context_cli.apiref.model import ApiReference
    from context_cli.apiref.pages import api_documents, section_ids
    from context_cli.chunk.chunker import chunk_document
    from context_cli.symbol import Symbol

    def page(module_doc: str) -> list[tuple[int, str, str]]:
        ref = ApiReference("pip", "pkg", "1", symbols=[
            Symbol("pkg.mail", "module", doc=module_doc, source="pkg/mail.py"),
            Symbol("pkg.mail.send", "function", "send(to)", "Send a message.", source="pkg/mail.py")])
        (doc,) = api_documents(ref)
        chunks = list(enumerate(chunk_document(doc), start=1))
        homes = section_ids(ref.symbols, chunks, {doc.path: doc.title})
        # the module's home is the page's first section, the entry's its own: `context api` finds both
        assert homes == [1, next(cid for cid, c in chunks if c.section_title == "send")]
        return [(b.level, b.title, b.text) for b in doc.blocks]

    assert page("Dummy mail backend.") == [(2, "send", "Dummy mail backend.\n\n```python\nsend(to)\n```\n\nSend a message.")]
    long = "How mail is sent. " * 80
    assert page(long) == [(0, "", long), (2, "send", "```python\nsend(to)\n```\n\nSend a message.")]


def test_the_trees_conf_py_defaults_fill_its_bare_directives(tmp_path: Path) -> None:
    """`autodoc_default_options` in the docs' conf.py (read, never run) applies to every page."""
    from apiref_fixtures import write_tree

    from context_cli.build import BuildOptions, build
    from context_cli.sources.base import Fetched

    code = ('class Greeter:\n    """Greets people."""\n\n    def wave(self) -> None:\n        """Wave a hand."""\n'
            '\n    def bow(self) -> None:\n        """Bow politely."""\n')
    tree = {"pyproject.toml": '[project]\nname = "hello"\nversion = "1.0"\n', "hello/__init__.py": code,
            "docs/api.rst": "API\n===\n\n.. autoclass:: hello.Greeter\n"}
    texts = []
    for conf in ("", "autodoc_default_options = {'members': True, 'exclude-members': 'bow'}\n"):
        root = write_tree(tmp_path / f"hello{len(texts)}", {**tree, "docs/conf.py": conf})
        fetched = Fetched(source_type="folder", source_url="hello", folder=root, name="hello", version="1.0")
        with open_package(build(fetched, tmp_path / f"out{len(texts)}.db", BuildOptions(embed=False)).path) as pkg:
            texts.append("\n".join(c.content for _, c in pkg.page_chunks(["docs/api.rst"])))
    assert "Greets people." in texts[0] and "Wave a hand." not in texts[0]
    assert "Wave a hand." in texts[1] and "Bow politely." not in texts[1]
