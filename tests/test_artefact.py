"""Released artefacts: sdists and npm tarballs built here, served on loopback, fetched safely."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from helpers import targz
from quiet_servers import QuietHTTPServer

from context_cli.errors import SourceError
from context_cli.sources import artefact
from context_cli.sources.artefact import fetch_artefact, fetch_npm, fetch_pypi, parse_artefact_spec


class Server:
    """path -> (status, body, headers); a header `X-Delay` makes the answer wait (seconds),
    `X-Drip` sends the body one byte at a time that many seconds apart."""

    def __init__(self) -> None:
        self.routes: dict[str, tuple[int, bytes, dict[str, str]]] = {}
        self.log: list[str] = []
        self.url = ""

    def add(self, path: str, body: bytes | dict, status: int = 200, **headers: str) -> None:
        raw = json.dumps(body).encode() if isinstance(body, dict) else body
        self.routes[path] = (status, raw, headers)


@pytest.fixture
def server():
    srv = Server()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            srv.log.append(self.path)
            status, body, headers = srv.routes.get(self.path, (404, b'{"error":"Not found"}', {}))
            headers = dict(headers)
            if "X-Delay" in headers:
                time.sleep(float(headers.pop("X-Delay")))
            drip = float(headers.pop("X-Drip", 0))  # seconds between single bytes of the body
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                if not drip:
                    self.wfile.write(body)
                for i in range(len(body) if drip else 0):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(drip)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args) -> None:
            pass

    httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    srv.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield srv
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    """Temp dirs go to a folder the test can inspect; retries never wait."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr(artefact, "_sleep", lambda s: None)
    for env, _ in artefact.DEFAULT_URLS.values():
        monkeypatch.delenv(env, raising=False)
    return scratch




SDIST = targz({
    "demo-1.0/PKG-INFO": "Name: demo\nVersion: 1.0\n",
    "demo-1.0/README.md": "# Demo\n",
    "demo-1.0/docs/index.md": "# Demo docs\n\nHello.\n",
    "demo-1.0/src/demo/__init__.py": "",
})


def pypi_file(url: str, data: bytes, kind: str = "sdist", **extra) -> dict:
    name = url.rsplit("/", 1)[-1]
    return {"filename": name, "packagetype": kind, "url": url, "size": len(data), "yanked": False,
            "upload_time_iso_8601": "2024-01-02T03:04:05.000000Z",
            "digests": {"sha256": hashlib.sha256(data).hexdigest()}, **extra}


def serve_pypi(server: Server, sdist: bytes = SDIST, **overrides) -> None:
    files = {
        "0.9": [pypi_file(f"{server.url}/files/demo-0.9.tar.gz", sdist, yanked=True)],
        "1.0": [pypi_file(f"{server.url}/files/demo-1.0.tar.gz", sdist),
                pypi_file(f"{server.url}/files/demo-1.0-py3-none-any.whl", b"wheel", "bdist_wheel")],
        "2.0rc1": [pypi_file("../../files/demo-1.0.tar.gz", sdist)],  # relative, as mirrors do
        "1.1": [pypi_file(f"{server.url}/files/demo-1.1-py3-none-any.whl", b"w", "bdist_wheel")],
    }
    files.update(overrides)
    server.add("/pypi/demo/json", {
        "info": {"name": "Demo", "summary": "A demo package", "version": "2.0rc1"},
        "releases": files,
        "urls": files["1.0"],
    })
    server.add("/files/demo-1.0.tar.gz", sdist)


def flip_last_byte(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 1])


def leftovers(scratch: Path) -> list[str]:
    return sorted(p.name for p in scratch.iterdir())


# ---- PyPI --------------------------------------------------------------------------------


def test_fetch_pypi_latest_stable_sdist(server, isolated):
    """Latest stable: 2.0rc1 is a pre-release and 1.1 has no files, so 1.0."""
    serve_pypi(server, **{"1.1": []})  # no files: not a candidate for "latest"
    fetched = fetch_pypi("demo", index_url=server.url)
    try:
        assert fetched.source_type == "pypi"
        assert fetched.registry == "pip"  # filed where `context install pip/demo` looks
        assert fetched.source_url == "pypi:demo==1.0"
        assert (fetched.name, fetched.version, fetched.description) == ("demo", "1.0", "A demo package")
        assert fetched.folder is not None and fetched.folder.name == "demo-1.0"
        assert fetched.docs_path == "docs"
        assert (fetched.folder / "docs/index.md").read_text().startswith("# Demo docs")
        assert fetched.notes[0] == "downloaded demo 1.0 sdist from " + server.url[7:] + " (sha256 verified)"
        assert len(fetched.temp_dirs) == 1 and fetched.temp_dirs[0].parent == isolated
        assert not (fetched.temp_dirs[0] / "artefact").exists()  # the archive is not kept
    finally:
        fetched.cleanup()
    assert leftovers(isolated) == []


