"""zzzeeksphinx module prefixes (`:class:`_orm.Session``) show as the rendered docs show them
(parse/module_prefixes.py)."""

from __future__ import annotations

from pathlib import Path

from context_cli.build import BuildOptions, build
from context_cli.package.reader import open_package
from context_cli.parse.module_prefixes import ModulePrefixes
from context_cli.parse.sphinx_conf import SphinxConf
from context_cli.sources.base import Fetched

# As SQLAlchemy's doc/build/conf.py writes it (a shortened excerpt).
CONF = '''\
import os
import sys

sys.path.insert(0, os.path.abspath("../../lib"))
extensions = ["sphinx.ext.autodoc", "zzzeeksphinx", "sphinx_paramlinks"]

zzzeeksphinx_module_prefixes = {
    "_sa": "sqlalchemy",
    "_orm": "sqlalchemy.orm",
    # base event API, like listen() etc.
    "_schema": "sqlalchemy.schema",
}
'''

SESSION = """\
Session Basics
==============

The :class:`_orm.Session` runs :meth:`_orm.Session.execute` on a :func:`_sa.select`
construct; see :paramref:`_orm.Session.expire_on_commit` and :attr:`_orm.Session.info`.
"""


def prefixes() -> ModulePrefixes:
    return ModulePrefixes({"_sa": "sqlalchemy", "_orm": "sqlalchemy.orm"})


def test_conf_py_prefixes_are_read_without_running_it(tmp_path: Path):
    conf = tmp_path / "conf.py"
    conf.write_text(CONF + 'zzzeeksphinx_module_prefixes["_x"] = "x"\nraise SystemExit\n')
    assert ModulePrefixes.of(SphinxConf.of_file(conf)).prefixes == {"_sa": "sqlalchemy", "_orm": "sqlalchemy.orm",
                                                     "_schema": "sqlalchemy.schema"}


def test_each_role_shows_what_zzzeeksphinx_shows():
    out = prefixes().titled("index.rst", SESSION.encode()).decode()
    assert ":class:`Session <_orm.Session>`" in out
    assert ":meth:`Session.execute() <_orm.Session.execute>`" in out
    assert ":func:`select() <_sa.select>`" in out
    assert ":paramref:`Session.expire_on_commit <_orm.Session.expire_on_commit>`" in out
    assert ":attr:`Session.info <_orm.Session.info>`" in out


def test_paramref_of_a_method_parentheses_and_a_dot_in_the_target():
    out = prefixes().titled("index.rst", b":paramref:`_orm.Session.begin.nested` :func:`_orm.aliased()` "
                            b":meth:`_orm.Query.join()` :class:`_orm.Mapper()` {py:class}`_sa.Table` "
                            b":class:`._orm.Session`").decode()
    assert ":paramref:`Session.begin.nested <_orm.Session.begin.nested>`" in out  # a method's parameter
    assert ":func:`aliased() <_orm.aliased()>`" in out and ":meth:`Query.join() <_orm.Query.join()>`" in out
    assert ":class:`_orm.Mapper()`" in out  # Sphinx keeps "()" in a class target: not one zzzeeksphinx maps
    assert "{py:class}`Table <_sa.Table>`" in out
    assert ":class:`Session <._orm.Session>`" in out  # Sphinx drops the dot before zzzeeksphinx reads it


def test_titled_tilde_relative_unmapped_and_other_roles_are_left_alone():
    data = (b":class:`~_orm.Session` :class:`the session <_orm.Session>` :class:`.Session` "
            b":class:`!_orm.Session` :class:`_nope.Thing` :exc:`_orm.NoResultFound` :mod:`_orm` "
            b":ref:`_orm.label` ``:class:`_orm`` plain _orm.Session")
    assert prefixes().titled("index.rst", data) == data
    assert ModulePrefixes({}).titled("index.rst", SESSION.encode()) == SESSION.encode()


