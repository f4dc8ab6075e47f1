"""`context add pypi:evil` where the release is a hostile wheel (no sdist): refused in one line
when unpacking it could harm, built without its README when its METADATA cannot be read, and
its code never run. Real CLI in a child process, a loopback PyPI."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from . import hostile_http as web
from . import hostile_wheels as hw
from .runner import StoreSnapshot, assert_good_package_searchable, assert_ok, assert_one_line_error, run

WHEEL = "evil-1.0.0-py3-none-any.whl"
OUTSIDE = [Path("/tmp/context-adversarial-wheel.py"), Path("/tmp/context-adversarial-record.py")]


def pypi_routes(data: bytes, filename: str = WHEEL) -> dict[str, web.Handler]:
    """A PyPI whose `evil` 1.0.0 has one wheel and no sdist."""
    def project(r: web.Request) -> list[web.Part]:
        url = f"http://127.0.0.1:{r.port}/files/{WHEEL}"
        return web.json_reply({"info": {"name": "evil", "version": "1.0.0"}, "releases": {"1.0.0": [
            {"packagetype": "bdist_wheel", "filename": filename, "url": url, "size": len(data),
             "digests": {"sha256": hashlib.sha256(data).hexdigest()}}]}})
    return {"/pypi/evil/json": project, f"/files/{WHEEL}": lambda r: web.reply(data)}


def add_wheel(home: Path, tmp_path: Path, data: bytes, filename: str = WHEEL):
    """`context add pypi:evil==1.0.0` with its own TMPDIR and no catalogue; (outcome, leftovers)."""
    tmp = tmp_path / "child-tmp"
    tmp.mkdir(exist_ok=True)
    (tmp_path / "defs.yaml").write_text("pip: []\n")
    env = {"TMPDIR": str(tmp), "CONTEXT_DEFINITIONS": str(tmp_path / "defs.yaml")}
    with web.HostileServer(pypi_routes(data, filename)) as srv:
        o = run(["add", "pypi:evil==1.0.0", "--no-embed"], home, timeout=60, env={**env, "CONTEXT_PYPI_URL": srv.url})
    return o, sorted(p.name for p in tmp.iterdir())


def built(home: Path) -> tuple[dict[str, str], set[str], set[str]]:
    """(meta, page paths, symbol names) of the installed evil 1.0.0."""
    [path] = (home / "packages").glob("pip__evil__1.0.0.db")
    with sqlite3.connect(path) as db:
        return (dict(db.execute("SELECT key, value FROM meta")),
                {p for (p,) in db.execute("SELECT DISTINCT doc_path FROM chunks")},
                {s for (s,) in db.execute("SELECT name FROM symbols")})


@pytest.mark.parametrize("trick", list(hw.REFUSED))
def test_hostile_wheel_refused(trick: str, home: Path, snapshot: StoreSnapshot, tmp_path: Path) -> None:
    o, left = add_wheel(home, tmp_path, hw.REFUSED[trick]())
    line = assert_one_line_error(o)
    assert "refusing archive" in line and "no docs for pip/evil@1.0.0" in line, line
    snapshot.assert_unchanged(home)
    assert left == [], f"temporary files left behind: {left}"
    assert not any(p.exists() for p in OUTSIDE)


def test_code_in_a_wheel_is_read_never_run(home: Path, tmp_path: Path) -> None:
    """A `.pth`, an `__init__.py`, `__main__`, a post-install script, `setup.py`, `conftest.py`:
    each would write a marker if run. The API is read from the code; no marker appears."""
    marker = str(tmp_path / "ran")
    o, left = add_wheel(home, tmp_path, hw.runs_code(marker))
    assert_ok(o)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ran")) == []
    meta, pages, symbols = built(home)
    assert "evil.harmless" in symbols and not any("evil_data" in s for s in symbols)  # `.data/` is not code
    assert meta["docs_source"] == "readme" and "README.md" in pages
    assert not any(".dist-info" in p or ".data" in p for p in pages), pages
    assert left == []
    assert_good_package_searchable(home)


def test_a_record_that_lies_is_never_followed(home: Path, tmp_path: Path) -> None:
    o, left = add_wheel(home, tmp_path, hw.lying_record())
    assert_ok(o)
    assert not any(p.exists() for p in OUTSIDE)
    _, pages, symbols = built(home)
    assert "README.md" in pages and "evil.harmless" in symbols
    assert left == []


@pytest.mark.parametrize("make, note", [
    (hw.huge_metadata, "no README (the wheel's METADATA is 6 MB, over the 4 MB cap); only the API read from its code"),
    (hw.two_dist_infos, "no README (the wheel has no single *.dist-info/METADATA)"),
], ids=["huge", "two_dist_infos"])
def test_unreadable_metadata_costs_the_readme_not_the_api(make: Callable[[], bytes], note: str, home: Path,
                                                          tmp_path: Path) -> None:
    o, left = add_wheel(home, tmp_path, make())
    assert_ok(o)
    assert note in o.stdout + o.stderr, o
    meta, pages, symbols = built(home)
    assert "evil.harmless" in symbols and not any(p.startswith("README") for p in pages)
    assert meta["docs_source"] == "readme"  # the release itself, labelled as the README outcome
    assert left == []


@pytest.mark.parametrize("binary", [False, True], ids=["text", "binary"])
def test_malformed_metadata_is_text_at_worst(binary: bool, home: Path, tmp_path: Path) -> None:
    """Text is kept as a plain-text README; binary data is no page (the parser says so)."""
    o, left = add_wheel(home, tmp_path, hw.malformed_metadata(binary))
    assert_ok(o)
    _, pages, symbols = built(home)
    assert "evil.harmless" in symbols
    assert ("README.txt" in pages) is not binary, pages
    assert left == []


@pytest.mark.parametrize("filename", ["../../evil-1.0.0-py3-none-any.whl", "evil-1.0.0-py3-none-any\x1b[31m.whl",
                                      "evil.whl"])
def test_a_wheel_the_index_misnames_is_no_candidate(filename: str, home: Path, snapshot: StoreSnapshot,
                                                     tmp_path: Path) -> None:
    o, left = add_wheel(home, tmp_path, hw.wheel({}), filename)
    line = assert_one_line_error(o)
    assert "has no sdist and no wheel on PyPI" in line and "\x1b" not in line, line
    snapshot.assert_unchanged(home)
    assert left == []