def test_latest_without_sdist_takes_its_wheel_and_says_what_failed(server, isolated):
    """1.1 has a wheel only: it is what is fetched (tests/test_wheel.py reads real ones); here
    the index lists it but does not serve it, and the files it cannot read are no candidates."""
    serve_pypi(server)
    with pytest.raises(SourceError) as err:
        fetch_pypi("demo", index_url=server.url)
    assert str(err.value) == (f"demo 1.1 wheel demo-1.1-py3-none-any.whl: download not found "
                              f"({server.url}/files/demo-1.1-py3-none-any.whl)")
    serve_pypi(server, **{"1.1": [pypi_file(f"{server.url}/files/demo-1.1.exe", b"x", "bdist_wininst"),
                                  pypi_file(f"{server.url}/files/demo.whl", b"x", "bdist_wheel")]})
    with pytest.raises(SourceError) as err:
        fetch_pypi("demo", index_url=server.url)
    assert str(err.value) == "demo 1.1 has no sdist and no wheel on PyPI; build its docs from its git repository"
    assert leftovers(isolated) == []


def test_relative_download_urls_and_env_base_url(server, monkeypatch):
    serve_pypi(server)
    monkeypatch.setenv("CONTEXT_PYPI_URL", server.url)
    fetched = fetch_artefact("pypi:demo==2.0rc1")
    assert fetched.version == "2.0rc1" and fetched.docs_path == "docs"
    assert "/files/demo-1.0.tar.gz" in server.log
    fetched.cleanup()


def test_pypi_not_found(server, isolated):
    serve_pypi(server)
    with pytest.raises(SourceError, match=r"^no such package on PyPI: nope$"):
        fetch_pypi("nope", index_url=server.url)
    with pytest.raises(SourceError, match=r"^no version 9.9 of demo on PyPI$"):
        fetch_pypi("demo", "9.9", index_url=server.url)
    assert leftovers(isolated) == []


def test_pypi_checksum_mismatch_leaves_nothing(server, isolated):
    serve_pypi(server)
    server.add("/files/demo-1.0.tar.gz", flip_last_byte(SDIST))
    expected = (r"^demo 1.0 sdist: sha256 checksum mismatch \(expected [0-9a-f]{64}, "
                r"got [0-9a-f]{64}\); the download is corrupt or was tampered with$")
    with pytest.raises(SourceError, match=expected):
        fetch_pypi("demo", "1.0", index_url=server.url)
    assert leftovers(isolated) == []


def test_hostile_sdist_is_refused(server, isolated):
    evil = targz({"demo-1.0/docs/a.md": "a", "../../outside.txt": "pwned"})
    serve_pypi(server, sdist=evil)
    with pytest.raises(SourceError, match=r"^refusing archive artefact: member '../../outside.txt' escapes"):
        fetch_pypi("demo", "1.0", index_url=server.url)
    assert leftovers(isolated) == []
    assert not (isolated.parent / "outside.txt").exists()


def test_size_cap(server, isolated):
    serve_pypi(server)
    with pytest.raises(SourceError, match=r"^download of demo 1.0 sdist: the server declares \d+ bytes, over the 100-byte limit$"):
        fetch_pypi("demo", "1.0", index_url=server.url, max_bytes=100)
    assert leftovers(isolated) == []


def test_docs_path_override_and_missing_docs_path(server, isolated):
    serve_pypi(server)
    fetched = fetch_pypi("demo", "1.0", index_url=server.url, docs_path="src/demo")
    assert fetched.docs_path == "src/demo"
    fetched.cleanup()
    with pytest.raises(SourceError, match=r"^demo 1.0 sdist has no 'manual' folder$"):
        fetch_pypi("demo", "1.0", index_url=server.url, docs_path="manual")
    with pytest.raises(SourceError, match=r"^docs path '../..' must stay inside the demo 1.0 sdist$"):
        fetch_pypi("demo", "1.0", index_url=server.url, docs_path="../..")
    assert leftovers(isolated) == []


