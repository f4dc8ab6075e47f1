"""`context add` from hostile sources: npm/PyPI registries serving bad archives, docs sites
that lie, and redirects that fish for credentials. Real CLI, loopback servers only.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from . import hostile_archives as ha
from . import hostile_http as web
from .runner import StoreSnapshot, assert_good_package_searchable, assert_ok, assert_one_line_error, run

SECRET = "Bearer adversarial-s3cret"


def npm_routes(tarball: bytes) -> dict[str, web.Handler]:
    """A one-package npm registry: /evil (the packument) and the tarball, sha1 given."""
    def packument(r: web.Request) -> list[web.Part]:
        url = f"http://127.0.0.1:{r.port}/evil/-/evil-1.0.0.tgz"
        return web.json_reply({"name": "evil", "dist-tags": {"latest": "1.0.0"}, "versions": {"1.0.0": {
            "name": "evil", "version": "1.0.0",
            "dist": {"tarball": url, "shasum": hashlib.sha1(tarball).hexdigest()}}}})
    return {"/evil": packument, "/evil/-/evil-1.0.0.tgz": lambda r: web.reply(tarball)}


def pypi_routes(sdist: bytes) -> dict[str, web.Handler]:
    def project(r: web.Request) -> list[web.Part]:
        url = f"http://127.0.0.1:{r.port}/files/evil-1.0.0.zip"
        return web.json_reply({"info": {"name": "evil", "version": "1.0.0"}, "releases": {"1.0.0": [
            {"packagetype": "sdist", "filename": "evil-1.0.0.zip", "url": url,
             "digests": {"sha256": hashlib.sha256(sdist).hexdigest()}}]}})
    return {"/pypi/evil/json": project, "/files/evil-1.0.0.zip": lambda r: web.reply(sdist)}


def add_from(home: Path, tmp_path: Path, source: str, env: dict[str, str], *extra: str, timeout: float = 30):
    """`context add SOURCE` with its own TMPDIR, so leftovers can be seen."""
    tmp = tmp_path / "child-tmp"
    tmp.mkdir(exist_ok=True)
    o = run(["add", source, "--no-embed", *extra], home, timeout=timeout, env={**env, "TMPDIR": str(tmp)})
    return o, sorted(p.name for p in tmp.iterdir())


def test_harness_builds_an_honest_tarball(home: Path, tmp_path: Path) -> None:
    with web.HostileServer(npm_routes(ha.good_tgz())) as srv:
        o, left = add_from(home, tmp_path, "npm:evil", {"CONTEXT_NPM_REGISTRY_URL": srv.url})
    assert_ok(o)
    assert left == []
    assert_good_package_searchable(home)


@pytest.mark.parametrize("trick", list(ha.TARBALLS))
def test_hostile_tarball_refused(trick: str, home: Path, snapshot: StoreSnapshot, tmp_path: Path) -> None:
    with web.HostileServer(npm_routes(ha.TARBALLS[trick]())) as srv:
        o, left = add_from(home, tmp_path, "npm:evil", {"CONTEXT_NPM_REGISTRY_URL": srv.url})
    assert_one_line_error(o)
    snapshot.assert_unchanged(home)
    assert left == [], f"temporary files left behind: {left}"
    assert not Path("/tmp/context-adversarial-evil.md").exists()
    assert not Path("/tmp/context-adversarial-through.md").exists()


@pytest.mark.parametrize("bomb", [
    pytest.param(ha.longname_bomb, id="gnu_longname"),
    pytest.param(ha.pax_bomb, id="pax_header"),
])
def test_tar_header_bomb_bounded(bomb, home: Path, snapshot: StoreSnapshot, tmp_path: Path) -> None:
    with web.HostileServer(npm_routes(bomb())) as srv:
        o, left = add_from(home, tmp_path, "npm:evil", {"CONTEXT_NPM_REGISTRY_URL": srv.url})
    assert_one_line_error(o, rss_mb=200)
    snapshot.assert_unchanged(home)
    assert left == []


@pytest.mark.parametrize("sdist", [ha.zip_bomb, ha.zip_traversal], ids=["zip_bomb", "zip_traversal"])
def test_hostile_sdist_refused(sdist, home: Path, snapshot: StoreSnapshot, tmp_path: Path) -> None:
    with web.HostileServer(pypi_routes(sdist())) as srv:
        o, left = add_from(home, tmp_path, "pypi:evil", {"CONTEXT_PYPI_URL": srv.url})
    assert_one_line_error(o)
    snapshot.assert_unchanged(home)
    assert left == []


def test_npm_document_that_never_ends(home: Path, snapshot: StoreSnapshot, tmp_path: Path) -> None:
    """The packument itself streams for ever: capped (MAX_JSON_BYTES), refused in one line."""
    with web.HostileServer({"/evil": lambda r: web.endless({"Content-Type": "application/json"})}) as srv:
        o, _ = add_from(home, tmp_path, "npm:evil", {"CONTEXT_NPM_REGISTRY_URL": srv.url}, timeout=40)
    assert_one_line_error(o)
    snapshot.assert_unchanged(home)


@pytest.mark.parametrize("what", ["npm_tarball", "db_url", "web_page"])
def test_slow_drip_source_is_stopped(what: str, home: Path, snapshot: StoreSnapshot, tmp_path: Path) -> None:
    """Issue 32 #7: every download (artefacts, `.db` URLs, pages) keeps the minimum rate; here
    with a 3 s window (CONTEXT_DOWNLOAD_SLOW_SECONDS) so the drip is judged quickly."""
    body = ha.good_tgz() if what == "npm_tarball" else b"<html><body><h1>Docs</h1>" + b"<p>words</p>" * 500
    slow = {"CONTEXT_DOWNLOAD_SLOW_SECONDS": "3"}
    if what == "npm_tarball":
        routes = npm_routes(body)
        routes["/evil/-/evil-1.0.0.tgz"] = lambda r: web.drip(body, every=0.5)
        source, env = "npm:evil", {**slow}
    else:
        path = "/pkg.db" if what == "db_url" else "/docs/"
        kind = "application/octet-stream" if what == "db_url" else "text/html"
        routes = {path: lambda r: web.drip(body, every=0.5, headers={"Content-Type": kind})}
        source, env = path, slow
    with web.HostileServer(routes) as srv:
        if what == "npm_tarball":
            env["CONTEXT_NPM_REGISTRY_URL"] = srv.url
        else:
            source = srv.url + source
        o, left = add_from(home, tmp_path, source, env, "--name", "x", timeout=30)
    line = assert_one_line_error(o)
    assert "slower than" in line and o.seconds < 15, o
    snapshot.assert_unchanged(home)
    assert left == []


# -- docs sites -----------------------------------------------------------------------

def llms_site() -> dict[str, web.Handler]:
    """A site whose root llms.txt lists a page, and whose /missing/ answers 404."""
    def llms(r: web.Request) -> list[web.Part]:
        text = f"# Whole site\n\n- [Page](http://127.0.0.1:{r.port}/page.md): a page\n"
        return web.reply(text.encode(), headers={"Content-Type": "text/plain"})
    page = b"# Page\n\nSite-wide streaming cancellation page that is not what was asked for.\n"
    return {"/llms.txt": llms, "/page.md": lambda r: web.reply(page, headers={"Content-Type": "text/markdown"})}


def test_missing_docs_url_is_an_error(home: Path, snapshot: StoreSnapshot, tmp_path: Path) -> None:
    with web.HostileServer(llms_site()) as srv:
        o, _ = add_from(home, tmp_path, f"{srv.url}/missing/", {}, "--name", "x")
    assert_one_line_error(o)
    snapshot.assert_unchanged(home)


def test_docs_site_unicode_content_length(home: Path, snapshot: StoreSnapshot, tmp_path: Path) -> None:
    page = b"<html><head><title>Docs</title></head><body><h1>Docs</h1><p>streaming words</p></body></html>"
    routes = {"/docs/": lambda r: [web.head(200, {"Content-Type": "text/html"}, length="\u00b2"), page]}
    with web.HostileServer(routes) as srv:
        o, _ = add_from(home, tmp_path, f"{srv.url}/docs/", {}, "--name", "x")
    if o.rc != 0:
        assert_one_line_error(o)
        snapshot.assert_unchanged(home)


def _auth_add(home: Path) -> None:
    assert_ok(run(["auth", "add", "127.0.0.1", "--header", f"Authorization: {SECRET}",
                   "--cookies", "session=adversarial-cookie"], home, timeout=20))


def _credentials_in(requests: list[web.Request]) -> list[str]:
    return [f"{r.port}{r.path}" for r in requests
            if "adversarial" in r.headers.get("authorization", "") + r.headers.get("cookie", "")]


def test_credentials_do_not_follow_redirect_to_other_port(home: Path, tmp_path: Path) -> None:
    _auth_add(home)
    page = b"# Other\n\nA page on another port.\n"
    with web.HostileServer({"*": lambda r: web.reply(page, headers={"Content-Type": "text/markdown"})}) as other:
        with web.HostileServer({"/docs/guide.md": lambda r: web.redirect(f"{other.url}/guide.md")}) as first:
            add_from(home, tmp_path, f"{first.url}/docs/guide.md", {}, "--name", "x")
        leaked = _credentials_in(other.requests)
    assert leaked == [], f"credentials sent to another port: {leaked}"


def test_credentials_not_sent_over_plain_http(home: Path, tmp_path: Path) -> None:
    _auth_add(home)
    page = b"# Page\n\nPlain http page.\n"
    with web.HostileServer({"*": lambda r: web.reply(page, headers={"Content-Type": "text/markdown"})}) as srv:
        add_from(home, tmp_path, f"{srv.url}/guide.md", {}, "--name", "x")
        leaked = _credentials_in(srv.requests)
    assert leaked == [], f"credentials sent over http: {leaked}"


def test_auth_file_is_private(home: Path) -> None:
    """auth.json holds secrets: mode 0600, and `auth list` masks the values."""
    _auth_add(home)
    assert (home / "auth.json").stat().st_mode & 0o077 == 0
    o = run(["auth", "list", "--json"], home, timeout=20)
    assert_ok(o)
    assert "s3cret" not in o.stdout and "adversarial-cookie" not in o.stdout
    json.loads(o.stdout)
