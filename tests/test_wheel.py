"""Releases published as wheels only: the wheel chosen, verified, unpacked and read (the README
in its METADATA, the API of its code), from real wheels (tests/fixtures/wheels/README.md)
served by a loopback PyPI stand-in."""

from __future__ import annotations

import base64
import hashlib
import io
import sqlite3
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from apiref_fixtures import FIXTURES as APIREF
from click.testing import CliRunner
from route_server import Routes, serving

from context_cli.errors import SourceError
from context_cli.sources.artefact import fetch_pypi
from context_cli.sources.docsources.ladder import resolve_spec
from context_cli.sources.wheel import choose_wheel, parse_metadata
from context_cli.store.store import Store
from context_cli.surfaces.cli import cli

WHEELS = Path(__file__).resolve().parent / "fixtures" / "wheels"
TOMLI = "tomli-2.0.1-py3-none-any.whl"
INICONFIG = "iniconfig-2.0.0-py3-none-any.whl"


def pypi_entry(srv: Routes, filename: str, data: bytes, **extra: object) -> dict:
    return {"filename": filename, "packagetype": "bdist_wheel", "url": f"{srv.url}/files/{filename}",
            "size": len(data), "yanked": False, "digests": {"sha256": hashlib.sha256(data).hexdigest()}, **extra}


def serve_wheels(srv: Routes, name: str, version: str, wheels: dict[str, bytes], **extra: object) -> None:
    """`name` `version` on the stand-in with `wheels` (file name -> bytes) and no sdist."""
    for filename, data in wheels.items():
        srv.add(f"/files/{filename}", data)
    srv.add(f"/pypi/{name}/json", {"info": {"name": name, "summary": f"{name} from the fixtures", "version": version},
                                   "releases": {version: [pypi_entry(srv, f, d, **extra) for f, d in wheels.items()]}})


def serve_tarball(srv: Routes, name: str, version: str, data: bytes) -> None:
    """`name@version` on the npm stand-in, its tarball `data`."""
    path = f"/tarballs/{name}-{version}.tgz"
    srv.add(path, data)
    sri = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    srv.add("/" + name, {"name": name, "dist-tags": {"latest": version}, "versions": {version: {
        "name": name, "version": version, "dist": {"tarball": srv.url + path, "integrity": sri}}}})