def test_download_timeout_is_one_clear_line(server, isolated, monkeypatch):
    serve_pypi(server)
    server.add("/files/demo-1.0.tar.gz", SDIST, **{"X-Delay": "1"})
    monkeypatch.setattr(artefact, "TIMEOUT", (1, 0.2))
    monkeypatch.setattr(artefact, "ATTEMPTS", 2)
    with pytest.raises(SourceError, match=r"^could not reach download of demo 1.0 sdist at 127.0.0.1:\d+: timed out$"):
        fetch_pypi("demo", "1.0", index_url=server.url)
    assert leftovers(isolated) == []


def test_an_encoded_sdist_is_refused_not_decoded(server, isolated):
    """identity is asked for; a server that gzips the download anyway is refused (bomb-proof)."""
    import gzip

    serve_pypi(server)
    server.add("/files/demo-1.0.tar.gz", gzip.compress(SDIST), **{"Content-Encoding": "gzip"})
    with pytest.raises(SourceError, match=r"^download of demo 1.0 sdist: the server sent 'gzip'-encoded data"):
        fetch_pypi("demo", "1.0", index_url=server.url)
    assert leftovers(isolated) == []


def test_a_dripping_download_meets_the_deadline(server, isolated, monkeypatch):
    serve_pypi(server)
    server.add("/files/demo-1.0.tar.gz", SDIST, **{"X-Drip": "0.3"})
    monkeypatch.setenv("CONTEXT_DOWNLOAD_DEADLINE", "1")
    started = time.monotonic()
    with pytest.raises(SourceError, match=r"^download of demo 1.0 sdist: took longer than 1 s in all; stopped$"):
        fetch_pypi("demo", "1.0", index_url=server.url)
    assert time.monotonic() - started < 4
    assert leftovers(isolated) == []


# ---- npm ---------------------------------------------------------------------------------


def serve_npm(server: Server, name: str, tarballs: dict[str, bytes], *, tags=None, tamper=False) -> None:
    versions = {}
    for version, data in tarballs.items():
        path = f"/tarballs/{name.replace('/', '-')}-{version}.tgz"
        server.add(path, flip_last_byte(data) if tamper else data)
        sri = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        versions[version] = {"name": name, "version": version, "description": f"{name} {version}",
                             "dist": {"tarball": server.url + path, "integrity": sri,
                                      "shasum": hashlib.sha1(data).hexdigest()}}
    doc = {"name": name, "description": "top", "versions": versions,
           "dist-tags": tags or {"latest": list(tarballs)[-1]}}
    server.add("/" + name.replace("/", "%2F"), doc)


NPM_WITH_DOCS = targz({"package/package.json": "{}", "package/README.md": "# r\n",
                       "package/docs/guide.md": "# Guide\n"})
NPM_README_ONLY = targz({"package/package.json": "{}", "package/Readme.markdown": "# r\n",
                         "package/index.js": ""})


def test_fetch_npm_latest_with_docs_folder(server, isolated):
    serve_npm(server, "demo", {"1.0.0": NPM_README_ONLY, "1.1.0": NPM_WITH_DOCS})
    fetched = fetch_npm("demo", registry_url=server.url)
    assert (fetched.source_type, fetched.source_url, fetched.registry) == ("npm", "npm:demo@1.1.0", "npm")
    assert fetched.folder is not None and fetched.folder.name == "package"
    assert fetched.docs_path == "docs"
    assert fetched.description == "demo 1.1.0"
    assert "(sha512 verified)" in fetched.notes[0]
    fetched.cleanup()
    assert leftovers(isolated) == []


def test_npm_readme_fallback_dist_tags_and_scopes(server, monkeypatch):
    serve_npm(server, "@scope/pkg", {"2.0.0": NPM_README_ONLY, "3.0.0-beta.1": NPM_WITH_DOCS},
              tags={"latest": "2.0.0", "next": "3.0.0-beta.1"})
    monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", server.url)
    fetched = fetch_artefact("npm:@scope/pkg")
    assert (fetched.version, fetched.docs_path) == ("2.0.0", "Readme.markdown")
    assert fetched.name == "@scope/pkg" and fetched.source_url == "npm:@scope/pkg@2.0.0"
    fetched.cleanup()
    fetched = fetch_artefact("npm:@scope/pkg@next")
    assert fetched.version == "3.0.0-beta.1"
    fetched.cleanup()
    assert "/@scope%2Fpkg" in server.log


def test_npm_shasum_used_when_no_integrity(server):
    serve_npm(server, "old", {"0.1.0": NPM_WITH_DOCS})
    doc = json.loads(server.routes["/old"][1])
    del doc["versions"]["0.1.0"]["dist"]["integrity"]
    server.add("/old", doc)
    fetched = fetch_npm("old", registry_url=server.url)
    assert "(sha1 verified)" in fetched.notes[0]
    fetched.cleanup()