def sdist(tmp_path: Path, conf: str | None) -> Path:
    """A project laid out as SQLAlchemy's sdist: docs in doc/build/, conf.py beside them."""
    root = tmp_path / "sqlalchemy"
    (root / "doc" / "build" / "orm").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "sqlalchemy"\n')
    if conf is not None:
        (root / "doc" / "build" / "conf.py").write_text(conf)
    (root / "doc" / "build" / "orm" / "session_basics.rst").write_text(SESSION)
    (root / "doc" / "build" / "orm" / "index.rst").write_text("ORM\n===\n\nStart with :class:`_orm.Session` here.\n")
    return root


def test_conf_py_is_found_beside_or_above_the_pages_inside_the_source(tmp_path: Path):
    root = sdist(tmp_path, CONF)
    rels = ["doc/build/orm/session_basics.rst", "doc/build/orm/index.rst"]
    assert ModulePrefixes.of(SphinxConf.of_tree(root, rels)).prefixes["_orm"] == "sqlalchemy.orm"
    assert ModulePrefixes.of(SphinxConf.of_tree(root / "doc" / "build", ["orm/index.rst"])).prefixes["_sa"] == "sqlalchemy"
    (tmp_path / "conf.py").write_text(CONF)  # above the source root: not the tree's
    assert ModulePrefixes.of(SphinxConf.of_tree(root / "doc" / "build" / "orm", ["index.rst"])).prefixes == {}
    (root / "doc" / "build" / "orm" / "sub").mkdir()
    (root / "doc" / "build" / "orm" / "sub" / "conf.py").write_text(CONF)  # below the pages: not theirs
    assert ModulePrefixes.of(SphinxConf.of_tree(root / "doc" / "build" / "orm", ["index.rst"])).prefixes == {}
    assert ModulePrefixes.of(SphinxConf.of_tree(root, [])).prefixes == {}


def built_text(tmp_path: Path, conf: str | None) -> dict[str, str]:
    root = sdist(tmp_path, conf)
    out = tmp_path / "p.db"
    build(Fetched("folder", "sqlalchemy", folder=root), out, BuildOptions(name="x", version="1.0.0", embed=False))
    pkg = open_package(out)
    try:
        return {c.doc_path: c.content for _, c in pkg.chunks()}
    finally:
        pkg.close()


def test_a_built_package_shows_the_names_the_rendered_docs_show(tmp_path: Path):
    text = built_text(tmp_path, CONF)["doc/build/orm/session_basics.rst"]
    assert "The `Session` runs `Session.execute()` on a `select()`" in text
    assert "_orm." not in text and "_sa." not in text


def test_without_the_setting_the_roles_show_as_written(tmp_path: Path):
    text = built_text(tmp_path, "extensions = ['zzzeeksphinx']\n")["doc/build/orm/session_basics.rst"]
    assert "The `_orm.Session` runs `_orm.Session.execute()`" in text


def test_a_rebuild_after_conf_py_names_the_prefixes_rebuilds_the_pages_that_use_them(tmp_path: Path):
    root = sdist(tmp_path, "extensions = ['zzzeeksphinx']\n")
    (root / "doc" / "build" / "plain.rst").write_text("Plain\n=====\n\nNo roles on this page at all.\n")
    opts = BuildOptions(name="x", version="1.0.0", embed=False)
    build(Fetched("folder", "sqlalchemy", folder=root), tmp_path / "a.db", opts)
    (root / "doc" / "build" / "conf.py").write_text(CONF)
    opts.previous = tmp_path / "a.db"
    again = build(Fetched("folder", "sqlalchemy", folder=root), tmp_path / "b.db", opts)
    assert again.reused_pages == 1  # plain.rst; both pages with prefixed roles are rebuilt
    pkg = open_package(tmp_path / "b.db")
    try:
        assert "Start with `Session` here." in {c.doc_path: c.content for _, c in pkg.chunks()}["doc/build/orm/index.rst"]
    finally:
        pkg.close()
