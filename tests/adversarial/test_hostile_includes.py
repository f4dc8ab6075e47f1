"""`context add FOLDER` on docs trees whose pages include what they must not, or too much.

Includes (`.. include::`, `literalinclude`, `--8<--`, `{! !}`, `{* *}`, MyST fences) are read
from inside the added folder only. A hostile tree must still build, within time and memory
bounds, from its honest pages; what lies outside the folder (reached by `..`, an absolute path
or a symlink) never enters the package, a FIFO never blocks the build, cycles and bombs stop at
the per-page budget. Real CLI in a child process.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from .runner import StoreSnapshot, assert_good_package_searchable, assert_ok, run

SECRET = "ADVERSARIAL-SECRET-OUTSIDE-THE-TREE"
HONEST = "# Honest page\n\nThis page documents the frobnicate function in plain words.\n"


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def symlink_out(root: Path, secret: Path) -> None:
    os.symlink(secret, root / "docs" / "notes.txt")
    _write(root, {"docs/a.rst": "A\n=\n\n.. include:: notes.txt\n\n.. literalinclude:: notes.txt\n",
                  "docs/b.md": '# B\n\n--8<-- "notes.txt"\n\n{!notes.txt!}\n\n{* notes.txt *}\n'})


def symlinked_folder_out(root: Path, secret: Path) -> None:
    os.symlink(secret.parent, root / "docs" / "outside")
    _write(root, {"docs/a.md": f'# A\n\n--8<-- "outside/{secret.name}"\n'})


def traversal(root: Path, secret: Path) -> None:
    up = "../" * 12
    _write(root, {"docs/a.rst": f"A\n=\n\n.. include:: ../../{secret.name}\n\n.. literalinclude:: {up}{secret}\n",
                  "docs/b.md": f'# B\n\n--8<-- "../../{secret.name}"\n\n{{!{up}{secret}!}}\n'})


def absolute(root: Path, secret: Path) -> None:
    _write(root, {"docs/a.rst": f"A\n=\n\n.. include:: {secret}\n\n.. literalinclude:: {secret}\n",
                  "docs/b.md": f'# B\n\n--8<-- "{secret}"\n\n```{{include}} {secret}\n```\n'})


def fifo(root: Path, secret: Path) -> None:
    os.mkfifo(root / "docs" / "pipe.md")  # opening it for reading would block forever
    os.symlink("/dev/zero", root / "docs" / "zero.md")
    (root / "docs" / "conf.py").write_text("extensions = ['sphinx_gallery.gen_gallery']\n")
    _write(root, {"examples/README.txt": "Examples\n========\n"})
    os.mkfifo(root / "examples" / "plot_pipe.py")  # a gallery script that is a FIFO
    _write(root, {"docs/a.md": '# A\n\n--8<-- "pipe.md"\n\n--8<-- "zero.md"\n',
                  "docs/b.rst": "B\n=\n\n.. include:: pipe.md\n\n.. literalinclude:: zero.md\n"})


def cycle(root: Path, secret: Path) -> None:
    _write(root, {"docs/a.md": '# A\n\n--8<-- "b.inc"\n', "docs/b.inc": 'Bee.\n\n--8<-- "a.md"\n\n--8<-- "b.inc"\n',
                  "docs/c.rst": "C\n=\n\n.. include:: c.rst\n\n.. include:: d.inc\n", "docs/d.inc": ".. include:: c.rst\n"})


def bomb(root: Path, secret: Path) -> None:
    _write(root, {"docs/big.inc": ("lorem ipsum dolor sit amet " * 40 + "\n") * 1900})  # about 2 MiB
    _write(root, {"docs/a.md": "# A\n\n" + '--8<-- "big.inc"\n\n' * 2000,
                  "docs/b.rst": "B\n=\n\n" + ".. include:: big.inc\n   :literal:\n\n" * 2000})


def deep(root: Path, secret: Path) -> None:
    _write(root, {f"docs/n{i}.inc": f'Level {i}.\n\n--8<-- "n{i + 1}.inc"\n' for i in range(200)})
    _write(root, {"docs/a.md": '# A\n\n--8<-- "n0.inc"\n'})


def huge_sparse(root: Path, secret: Path) -> None:
    with (root / "docs" / "huge.inc").open("wb") as f:
        f.truncate(4 << 30)  # 4 GiB of holes: reading it whole would exhaust memory
    _write(root, {"docs/a.md": '# A\n\n--8<-- "huge.inc"\n', "docs/b.rst": "B\n=\n\n.. literalinclude:: huge.inc\n"})


TREES: dict[str, Callable[[Path, Path], None]] = {
    "symlink_out": symlink_out, "symlinked_folder_out": symlinked_folder_out, "traversal": traversal,
    "absolute": absolute, "fifo": fifo, "cycle": cycle, "bomb": bomb, "deep": deep, "huge_sparse": huge_sparse,
}


def _contents(home: Path, name: str) -> str:
    db = next(p for p in (home / "packages").glob("*.db") if f"__{name}__" in p.name)
    con = sqlite3.connect(db)
    try:
        return "\n".join(row[0] for row in con.execute("SELECT content FROM chunks"))
    finally:
        con.close()


@pytest.mark.parametrize("trick", list(TREES))
def test_hostile_includes_stay_inside_and_bounded(trick: str, home: Path, snapshot: StoreSnapshot,
                                                  tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    root = tmp_path / "evil"
    (root / "docs").mkdir(parents=True)
    _write(root, {"docs/index.md": HONEST})
    TREES[trick](root, secret)
    o = run(["add", str(root), "--name", "evil", "--pkg-version", "1.0.0", "--no-embed"], home, timeout=60)
    assert_ok(o, rss_mb=400)
    text = _contents(home, "evil")
    assert "frobnicate function" in text
    assert SECRET not in text
    assert len(text) < 40 << 20
    assert_good_package_searchable(home)
