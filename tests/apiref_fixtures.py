"""Real releases unpacked for the API-reference tests (tests/fixtures/apiref/README.md)."""

from __future__ import annotations

import base64
import hashlib
import json
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from route_server import Routes, serving

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "apiref"


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write `files` (relative path -> text) under `root`; return `root`."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, "utf-8")
    return root


def unpack_sdist(name: str, dest: Path) -> Path:
    """Unpack `tests/fixtures/apiref/NAME.tar.gz` under `dest`; return its top folder."""
    with tarfile.open(FIXTURES / f"{name}.tar.gz") as tar:
        tar.extractall(dest, filter="data")
    return dest / name


def serve_pypi(srv: Routes, name: str = "itsdangerous", versions: tuple[str, ...] = ("2.1.2", "2.2.0")) -> None:
    """`name` on a loopback PyPI (route_server.Routes) with the fixture sdists of `versions`."""
    releases = {}
    for v in versions:
        data = (FIXTURES / f"{name}-{v}.tar.gz").read_bytes()
        path = f"/files/{name}-{v}.tar.gz"
        srv.add(path, data)
        releases[v] = [{"filename": f"{name}-{v}.tar.gz", "packagetype": "sdist", "url": srv.url + path,
                        "yanked": False, "digests": {"sha256": hashlib.sha256(data).hexdigest()}}]
    srv.add(f"/pypi/{name}/json", {"info": {"name": name, "summary": f"{name} from the fixtures",
                                            "version": versions[-1]}, "releases": releases})


@pytest.fixture
def pypi(monkeypatch: pytest.MonkeyPatch) -> Iterator[Routes]:
    """A loopback PyPI serving the itsdangerous fixtures (CONTEXT_PYPI_URL points at it)."""
    with serving(Routes()) as srv:
        serve_pypi(srv)
        monkeypatch.setenv("CONTEXT_PYPI_URL", srv.url)
        yield srv


def install_release(store_root: Path, version: str, scratch: Path, *, api: bool = True) -> Path:
    """Build the itsdangerous `version` fixture as `context add pypi:` would and install it
    (without `api`: as a build from before packages carried their API)."""
    from context_cli.build import BuildOptions, build
    from context_cli.sources.base import Fetched
    from context_cli.store.store import Store

    root = unpack_sdist(f"itsdangerous-{version}", scratch / version)
    fetched = Fetched(source_type="pypi", source_url=f"pypi:itsdangerous=={version}", folder=root, docs_path="docs",
                      code=root, name="itsdangerous", version=version, registry="pip")
    built = build(fetched, scratch / f"itsdangerous-{version}.db", BuildOptions(embed=False, registry="pip", api=api))
    return Store(store_root).install(built.path).path


def serve_npm(srv: Routes, name: str, version: str, tarball: str | bytes) -> None:
    """`name@version` on a loopback npm registry, its tarball the fixture file `tarball` (or
    these bytes)."""
    data = tarball if isinstance(tarball, bytes) else (FIXTURES / tarball).read_bytes()
    path = f"/tarballs/{name.replace('/', '__')}-{version}.tgz" if isinstance(tarball, bytes) else f"/tarballs/{tarball}"
    srv.add(path, data)
    sri = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    doc_path = "/" + name.replace("/", "%2F")
    served = json.loads(srv.routes[doc_path]) if doc_path in srv.routes else {"versions": {}}  # (a version more)
    srv.add(doc_path, {
        "name": name, "dist-tags": {"latest": version},
        "versions": {**served["versions"],
                     version: {"name": name, "version": version, "dist": {"tarball": srv.url + path, "integrity": sri}}}})


@pytest.fixture
def npm(monkeypatch: pytest.MonkeyPatch) -> Iterator[Routes]:
    """A loopback npm registry with p-limit 5.0.0, ms 2.1.3 and @types/ms 2.1.0, and the scoped
    @babel/code-frame 7.24.7 with its @types/babel__code-frame 7.27.0."""
    with serving(Routes()) as srv:
        serve_npm(srv, "p-limit", "5.0.0", "p-limit-5.0.0.tgz")
        serve_npm(srv, "ms", "2.1.3", "ms-2.1.3.tgz")
        serve_npm(srv, "@types/ms", "2.1.0", "types-ms-2.1.0.tgz")
        serve_npm(srv, "@babel/code-frame", "7.24.7", "babel-code-frame-7.24.7.tgz")
        serve_npm(srv, "@types/babel__code-frame", "7.27.0", "types-babel__code-frame-7.27.0.tgz")
        monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", srv.url)
        yield srv


def npm_tarball(files: dict[str, str]) -> bytes:
    """An npm tarball of `files` (paths inside its `package/` folder -> text)."""
    import io

    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for rel, text in files.items():
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"package/{rel}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()
