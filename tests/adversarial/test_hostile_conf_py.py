"""Hostile conf.py files where the builder looks for zzzeeksphinx module prefixes
(parse/module_prefixes.py): conf.py is read with `ast`, never run, and anything but a literal
dict of names, in a file of at most 1 MiB, means no prefixes; the tree still builds, quickly."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from context_cli.build import BuildOptions, build
from context_cli.package.reader import open_package
from context_cli.parse.module_prefixes import ModulePrefixes
from context_cli.parse.sphinx_conf import MAX_CONF, SphinxConf
from context_cli.sources.base import Fetched

SETTING = "zzzeeksphinx_module_prefixes = "
GOOD = SETTING + '{"_orm": "sqlalchemy.orm"}\n'

HOSTILE = {
    "past 1 MiB": GOOD + "#" * MAX_CONF + "\n",
    "parentheses 100,000 deep": SETTING + "(" * 100_000 + "{}" + ")" * 100_000 + "\n",
    "a 300,000-deep unary chain": SETTING + "-" * 300_000 + "1\n",
    "a 100,000-term sum": SETTING + "+".join(["1"] * 100_000) + "\n",
    "dicts 150 deep": SETTING + '{"_a": ' * 150 + '"x"' + "}" * 150 + "\n",
    "a call": SETTING + 'dict(_orm="sqlalchemy.orm")\n',
    "a name": 'p = {"_orm": "sqlalchemy.orm"}\n' + SETTING + "p\n",
    "a comprehension": SETTING + '{k: "m" for k in ["_orm"]}\n',
    "an f-string": SETTING + '{"_orm": f"sqlalchemy.{1}"}\n',
    "a list": SETTING + '[("_orm", "sqlalchemy.orm")]\n',
    "keys and values not names": SETTING + '{"_o rm": "sqlalchemy.orm", 1: "x", "_x": 2, "_y": "a b", "_z": "' + "m" * 300 + '"}\n',
    "a syntax error": GOOD + "def (:\n",
    "NUL bytes": GOOD.replace("=", "\x00="),
    "not UTF-8": "# -*- coding: utf-8 -*-\n" + GOOD + "s = '\udcff'\n",
    "an unknown encoding": "# -*- coding: nonesuch -*-\n" + GOOD,
}


@pytest.mark.parametrize("text", HOSTILE.values(), ids=list(HOSTILE))
def test_hostile_conf_py_means_no_prefixes(tmp_path: Path, text: str) -> None:
    conf = tmp_path / "conf.py"
    conf.write_bytes(text.encode("utf-8", "surrogateescape"))
    start = time.perf_counter()
    assert ModulePrefixes.of(SphinxConf.of_file(conf)).prefixes == {}
    assert time.perf_counter() - start < 20


def test_a_linked_or_unreadable_conf_py_is_not_read(tmp_path: Path) -> None:
    real = tmp_path / "real.py"
    real.write_text(GOOD)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conf.py").symlink_to(real)
    assert ModulePrefixes.of(SphinxConf.of_tree(tmp_path, ["docs/a.rst"])).prefixes == {}
    (tmp_path / "docs" / "conf.py").unlink()
    (tmp_path / "docs" / "conf.py").mkdir()  # a folder named conf.py
    assert ModulePrefixes.of(SphinxConf.of_tree(tmp_path, ["docs/a.rst"])).prefixes == {}
    (tmp_path / "docs" / "conf.py").rmdir()
    (tmp_path / "docs" / "conf.py").write_text(GOOD)
    if os.geteuid() != 0:  # root reads any file
        (tmp_path / "docs" / "conf.py").chmod(0)
        assert ModulePrefixes.of(SphinxConf.of_tree(tmp_path, ["docs/a.rst"])).prefixes == {}


def test_prefixed_roles_grow_a_page_at_most_twice() -> None:
    from context_cli.parse.ref_titles import MIN_GROWTH

    prefixes = ModulePrefixes({"_a": "m" * 200})
    page = b":attr:`_a.b` " * 200_000  # each title would name the 200-character module
    start = time.perf_counter()
    out = prefixes.titled("index.rst", page)
    assert len(page) < len(out) <= 2 * len(page) and time.perf_counter() - start < 20
    assert len(prefixes.titled("index.rst", b":attr:`_a.b` " * 1000)) <= 13_000 + MIN_GROWTH


def test_a_tree_with_a_hostile_conf_py_builds_with_its_roles_as_written(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "conf.py").write_text(HOSTILE["a 300,000-deep unary chain"])
    (root / "index.rst").write_text("Index\n=====\n\nUse :class:`_orm.Session` for the unit of work.\n")
    out = tmp_path / "p.db"
    build(Fetched("folder", "docs", folder=root), out, BuildOptions(name="x", version="1.0.0", embed=False))
    pkg = open_package(out)
    try:
        assert "`_orm.Session`" in next(c.content for _, c in pkg.chunks())
    finally:
        pkg.close()