def test_npm_integrity_mismatch(server, isolated):
    serve_npm(server, "demo", {"1.0.0": NPM_WITH_DOCS}, tamper=True)
    with pytest.raises(SourceError, match=r"^demo@1.0.0 tarball: sha512 checksum mismatch"):
        fetch_npm("demo", registry_url=server.url)
    assert leftovers(isolated) == []


def test_npm_not_found(server, isolated):
    serve_npm(server, "demo", {"1.0.0": NPM_WITH_DOCS})
    with pytest.raises(SourceError, match=r"^no such package on npm: nope$"):
        fetch_npm("nope", registry_url=server.url)
    with pytest.raises(SourceError, match=r"^no version 9.9.9 of demo on npm$"):
        fetch_npm("demo", "9.9.9", registry_url=server.url)
    assert leftovers(isolated) == []


@pytest.mark.parametrize("doc", [[], "text", {"versions": ["1.0.0"]}, {"versions": {}, "dist-tags": ["x"]}])
def test_npm_document_of_another_shape_is_one_clear_error(server, isolated, doc):
    server.add("/odd", json.dumps(doc).encode())
    with pytest.raises(SourceError, match=r"^no version latest of odd on npm$"):
        fetch_npm("odd", registry_url=server.url)
    assert leftovers(isolated) == []


def test_npm_version_chosen_from_the_one_document_it_fetches(server):
    serve_npm(server, "demo", {"1.0.0": NPM_WITH_DOCS, "1.2.0": NPM_WITH_DOCS})
    seen = []
    fetched = fetch_npm("demo", registry_url=server.url, choose=lambda versions, tags: seen.append(versions) or "1.0.0")
    assert fetched.version == "1.0.0" and sorted(seen[0]) == ["1.0.0", "1.2.0"]
    assert server.log.count("/demo") == 1
    fetched.cleanup()


def test_hostile_npm_tarball(server, isolated):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("package/README.md")
        info.type = tarfile.SYMTYPE
        info.linkname = "/etc/passwd"
        tf.addfile(info)
    serve_npm(server, "evil", {"1.0.0": buf.getvalue()})
    with pytest.raises(SourceError, match=r"link 'package/README.md' points outside"):
        fetch_npm("evil", registry_url=server.url)
    assert leftovers(isolated) == []


# ---- specs -------------------------------------------------------------------------------


@pytest.mark.parametrize("spec,parsed", [
    ("pypi:flask", ("pypi", "flask", None)),
    ("pypi:flask==3.0.0", ("pypi", "flask", "3.0.0")),
    ("pypi:zope.interface==6.0", ("pypi", "zope.interface", "6.0")),
    ("npm:zod", ("npm", "zod", None)),
    ("npm:zod@3.23.8", ("npm", "zod", "3.23.8")),
    ("npm:@scope/pkg", ("npm", "@scope/pkg", None)),
    ("npm:@scope/pkg@1.2.3", ("npm", "@scope/pkg", "1.2.3")),
    ("npm:react@next", ("npm", "react", "next")),
])
def test_parse_artefact_spec(spec, parsed):
    assert parse_artefact_spec(spec) == parsed


@pytest.mark.parametrize("spec,message", [
    ("pypi:", "'' is not a valid pypi package name"),
    ("pypi:../etc==1", "'../etc' is not a valid pypi package name"),
    ("npm:zod@", "'' is not a valid version"),
    ("npm:zod@1.0/../../x", "is not a valid version"),
    ("cargo:serde", "is not an artefact spec"),
])
def test_bad_artefact_specs(spec, message):
    with pytest.raises(SourceError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_artefact_spec(spec)


def test_add_pypi_files_the_package_under_pip(server, isolated, monkeypatch, tmp_path):
    """`context add pypi:demo==1.0` lines up with registry installs: filed under `pip`, not `local`."""
    from context_cli.adding import AddRequest, add_source
    from context_cli.store.store import Store

    serve_pypi(server, sdist=targz({
        "demo-1.0/PKG-INFO": "Name: demo\nVersion: 1.0\n",
        "demo-1.0/docs/index.md": "# Demo docs\n\n## Streams\n\nOpen a stream, read its events as they arrive, "
                                  "and close it when you are done; closing stops the stream at once.\n",
    }))
    monkeypatch.setenv("CONTEXT_PYPI_URL", server.url)
    store = Store(tmp_path / "packages")
    result = add_source(AddRequest(source="pypi:demo==1.0", embed=False), store=store)
    assert result.installed.id.qualified == "pip/demo@1.0"
    assert store.resolve("pip/demo").id.version == "1.0"
