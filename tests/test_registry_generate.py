"""The catalogue's generated part: the table written out as definitions that load, hand-written
definitions winning, and the shipped catalogue up to date with its table."""

from __future__ import annotations

import shutil
from pathlib import Path

from registry.definitions import load
from registry.generate import CATALOGUE, Row, definition, read_table, write


def _load_one(tmp_path: Path, row: Row):
    path = tmp_path / "packages.yaml"
    text = definition(row)
    assert text is not None
    path.write_text(f"{row.registry}:\n{text}")
    result = load(path)
    assert not result.errors, result.errors
    [d] = result.definitions
    return d


def test_each_kind_of_row_is_a_definition_that_loads(tmp_path: Path):
    git = _load_one(tmp_path, Row("pip", "acme", "o/acme", "git:docs/source", "v{version}", "-", "hand", "A: thing"))
    src = git.resolve_source("1.2.0")
    assert (src.type, src.url, src.docs_path, src.ref) == ("git", "https://github.com/o/acme", "docs/source", "v1.2.0")
    assert git.description == "A: thing"
    docs = _load_one(tmp_path, Row("npm", "@o/ui", "o/ui", "repo:o/ui-site:src/docs", "-", "-", "hand", ""))
    assert not docs.versioned and docs.source.url == "https://github.com/o/ui-site" and docs.source.docs_path == "src/docs"
    site = _load_one(tmp_path, Row("npm", "three", "o/three", "site", "-", "https://threejs.org/docs/+latest", "hand", ""))
    assert site.site is not None and (site.site.url, site.site.latest) == ("https://threejs.org/docs/", True)
    assert site.resolve_source("0.160.0").type == "npm"
    sdist = _load_one(tmp_path, Row("pip", "mako", "-", "sdist:doc/build", "-", "https://x.example/docs/", "hand", ""))
    assert sdist.resolve_source("1.3.0").docs_path == "doc/build" and sdist.repository is None
    assert sdist.site is not None and not sdist.site.latest
    assert definition(Row("npm", "ms", "-", "readme", "-", "-", "hand", "")) is None


def test_hand_written_definitions_win_and_rewriting_is_stable(tmp_path: Path):
    path = tmp_path / "packages.yaml"
    path.write_text("pip:\n  - name: acme\n    source: {type: pypi}\nnpm:\n  - name: zed\n    source: {type: npm}\n")
    table = [Row("pip", "acme", "o/acme", "git:docs", "v{version}", "-", "hand", ""),
             Row("pip", "other", "o/other", "git:docs", "v{version}", "-", "hand", ""),
             Row("npm", "ui", "o/ui", "tarball:docs", "-", "-", "hand", "")]
    assert write(table, path) == {"pip": 1, "npm": 1}
    once = path.read_text()
    write(table, path)
    assert path.read_text() == once
    defs = {d.key: d for d in load(path).definitions}
    assert set(defs) == {"pip/acme", "pip/other", "npm/zed", "npm/ui"}
    assert defs["pip/acme"].resolve_source("1.0").type == "pypi"  # the hand-written one


def test_the_shipped_catalogue_is_generated_from_its_table_and_holds_200_a_registry(tmp_path: Path):
    copy = tmp_path / "packages.yaml"
    shutil.copy(CATALOGUE, copy)
    write(read_table(), copy)
    assert copy.read_text() == CATALOGUE.read_text(), "run `python -m registry.generate`"
    result = load(CATALOGUE)
    assert not result.errors and not result.warnings
    for registry in ("pip", "npm"):
        assert sum(d.registry == registry for d in result.definitions) >= 200
