"""Hostile Python sources for API extraction: each bad file is skipped with a note, in bounded
time, and the good ones around it still give their entries. Nothing is imported or run."""

from __future__ import annotations

import time
import zlib
from pathlib import Path

import pytest

from context_cli.apiref.python import extract_api


def test_hostile_modules_are_skipped_with_notes(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .good import ok\nfrom .loop_a import spin\n", "utf-8")
    (pkg / "good.py").write_text("def ok(x: int) -> int:\n    '''Fine.'''\n", "utf-8")
    (pkg / "py2.py").write_text("print 'hello'\nexec 'x = 1'\n", "utf-8")
    (pkg / "deep.py").write_text("x = " + "(" * 5000 + "1" + ")" * 5000 + "\n", "utf-8")
    (pkg / "deep_default.py").write_text("def f(a=" + "-" * 20000 + "1): pass\n", "utf-8")
    with open(pkg / "generated.py", "wb") as f:  # 50 MB, sparse: refused by its size, never read
        f.truncate(50 * 1024 * 1024)
    (pkg / "loop_a.py").write_text("from .loop_b import spin\n__all__ = ['spin']\n", "utf-8")
    (pkg / "loop_b.py").write_text("from .loop_a import spin\n__all__ = ['spin']\n", "utf-8")
    (pkg / "runs.py").write_text("import os\nos.system('touch RAN')\nraise SystemExit(3)\n", "utf-8")
    start = time.monotonic()
    ref = extract_api(tmp_path, registry="pip", name="pkg", version="1")
    assert time.monotonic() - start < 10
    names = {s.name for s in ref.symbols}
    assert "pkg.good.ok" in names and "pkg.runs" in names
    notes = "\n".join(ref.notes)
    assert "pkg/py2.py" in notes and "pkg/deep.py" in notes and "pkg/generated.py (52 MB" in notes
    assert "cycle" in notes and "spin" in notes
    assert not (tmp_path / "RAN").exists() and not Path("RAN").exists()


def test_time_bound_stops_the_walk(tmp_path: Path) -> None:
    pkg = tmp_path / "big"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", "utf-8")
    for i in range(50):
        (pkg / f"m{i}.py").write_text("def f(): pass\n" * 200, "utf-8")
    ref = extract_api(tmp_path, registry="pip", name="big", version="1", max_seconds=0.0)
    assert any("stopped after" in n for n in ref.notes)


def test_hostile_declaration_files(tmp_path: Path) -> None:
    import json

    from context_cli.apiref.typescript import extract_declarations

    pkg = tmp_path / "package"
    pkg.mkdir()
    exports: object = "./index.d.ts"
    for _ in range(500):  # conditions nested far deeper than any package needs
        exports = {"types": exports}
    (pkg / "package.json").write_text(json.dumps({"name": "evil", "exports": {".": exports, "./big": "./big.d.ts"},
                                                  "types": "./index.d.ts"}), "utf-8")
    (pkg / "index.d.ts").write_text('export * from "./a";\nexport declare function ok(): void;\n'
                                    "export type Deep = " + "Array<" * 3000 + "string" + ">" * 3000 + ";\n", "utf-8")
    (pkg / "a.d.ts").write_text('export * from "./b";\nexport * from "../../../etc/passwd";\n', "utf-8")
    (pkg / "b.d.ts").write_text('export * from "./a";\nexport declare const b: number;\n', "utf-8")
    with open(pkg / "big.d.ts", "wb") as f:  # 40 MB, sparse: refused by its size
        f.truncate(40 * 1024 * 1024)
    start = time.monotonic()
    ref = extract_declarations(pkg, registry="npm", name="evil", version="1")
    assert time.monotonic() - start < 20
    names = {s.name for s in ref.symbols}
    assert {"evil.ok", "evil.b"} <= names
    assert any("skipped big.d.ts (41 MB" in n for n in ref.notes)


def test_hostile_trees_give_no_code_from_outside(tmp_path: Path) -> None:
    """A folder or repository is read for its API only inside itself: links out, manifests
    pointing out, oversized manifests and deep or wide declaration trees are passed over."""
    import json

    from context_cli.apiref.tree import code_in
    from context_cli.apiref.typescript import MAX_SUBPATHS, entry_points

    outside = tmp_path / "outside"
    (outside / "secret").mkdir(parents=True)
    (outside / "secret" / "__init__.py").write_text('"""TOKEN-FROM-OUTSIDE"""\ndef leak(): pass\n', "utf-8")
    (outside / "index.d.ts").write_text("export declare const leaked: 1;\n", "utf-8")

    linked = tmp_path / "linked"
    (linked / "src" / "real").mkdir(parents=True)
    (linked / "pyproject.toml").write_text("", "utf-8")
    (linked / "src" / "evil").symlink_to(outside / "secret")
    (linked / "src" / "real" / "__init__.py").symlink_to(outside / "secret" / "__init__.py")
    assert code_in(linked) is None  # a linked package, a package whose __init__ is a link: neither is code here
    ref = extract_api(linked, registry="pip", name="linked", version="1")
    assert "TOKEN-FROM-OUTSIDE" not in repr(ref.symbols)

    for types in ("../outside/index.d.ts", str(outside / "index.d.ts"), "/etc/passwd"):
        pointing = tmp_path / f"points-{abs(hash(types))}"
        pointing.mkdir()
        (pointing / "package.json").write_text(json.dumps({"name": "p", "types": types}), "utf-8")
        assert code_in(pointing) is None, types
    huge = tmp_path / "huge"
    huge.mkdir()
    (huge / "index.d.ts").write_text("export declare const x: 1;\n", "utf-8")
    (huge / "package.json").write_text(json.dumps({"name": "h", "types": "index.d.ts", "pad": "x" * 2_000_000}))
    assert code_in(huge) is None  # over 1 MB: no manifest

    wide = tmp_path / "wide"
    (wide / "deep" / "a" / "b" / "c").mkdir(parents=True)
    (wide / "package.json").write_text(json.dumps({"name": "w", "types": "index.d.ts"}), "utf-8")
    (wide / "index.d.ts").write_text("export declare const w: 1;\n", "utf-8")
    for i in range(MAX_SUBPATHS + 50):
        (wide / f"m{i}.d.ts").write_text("export {}\n", "utf-8")
        (wide / f"m{i}.js").write_text("", "utf-8")
    (wide / "deep" / "a" / "b" / "c" / "x.d.ts").write_text("export {}\n", "utf-8")
    (wide / "deep" / "a" / "b" / "c" / "x.js").write_text("", "utf-8")
    (wide / "loop").symlink_to(wide)  # a link back to itself is never walked
    (wide / "out").symlink_to(outside)
    start = time.monotonic()
    found = entry_points(wide, "w")
    assert time.monotonic() - start < 5
    assert len(found) == MAX_SUBPATHS + 1 and not any(k.startswith(("w/deep", "w/loop", "w/out")) for k in found)


def test_hostile_identifier_queries_and_symbol_rows(tmp_path: Path) -> None:
    """identifier_chunks on any query text and on a package whose symbols table holds odd
    values: wrong types are passed over, a name shared by thousands of rows is bounded."""
    import sqlite3

    from context_cli.document import Chunk
    from context_cli.package.identifiers import MAX_IDENTIFIER_CHUNKS, identifier_chunks
    from context_cli.package.reader import open_package
    from context_cli.package.writer import write_package
    from context_cli.symbol import Symbol

    chunk = Chunk("a.py", "a", "get", "The get method of every class here.", 9, False)
    rows = [(Symbol(f"pkg.C{i}.get", "method", f"C{i}.get()"), 1) for i in range(5000)]
    path = write_package(tmp_path / "p.db", {"name": "p", "version": "1"}, [chunk], symbols=rows)
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO symbols(name, kind, chunk_id, aliases) VALUES ('pkg.x.odd_name', 'x', 'one', X'00')")
        db.execute("INSERT INTO symbols(name, kind, chunk_id) VALUES ('pkg.odd_name', 'x', 1)")
    with open_package(path) as pkg:
        start = time.monotonic()
        assert identifier_chunks("C1.get", pkg) == [1]
        assert identifier_chunks("pkg.odd_name", pkg) == [1]  # the row of wrong types is passed over
        for query in ("x." * 150, "`" * 500, "a\x00b_c", "_" * 300, "::", "()", "a.b.c.d.e.f.g.h.i.j.get",
                      "Ω_ω", "\u202egnp_exe", "SELECT * FROM symbols", "'; DROP TABLE symbols; --_x"):
            assert len(identifier_chunks(query, pkg)) <= MAX_IDENTIFIER_CHUNKS
        assert time.monotonic() - start < 5


@pytest.mark.parametrize("blob", [b"not deflated", zlib.compress(b"\xff\xfe not UTF-8"),
                                  zlib.compress(b"A" * 4_000_000), zlib.compress(b"cut short")[:-4], "text, not a blob"])
def test_damaged_deflated_docstrings_are_one_clear_error(tmp_path: Path, blob: bytes | str) -> None:
    """A `doc_zlib` that is not a deflated UTF-8 docstring (garbage, a bomb of 4 MB, cut
    short, text): `context api` gets one InvalidPackage line, within bounded memory."""
    import sqlite3

    from context_cli.document import Chunk
    from context_cli.errors import InvalidPackage
    from context_cli.package.reader import open_package
    from context_cli.package.writer import write_package
    from context_cli.symbol import Symbol

    path = write_package(tmp_path / "p.db", {"name": "p", "version": "1"},
                         [Chunk("a.md", "A", "", "Text.", 2, False)], symbols=[(Symbol("p.f", "function", "f()"), 1)])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE symbols SET doc_zlib = ?", (blob,))
    with open_package(path) as pkg, pytest.raises(InvalidPackage, match="p@1: a symbol's docstring is damaged"):
        pkg.symbols()


def test_many_small_docstring_bombs_stay_within_one_budget(tmp_path: Path) -> None:
    """Each row inflates a thousandfold but within its own limit; together they would be a
    gigabyte. The package's docstrings share one budget: one clear error, bounded memory,
    and `context api` over it and a sound package still answers from the sound one."""
    import sqlite3
    import tracemalloc

    from context_cli.apiref.lookup import find_api
    from context_cli.document import Chunk
    from context_cli.errors import InvalidPackage
    from context_cli.package.reader import open_package
    from context_cli.package.writer import write_package
    from context_cli.store.store import Store
    from context_cli.symbol import Symbol

    bomb = zlib.compress(b"A" * (256 * 1024 - 1), 9)
    store = Store(tmp_path / "packages")
    for name in ("bad", "good"):
        path = write_package(tmp_path / f"{name}.db", {"name": name, "version": "1"},
                             [Chunk("a.md", "A", "", "Text.", 2, False)],
                             symbols=[(Symbol(f"{name}.send_file", "function", "send_file()"), 1)])
        if name == "bad":
            with sqlite3.connect(path) as db:
                db.executemany("INSERT INTO symbols(name, kind, chunk_id, doc, doc_zlib) VALUES (?, ?, 1, '', ?)",
                               [(f"bad.f{i}", "function", bomb) for i in range(4000)])
        store.install(path)
    installed = sorted(store.installed(), key=lambda i: i.id.name)
    tracemalloc.start()
    with open_package(installed[0].path) as pkg, pytest.raises(InvalidPackage, match="bad@1: a symbol's docstring"):
        pkg.symbols()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 200 << 20
    found = find_api("sendfile", installed)  # no exact entry: every package's names are read for suggestions
    assert found.suggestions == ["good.send_file"] and any("bad@1" in n for n in found.notes)


def test_a_release_index_that_answers_garbage_leaves_the_docs_built(tmp_path: Path, monkeypatch) -> None:
    """Docs the ladder found on a site take their API from the release: an index answering
    garbage, a tarball that is not one, or nothing at all gives one note, and the docs build."""
    from route_server import Routes, serving

    from context_cli.build import BuildOptions, build
    from context_cli.document import Block, Document
    from context_cli.sources.base import Fetched

    def site() -> Fetched:
        page = Document(path="index.html", title="lib", blocks=[Block(1, "lib", "The lib library does many things.")])
        return Fetched(source_type="web", source_url="https://lib.example/", documents=[page], name="lib",
                       version="1.0.0", registry="npm", meta={"docs_source": "site"})

    with serving(Routes()) as srv:
        srv.add("/lib", b"\x00\xffnot json" * 1000)
        monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", srv.url)
        result = build(site(), tmp_path / "a.db", BuildOptions(embed=False, registry="npm"))
        srv.add("/lib", {"name": "lib", "versions": {"1.0.0": {"dist": {"tarball": srv.url + "/t.tgz"}}}})
        srv.add("/t.tgz", b"this is not a tarball")
        second = build(site(), tmp_path / "b.db", BuildOptions(embed=False, registry="npm"))
    from context_cli.package.reader import open_package

    for built in (result, second):
        notes = [n for n in built.notes if n.startswith("API")]
        assert built.symbols == 0 and len(notes) == 1 and "the release could not be fetched" in notes[0], notes
        with open_package(built.path) as pkg:  # no table: an empty one would claim an empty API
            assert built.pages == 1 and not pkg.has_symbols


@pytest.mark.parametrize("damage", ["DROP TABLE symbol_files",
                                    "ALTER TABLE symbol_files RENAME COLUMN path TO p",
                                    "DROP TABLE symbol_files; CREATE TABLE symbol_files (id, path, name, file);"
                                    "INSERT INTO symbol_files VALUES (1, X'00', 'n', 2), (1, 'dup', 'n', 2)",
                                    "DELETE FROM symbol_files"])
def test_a_damaged_symbol_files_table_hides_or_blanks_paths_only(tmp_path: Path, damage: str) -> None:
    """`symbol_files` missing or without its columns: the package has no API reference (one
    clear line from `context api`); rows naming no file, or a table of odd values and
    columns that shadow the symbols' own: the entries still read, with a path or none."""
    import sqlite3

    from context_cli.apiref.lookup import find_api
    from context_cli.document import Chunk
    from context_cli.errors import ContextError
    from context_cli.package.writer import write_package
    from context_cli.store.store import Store
    from context_cli.symbol import Symbol

    path = write_package(tmp_path / "p.db", {"name": "p", "version": "1"}, [Chunk("a.md", "A", "", "Text.", 2, False)],
                         symbols=[(Symbol("p.signer.sign", "function", "sign()", source="p/signer.py"), 1)])
    with sqlite3.connect(path) as db:
        db.executescript(damage)
    inst = Store(tmp_path / "store").install(path)
    if damage.startswith(("DROP TABLE symbol_files", "ALTER")) and "CREATE" not in damage:
        with pytest.raises(ContextError, match="no API reference"):
            find_api("sign", [inst])
    else:
        [found] = find_api("p.signer.sign", [inst]).symbols
        assert found.symbol.name == "p.signer.sign" and found.symbol.source in ("", "\x00", "dup")


def test_a_symbol_files_table_without_its_key_stays_bounded(tmp_path: Path) -> None:
    """`symbol_files` rebuilt without its INTEGER PRIMARY KEY and 100,000 rows: reading every
    entry (the suggestions of `context api`) looks a path up per row, and stays fast."""
    import sqlite3

    from context_cli.apiref.lookup import find_api
    from context_cli.document import Chunk
    from context_cli.package.writer import write_package
    from context_cli.store.store import Store
    from context_cli.symbol import Symbol

    rows = [(Symbol(f"p.m{i % 50}.f{i}", "function", f"f{i}()", source=f"p/m{i % 50}.py"), 1) for i in range(3000)]
    path = write_package(tmp_path / "p.db", {"name": "p", "version": "1"}, [Chunk("a.md", "A", "", "Text.", 2, False)],
                         symbols=rows)
    with sqlite3.connect(path) as db:
        db.executescript("DROP TABLE symbol_files; CREATE TABLE symbol_files (id TEXT, path TEXT);")
        db.executemany("INSERT INTO symbol_files VALUES (?, ?)", ((str(i), f"p/m{i}.py") for i in range(100_000)))
    inst = Store(tmp_path / "store").install(path)
    start = time.monotonic()
    found = find_api("f2999x", [inst])
    assert found.suggestions and not found.notes
    [hit] = find_api("p.m49.f2999", [inst]).symbols
    assert hit.symbol.source == "p/m50.py"  # its file id, 50, matched as SQLite compares text with an integer
    assert time.monotonic() - start < 5
