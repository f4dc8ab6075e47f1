"""Hostile Python sources for API extraction: each bad file is skipped with a note, in bounded
time, and the good ones around it still give their entries. Nothing is imported or run."""

from __future__ import annotations

import time
from pathlib import Path

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