def fixture(filename: str) -> bytes:
    return (WHEELS / filename).read_bytes()


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Routes]:
    """The PyPI and npm stand-in (CONTEXT_PYPI_URL, CONTEXT_NPM_REGISTRY_URL); temp folders go
    to `tmp_path/scratch`, so leftovers can be seen; no catalogue definition applies."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("CONTEXT_DEFINITIONS", str(tmp_path / "no-definitions.yaml"))
    (tmp_path / "no-definitions.yaml").write_text("pip: []\nnpm: []\n")
    with serving(Routes()) as srv:
        monkeypatch.setenv("CONTEXT_PYPI_URL", srv.url)
        monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", srv.url)
        yield srv


def with_members(data: bytes, extra: dict[str, str]) -> bytes:
    """The wheel `data` with `extra` members (path -> text) added."""
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            out.writestr(info, src.read(info))
        for name, text in extra.items():
            out.writestr(name, text)
    return buf.getvalue()


# ---- which wheel -------------------------------------------------------------------------


def test_the_most_generic_wheel_is_chosen_the_same_way_every_time():
    def files(*names: str, yanked: tuple[str, ...] = ()) -> list[dict]:
        return [{"filename": n, "size": 1000 + i, "yanked": n in yanked} for i, n in enumerate(names)]

    binary = ["x-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", "x-1.0-cp38-abi3-manylinux_2_17_x86_64.whl",
              "x-1.0-cp312-cp312-win_amd64.whl"]
    assert choose_wheel(files(*binary))["filename"] == "x-1.0-cp38-abi3-manylinux_2_17_x86_64.whl"
    pure = ["x-1.0-py2.py3-none-any.whl", "x-1.0-py3-none-any.whl", "x-1.0-py2-none-any.whl"]
    assert choose_wheel(files(*binary, *pure))["filename"] == "x-1.0-py2.py3-none-any.whl"  # smallest of the py3 ones
    assert choose_wheel(files(*reversed(pure), *binary))["filename"] == "x-1.0-py3-none-any.whl"
    assert choose_wheel(files(*pure, yanked=(pure[0], pure[1])))["filename"] == "x-1.0-py2-none-any.whl"
    # a name that is not a wheel's is never chosen; only yanked ones: still one of them
    assert choose_wheel(files("../../etc/passwd.whl", "x.whl", "x-1.0.tar.gz")) is None
    assert choose_wheel(files(pure[1], yanked=(pure[1],)))["filename"] == pure[1]


def test_metadata_gives_the_readme_and_its_content_type():
    body = b"Metadata-Version: 2.1\nName: a\nDescription-Content-Type: text/markdown; charset=UTF-8; variant=GFM\n\n# A\n"
    assert parse_metadata(body) == ("# A\n", "text/markdown")
    old = (b"Metadata-Version: 1.1\nName: a\nDescription: A\n        =\n        \n        Folded *text*.\n"
           b"Platform: UNKNOWN\n")
    assert parse_metadata(old) == ("A\n=\n\nFolded *text*.", None)
    mime = (b"Metadata-Version: 2.1\nName: a\nContent-Type: multipart/mixed; boundary=b\n\n--b\n"
            b"Content-Type: text/plain\n\nhidden\n--b--\n")
    assert parse_metadata(mime)[0] == "--b\nContent-Type: text/plain\n\nhidden\n--b--\n"  # a body is text
    assert parse_metadata(b"Metadata-Version: 2.1\nName: a\n\n  \n") == (None, None)
    assert parse_metadata(b"\xff\xfe\x00garbage") == ("\ufffd\ufffdgarbage", None)


# ---- fetching ----------------------------------------------------------------------------


def test_a_release_without_sdist_is_read_from_its_wheel(index: Routes, tmp_path: Path):
    data = fixture(TOMLI)
    serve_wheels(index, "tomli", "2.0.1", {TOMLI: data, "tomli-2.0.1-cp311-cp311-manylinux_2_17_x86_64.whl": data})
    fetched = fetch_pypi("tomli", "2.0.1")
    try:
        assert (fetched.source_type, fetched.source_url, fetched.registry) == ("pypi", "pypi:tomli==2.0.1", "pip")
        assert fetched.meta == {"artefact": TOMLI}
        assert fetched.notes[:2] == [f"downloaded tomli 2.0.1 wheel {TOMLI} from {index.url[7:]} (sha256 verified)",
                                     "README from the wheel's METADATA (text/markdown)"]
        assert fetched.folder is not None and fetched.docs_path == "README.md"
        assert (fetched.folder / "README.md").read_text().count("## Usage") == 1
        assert fetched.code is not None and (fetched.code / "tomli" / "_parser.py").is_file()
        assert fetched.folder != fetched.code  # the unpacked wheel is the code, never a docs tree
    finally:
        fetched.cleanup()
    assert f"/files/{TOMLI}" in index.log and not any("manylinux" in p for p in index.log)
    assert not list((tmp_path / "scratch").iterdir())


def test_a_wheel_that_fails_its_checksum_is_refused(index: Routes, tmp_path: Path):
    serve_wheels(index, "tomli", "2.0.1", {TOMLI: fixture(TOMLI)})
    index.add(f"/files/{TOMLI}", fixture(INICONFIG))
    with pytest.raises(SourceError, match=rf"^tomli 2.0.1 wheel {TOMLI}: sha256 checksum mismatch"):
        fetch_pypi("tomli", "2.0.1")
    assert not list((tmp_path / "scratch").iterdir())


def test_a_release_with_no_files_says_so(index: Routes):
    serve_wheels(index, "tomli", "2.0.1", {})
    with pytest.raises(SourceError, match=r"^tomli 2.0.1 has no sdist and no wheel on PyPI; build its docs"):
        fetch_pypi("tomli", "2.0.1")


# ---- through `context add` and the ladder ------------------------------------------------


def test_add_a_wheel_only_release_gets_its_readme_and_api(index: Routes, context_home: Path):
    serve_wheels(index, "tomli", "2.0.1", {TOMLI: fixture(TOMLI)})
    result = CliRunner().invoke(cli, ["add", "pypi:tomli==2.0.1", "--no-embed"])
    assert result.exit_code == 0, result.output
    assert f"downloaded tomli 2.0.1 wheel {TOMLI}" in result.output and "API: 4 symbols in 1 module" in result.output
    path = Store().resolve("pip/tomli@2.0.1").path
    with sqlite3.connect(path) as db:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        pages = {p for (p,) in db.execute("SELECT DISTINCT doc_path FROM chunks")}
        symbols = {s for (s,) in db.execute("SELECT name FROM symbols")}
        sections = dict(db.execute("SELECT section_title, content FROM chunks WHERE doc_path = 'README.md'"))
    assert (meta["artefact"], meta["docs_source"], meta["source_url"]) == (TOMLI, "readme", "pypi:tomli==2.0.1")
    assert "README.md" in pages and not any("dist-info" in p for p in pages)
    assert {"tomli.loads", "tomli.load", "tomli.TOMLDecodeError"} <= symbols
    assert {"Intro", "Installation", "Usage", "FAQ"} <= set(sections) and "tomli.loads(" in sections["Usage"]
    info = CliRunner().invoke(cli, ["info", "tomli"]).output
    assert f"tomli 2.0.1's wheel {TOMLI} on PyPI (pypi:tomli==2.0.1)" in info
    assert "docs        api (the README and the API read from the released code)" in info  # as sync says


def test_a_rest_readme_is_read_as_rest(index: Routes, context_home: Path):
    serve_wheels(index, "iniconfig", "2.0.0", {INICONFIG: fixture(INICONFIG)})
    result = CliRunner().invoke(cli, ["add", "pypi:iniconfig==2.0.0", "--no-embed"])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(Store().resolve("pip/iniconfig@2.0.0").path) as db:
        readme = dict(db.execute("SELECT section_title, content FROM chunks WHERE doc_path = 'README.rst'"))
        assert db.execute("SELECT count(*) FROM symbols WHERE name = 'iniconfig.IniConfig'").fetchone() == (1,)
    assert "Basic Example" in readme and ".. code-block::" not in readme["Basic Example"]


def test_a_docs_folder_in_the_wheel_is_real_docs(index: Routes):
    data = with_members(fixture(TOMLI), {"tomli/docs/guide.md": "# Guide\n\n## Parsing\n\nCall `tomli.loads(text)`.\n"})
    serve_wheels(index, "tomli", "2.0.1", {TOMLI: data})
    resolved = resolve_spec("pypi:tomli==2.0.1")
    try:
        assert (resolved.step, resolved.readme_only, resolved.fetched.docs_path) == ("artefact", False, "tomli/docs")
        assert "docs from tomli/docs/ in the wheel" in resolved.fetched.notes
    finally:
        resolved.fetched.cleanup()


def test_a_wheel_without_readme_still_gives_its_api(index: Routes, context_home: Path):
    """No description in METADATA: the API alone, labelled as the README outcome, not docs."""
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(fixture(TOMLI))) as src, zipfile.ZipFile(buf, "w") as out:
        for info in src.infolist():
            raw = src.read(info)
            out.writestr(info, raw.split(b"\n\n", 1)[0] + b"\n" if info.filename.endswith("METADATA") else raw)
    serve_wheels(index, "tomli", "2.0.1", {TOMLI: buf.getvalue()})
    result = CliRunner().invoke(cli, ["add", "pypi:tomli==2.0.1", "--no-embed"])
    assert result.exit_code == 0, result.output
    assert "no README (the wheel's METADATA has no long description); only the API read from its code" in result.output
    with sqlite3.connect(Store().resolve("pip/tomli@2.0.1").path) as db:
        assert dict(db.execute("SELECT key, value FROM meta"))["docs_source"] == "readme"
        assert db.execute("SELECT count(*) FROM symbols").fetchone()[0] == 4


def test_an_npm_tarball_without_docs_or_readme_still_gives_its_types(index: Routes, context_home: Path):
    """p-limit 5.0.0 without its readme: its `index.d.ts` is all there is, and it is enough."""
    buf = io.BytesIO()
    with tarfile.open(APIREF / "p-limit-5.0.0.tgz") as src, tarfile.open(fileobj=buf, mode="w:gz") as out:
        for member in src.getmembers():
            if member.name != "package/readme.md":
                out.addfile(member, src.extractfile(member))
    serve_tarball(index, "p-limit", "5.0.0", buf.getvalue())
    result = CliRunner().invoke(cli, ["add", "npm:p-limit@5.0.0", "--no-embed"])
    assert result.exit_code == 0, result.output
    with sqlite3.connect(Store().resolve("npm/p-limit@5.0.0").path) as db:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        pages = dict(db.execute("SELECT doc_path, kind FROM pages"))
        assert db.execute("SELECT count(*) FROM symbols WHERE name LIKE 'p-limit%'").fetchone()[0] == 6
    assert pages == {"index.d.ts": "reference"}, pages
    assert meta["docs_source"] == "readme"  # the release itself, never passed off as docs

