"""docs.lock (stable bytes, atomic, damaged files refused), project scope, version ranges."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from context_cli.sync.docslock import Entry, lock_path, read_lock, render, write_lock
from context_cli.sync.model import LockfileError
from context_cli.sync.ranges import newest_satisfying, satisfies
from context_cli.sync.scope import find_docs_lock, project_specs

A = Entry("npm", "zod", "3.23.8", "a" * 64, 1200, "https://registry.example")
B = Entry("npm", "@tanstack/react-query", "5.40.0", "b" * 64, 900, "https://registry.example")
C = Entry("pip", "httpx", "0.27.2", "c" * 64, 3000, "pypi:httpx==0.27.2")


def test_render_is_sorted_and_stable_whatever_the_order():
    assert render([C, A, B, A]) == render([A, B, C])
    data = json.loads(render([C, A, B]))
    assert data["format"] == 1
    assert [p["name"] for p in data["packages"]] == ["@tanstack/react-query", "zod", "httpx"]
    assert set(data["packages"][0]) == {"registry", "name", "version", "sha256", "size", "source"}


def test_write_only_when_changed_and_round_trip(tmp_path: Path):
    path = lock_path(tmp_path)
    assert write_lock(path, [A, C]) is True
    mtime = path.stat().st_mtime_ns
    assert write_lock(path, [C, A]) is False and path.stat().st_mtime_ns == mtime
    assert sorted(read_lock(path)) == sorted([A, C])
    assert [p.name for p in path.parent.iterdir()] == ["docs.lock"]  # no temp file left


@pytest.mark.parametrize("text,match", [
    ('{"format": 1, "packages": [', r"docs.lock line 1: invalid JSON"),
    ('{"format": 7, "packages": []}', "is not a docs.lock of format 1"),
    ('{"format": 1, "packages": [{"name": "x"}]}', "entry 1: has no registry, version, sha256, size, source"),
])
def test_damaged_lock_is_one_error(tmp_path: Path, text: str, match: str):
    path = lock_path(tmp_path)
    path.parent.mkdir()
    path.write_text(text)
    with pytest.raises(LockfileError, match=match):
        read_lock(path)


GOOD = {"registry": "npm", "name": "zod", "version": "3.23.8", "sha256": "a" * 64, "size": 10, "source": "x"}


@pytest.mark.parametrize("field,value,match", [
    ("size", "Infinity", "holds Infinity"),
    ("size", "NaN", "holds NaN"),
    ("size", "-1", "size must be a whole number"),
    ("size", "1.5", "size must be a whole number"),
    ("size", "true", "size must be a whole number"),
    ("size", "1" + "0" * 400, "size must be a whole number"),
    ("version", '"' + "9" * 5000 + '"', "entry 1: "),
    ("version", "3", "version must be text"),
    ("name", '"../../etc"', "entry 1: "),
    ("registry", '"NPM "', "entry 1: "),
    ("sha256", '"xyz"', "sha256 is not 64"),
    ("source", '"' + "s" * 3000 + '"', "source is over"),
    ("docs", '"maybe"', "docs must be one of"),
    ("tried", '"../x"', "tried must be up to 64"),
    ("tried", "7", "tried must be up to 64"),
])
def test_every_field_is_checked(tmp_path: Path, field: str, value: str, match: str):
    """`"size": Infinity` and its kin: one line naming the file and the entry, never a crash later."""
    path = lock_path(tmp_path)
    path.parent.mkdir()
    item = json.dumps({k: v for k, v in GOOD.items() if k != field})[:-1] + f', "{field}": {value}}}'
    path.write_text('{"format": 1, "packages": [' + item + "]}")
    with pytest.raises(LockfileError, match=match) as e:
        read_lock(path)
    assert str(e.value).startswith(str(path)) and "\n" not in str(e.value) and len(str(e.value)) < 400


def test_readme_only_is_recorded_and_real_docs_keep_their_bytes(tmp_path: Path):
    path = lock_path(tmp_path)
    readme = Entry("npm", "left-pad", "1.3.0", "b" * 64, 5, "npm:left-pad@1.3.0", "readme", "0123456789abcdef")
    write_lock(path, [A, readme])
    text = path.read_text()
    assert text.count('"docs"') == 1 and '"docs": "readme"' in text
    assert text.count('"tried"') == 1 and '"tried": "0123456789abcdef"' in text
    assert sorted(read_lock(path)) == sorted([A, readme])


def test_scope_finds_nearest_lock_upward(tmp_path: Path):
    outer, inner = tmp_path / "mono", tmp_path / "mono" / "apps" / "web"
    (inner / "src").mkdir(parents=True)
    assert find_docs_lock(inner / "src") is None
    write_lock(lock_path(outer), [A, C])
    assert find_docs_lock(inner / "src") == lock_path(outer)
    write_lock(lock_path(inner), [B])
    assert find_docs_lock(inner / "src") == lock_path(inner)
    assert project_specs(lock_path(inner)) == ["npm/@tanstack/react-query@5.40.0"]
    assert project_specs(lock_path(outer)) == ["npm/zod@3.23.8", "pip/httpx@0.27.2"]


def test_scope_refuses_a_damaged_lock(tmp_path: Path):
    path = lock_path(tmp_path)
    path.parent.mkdir()
    path.write_text("not json")
    with pytest.raises(LockfileError):
        project_specs(path)


@pytest.mark.parametrize("wanted,version,ok", [
    ("^1.2.3", "1.9.0", True), ("^1.2.3", "2.0.0", False), ("^0.2.3", "0.3.0", False),
    ("~1.2.3", "1.2.9", True), ("~1.2.3", "1.3.0", False), ("1.x", "1.5.0", True),
    (">=1.2.0 <2", "2.0.0", False), ("1.2.3 - 1.4", "1.4.9", True), ("<1 || ^3", "3.1.0", True),
    ("^3.0.0", "3.1.0-beta.1", False), ("^3.1.0-beta.0", "3.1.0-beta.1", True), ("*", "0.0.1", True),
    ("latest", "9.9.9", True), ("not a range", "1.0.0", False),
])
def test_npm_ranges(wanted: str, version: str, ok: bool):
    assert satisfies("npm", wanted, version) is ok


@pytest.mark.parametrize("wanted,version,ok", [
    (">=8.0,<9", "8.1.7", True), ("^1.2", "1.9", True), ("^1.2", "2.0", False), ("^0.2.3", "0.2.9", True),
    ("~1.2", "1.2.5", True), ("~1.2", "1.3", False), ("~=2.0", "2.4", True), ("*", "1.0rc1", False),
    (">=2.0rc1", "2.0rc2", True), ("1.2.*", "1.2.7", True), ("", "3.0", True),
])
def test_pypi_ranges(wanted: str, version: str, ok: bool):
    assert satisfies("pip", wanted, version) is ok


def test_newest_satisfying():
    assert newest_satisfying("npm", "^1.0.0", ["1.2.0", "1.10.0", "2.0.0", "1.9.9"]) == "1.10.0"
    assert newest_satisfying("pip", ">=1,<2", ["1.9", "1.10", "2.0"]) == "1.10"
    assert newest_satisfying("npm", "^5", ["4.0.0"]) is None
