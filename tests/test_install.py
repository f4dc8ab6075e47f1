"""`context install` / `update` and the registry client, against real and misbehaving servers."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner
from registry_fixtures import (  # noqa: F401
    AUTH,
    PEER_PACKAGE,
    FakeServer,
    ServerProcess,
    free_port,
    http_response,
    live_server,
    make_package,
    package_url,
)

from context_cli.errors import RegistryError
from context_cli.remote import client as remote
from context_cli.remote.config import DEFAULT_SERVERS, Server, get_server, load_servers, save_servers
from context_cli.store.store import Store
from context_cli.surfaces.cli import cli


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private CONTEXT_HOME, no registry URL override, and fast retries."""
    monkeypatch.setenv("CONTEXT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CONTEXT_REGISTRY_URL", raising=False)
    monkeypatch.setattr(remote, "BACKOFF", 0.01)
    return tmp_path / "home"


@pytest.fixture
def server(live_server, monkeypatch, tmp_path):
    """The live server, made the default, holding zod 3.0.0 and 3.1.0 and @trpc/server 10.0.0."""
    monkeypatch.setenv("CONTEXT_REGISTRY_URL", live_server.url)
    for name, version in [("zod", "3.0.0"), ("zod", "3.1.0"), ("@trpc/server", "10.0.0")]:
        push(live_server, make_package(tmp_path / f"{name[-3:]}{version}.db", name, version), name, version)
    return live_server


def push(server: ServerProcess, pkg: Path, name: str, version: str, registry: str = "npm") -> None:
    r = requests.post(server.url + package_url(registry, name, version), data=pkg.read_bytes(),
                      headers=AUTH, timeout=10)
    assert r.status_code in (200, 201), r.text


def store_files(home: Path) -> list[str]:
    folder = home / "packages"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


# -- against the real server ----------------------------------------------------------

def test_install_newest_version(server, home):
    inst = remote.download_and_install("npm", "zod")
    assert inst.id.qualified == "npm/zod@3.1.0"
    assert [i.id.qualified for i in Store().installed()] == ["npm/zod@3.1.0"]
    assert not [n for n in store_files(home) if n.startswith(".")]


def test_install_a_specific_version_and_scoped_name(server):
    assert remote.download_and_install("npm", "zod", "3.0.0").id.version == "3.0.0"
    assert remote.download_and_install("npm", "@trpc/server").id.name == "@trpc/server"
    assert {i.id.qualified for i in Store().installed()} == {"npm/zod@3.0.0", "npm/@trpc/server@10.0.0"}


def test_install_peer_package(server, tmp_path):
    push(server, PEER_PACKAGE, "anthropic-docs", "2024.7.0")
    inst = remote.download_and_install("npm", "anthropic-docs")
    assert inst.id.qualified == "npm/anthropic-docs@2024.7.0"
    assert Store().resolve("anthropic-docs").path.read_bytes() == PEER_PACKAGE.read_bytes()


def test_search_and_info(server):
    assert [e["version"] for e in remote.search_remote("npm", "zod")] == ["3.1.0", "3.0.0"]
    assert remote.search_remote("npm", "nothing") == []
    info = remote.package_info("npm", "zod", "3.0.0")
    assert info["version"] == "3.0.0" and len(info["sha256"]) == 64
    with pytest.raises(remote.PackageNotFound):
        remote.package_info("npm", "zod", "9.9.9")


def test_unknown_package_and_version(server, home):
    with pytest.raises(remote.PackageNotFound, match="npm/nothing is not on"):
        remote.download_and_install("npm", "nothing")
    with pytest.raises(remote.PackageNotFound, match="zod@9.9.9"):
        remote.download_and_install("npm", "zod", "9.9.9")
    assert store_files(home) == []


def test_progress_is_reported(server):
    seen: list[tuple[int, int | None]] = []
    remote.download_and_install("npm", "zod", progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1]


def test_update_installs_newer_versions(server, tmp_path):
    remote.download_and_install("npm", "zod", "3.0.0")
    remote.download_and_install("npm", "@trpc/server")
    pairs = remote.update_all(["zod"])
    assert [(o.id.version, n.id.version) for o, n in pairs] == [("3.0.0", "3.1.0")]
    push(server, make_package(tmp_path / "t11.db", "@trpc/server", "11.0.0"), "@trpc/server", "11.0.0")
    pairs = remote.update_all()
    assert [(o.id.name, n.id.version) for o, n in pairs] == [("@trpc/server", "11.0.0")]
    assert remote.update_all() == []
    assert {i.id.qualified for i in Store().installed()} == {  # older versions stay
        "npm/zod@3.0.0", "npm/zod@3.1.0", "npm/@trpc/server@10.0.0", "npm/@trpc/server@11.0.0"}


def test_update_moves_latest(server, tmp_path):
    push(server, make_package(tmp_path / "l1.db", "docs", "latest", text="one"), "docs", "latest")
    remote.download_and_install("npm", "docs")
    assert remote.update_all(["npm/docs"]) == []
    push(server, make_package(tmp_path / "l2.db", "docs", "latest", text="two"), "docs", "latest")
    pairs = remote.update_all(["docs"])
    assert len(pairs) == 1
    assert b"two" in Store().resolve("docs").path.read_bytes()


def test_update_unknown_name(server):
    with pytest.raises(Exception, match="not installed"):
        remote.update_all(["nothing"])


# -- the command line -----------------------------------------------------------------

def test_cli_install_and_update(server):
    r = run("install", "npm/zod@3.0.0")
    assert r.exit_code == 0 and r.output.startswith("Installed npm/zod@3.0.0 (")
    r = run("install", "npm/@trpc/server")
    assert r.exit_code == 0 and "npm/@trpc/server@10.0.0" in r.output
    r = run("update")
    assert r.exit_code == 0 and r.output == "Updated npm/zod 3.0.0 -> 3.1.0\n"
    r = run("update")
    assert r.exit_code == 0 and r.output == "Everything is up to date.\n"


def test_cli_errors_are_one_line(server):
    for args, text in [(["install", "zod"], "say which registry"),
                       (["install", "npm/nothing"], "npm/nothing is not on"),
                       (["install", "npm/../x"], "invalid package name"),
                       (["install", "npm/zod", "--server", "nope"], "no registry server named 'nope'"),
                       (["update", "nothing"], "not installed")]:
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 1, (args, r.output)
        assert r.output.startswith("Error: ") and text in r.output and r.output.count("\n") == 1
        assert "Traceback" not in r.output


def test_cli_server_from_config(live_server, home, tmp_path):
    push(live_server, make_package(tmp_path / "z.db", "zod", "3.0.0"), "zod", "3.0.0")
    save_servers([Server("main", "http://127.0.0.1:9", default=True), Server("mine", live_server.url)])
    r = run("install", "npm/zod", "--server", "mine")
    assert r.exit_code == 0, r.output


# -- misbehaving servers --------------------------------------------------------------

def fake_registry(pkg: Path, download) -> FakeServer:
    """A /search answer for `pkg` (npm/zod 3.1.0) and downloads from `download()`."""
    sha = hashlib.sha256(pkg.read_bytes()).hexdigest()
    entry = json.dumps([{"name": "zod", "registry": "npm", "version": "3.1.0", "sha256": sha}]).encode()

    def handler(method: str, path: str) -> list[bytes]:
        if path.startswith("/search"):
            return [http_response(200, entry, {"Content-Type": "application/json"})]
        if path.endswith("/download"):
            return download()
        return [http_response(404, b'{"error": "not found"}')]

    return FakeServer(handler)


@pytest.fixture
def installed_old(home, tmp_path) -> Path:
    """zod 3.0.0 installed from the start: failures must leave it alone."""
    return Store().install(make_package(tmp_path / "old.db", "zod", "3.0.0"), registry="npm").path


def assert_untouched(home: Path, old: Path, old_bytes: bytes) -> None:
    assert store_files(home) == [old.name]
    assert old.read_bytes() == old_bytes


def test_connection_cut_mid_download(home, tmp_path, installed_old, monkeypatch):
    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    data, before = pkg.read_bytes(), installed_old.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    cut = lambda: [http_response(200, data[: len(data) // 2], {"X-Content-SHA256": sha},  # noqa: E731
                                 content_length=len(data))]
    with fake_registry(pkg, cut) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        with pytest.raises(RegistryError, match="interrupted|cut short") as e:
            remote.download_and_install("npm", "zod")
        assert fake.url in str(e.value) and "nothing was installed" in str(e.value)
        r = CliRunner().invoke(cli, ["install", "npm/zod"])
        assert r.exit_code == 1 and r.output.count("\n") == 1
        assert remote.update_all(on_error=lambda old, err: None) == []
    assert_untouched(home, installed_old, before)


def test_tampered_bytes_are_refused(home, tmp_path, installed_old, monkeypatch):
    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    evil = make_package(tmp_path / "evil.db", "zod", "3.1.0", text="malicious")
    before = installed_old.read_bytes()
    sha = hashlib.sha256(pkg.read_bytes()).hexdigest()
    with_header = lambda: [http_response(200, evil.read_bytes(), {"X-Content-SHA256": sha})]  # noqa: E731
    without_header = lambda: [http_response(200, evil.read_bytes())]  # noqa: E731
    for download in (with_header, without_header):  # the search entry's sha256 still guards
        with fake_registry(pkg, download) as fake:
            monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
            with pytest.raises(RegistryError, match="checksum mismatch"):
                remote.download_and_install("npm", "zod")
    assert_untouched(home, installed_old, before)


def test_wrong_package_or_junk_is_refused(home, tmp_path, installed_old, monkeypatch):
    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    other = make_package(tmp_path / "other.db", "react", "3.1.0")
    before = installed_old.read_bytes()
    for body, text in [(other.read_bytes(), "sent react@3.1.0"), (b"junk" * 10, "not a valid package")]:
        with FakeServer(lambda m, p, b=body: [http_response(200, b)]) as fake:
            monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
            with pytest.raises(RegistryError, match=text):
                remote.download_and_install("npm", "zod", "3.1.0")
    assert_untouched(home, installed_old, before)
    assert pkg.exists()


def test_503_then_200_with_retry_after(home, tmp_path, monkeypatch):
    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    calls = {"n": 0}

    def flaky() -> list[bytes]:
        calls["n"] += 1
        if calls["n"] == 1:
            return [http_response(503, b'{"error": "busy"}', {"Retry-After": "1"})]
        return [http_response(200, pkg.read_bytes())]

    with fake_registry(pkg, flaky) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        assert remote.download_and_install("npm", "zod").id.version == "3.1.0"
    assert calls["n"] == 2


def test_persistent_5xx_gives_up_and_4xx_is_not_retried(home, monkeypatch):
    with FakeServer(lambda m, p: [http_response(500, b'{"error": "database on fire"}')]) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        with pytest.raises(RegistryError, match="500 \\(database on fire\\)"):
            remote.search_remote("npm", "zod")
        assert len(fake.requests) == remote.ATTEMPTS
    with FakeServer(lambda m, p: [http_response(400, b'{"error": "bad name"}')]) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        with pytest.raises(RegistryError, match="400 bad name"):
            remote.search_remote("npm", "zod")
        assert len(fake.requests) == 1
    with FakeServer(lambda m, p: [http_response(429, b"", {"Retry-After": "3600"})]) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        with pytest.raises(RegistryError, match="retry in 3600 s"):
            remote.search_remote("npm", "zod")
        assert len(fake.requests) == 1


def test_unreachable_server_names_its_url(home, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}"
    monkeypatch.setenv("CONTEXT_REGISTRY_URL", url)
    with pytest.raises(RegistryError, match=f"cannot reach registry server {url}: connection refused"):
        remote.download_and_install("npm", "zod")
    r = CliRunner().invoke(cli, ["install", "npm/zod"])
    assert r.exit_code == 1 and url in r.output and r.output.count("\n") == 1
    assert "the URL comes from CONTEXT_REGISTRY_URL: change or unset it" in r.output


def test_unreachable_configured_server_names_the_command_that_changes_it(home, monkeypatch):
    url = f"http://127.0.0.1:{free_port()}"
    assert run("server", "add", "team", url, "--default").exit_code == 0
    for args in (["install", "npm/zod"], ["update"]):
        if args == ["update"]:
            Store().install(make_package(home.parent / "z.db", "zod", "3.0.0"), registry="npm")
        r = CliRunner().invoke(cli, args)
        assert r.exit_code == 1, r.output
        assert f"cannot reach registry server {url}: connection refused; to use another: " \
               "`context server add NAME URL --default`" in " ".join(r.output.split())


def test_install_of_a_missing_version_lists_the_versions_the_server_has(server, home):
    r = CliRunner().invoke(cli, ["install", "npm/zod@9.9.9"])
    assert r.exit_code == 1 and r.output.count("\n") == 1
    assert "npm/zod@9.9.9 is not on " in r.output and "; it has 3.1.0, 3.0.0" in r.output
    r = CliRunner().invoke(cli, ["install", "npm/nothing@1.0"])
    assert r.exit_code == 1 and "nor any version of npm/nothing" in r.output
    assert store_files(home) == []


def _leftovers(home: Path) -> list[str]:
    folder = home / "packages"
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) if folder.exists() else []


def test_download_without_length_is_capped(home, tmp_path, installed_old, monkeypatch):
    """No Content-Length: the body is cut off at the configured cap, not streamed forever."""
    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    before = installed_old.read_bytes()
    endless = lambda: [http_response(200, b"", content_length=""), *([b"x" * 65536] * 64)]  # noqa: E731
    monkeypatch.setenv("CONTEXT_MAX_DOWNLOAD_BYTES", "300000")
    with fake_registry(pkg, endless) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        with pytest.raises(RegistryError, match=r"larger than 300000 bytes; stopped; nothing was installed"):
            remote.download_and_install("npm", "zod", "3.1.0")
    assert_untouched(home, installed_old, before)
    assert _leftovers(home) == []


def test_the_listed_size_caps_the_download(home, tmp_path, installed_old, monkeypatch):
    """The search entry says how big the file is: a longer body is refused at that size."""
    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    data, before = pkg.read_bytes(), installed_old.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    entry = json.dumps([{"name": "zod", "registry": "npm", "version": "3.1.0", "sha256": sha,
                         "size": 1000}]).encode()

    def handler(method: str, path: str) -> list[bytes]:
        if path.startswith("/search"):
            return [http_response(200, entry, {"Content-Type": "application/json"})]
        return [http_response(200, data, content_length="")]

    with FakeServer(handler) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        with pytest.raises(RegistryError, match="larger than 1000 bytes"):
            remote.download_and_install("npm", "zod")
    assert_untouched(home, installed_old, before)


def test_an_encoding_not_asked_for_is_refused(home, tmp_path, installed_old, monkeypatch):
    """identity is asked for; a gzip answer (a 200 KB stand-in for 200 MB) is never decoded."""
    import gzip

    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    before = installed_old.read_bytes()
    bomb = gzip.compress(b"\0" * (20 * 1024 * 1024))
    gz = lambda: [http_response(200, bomb, {"Content-Encoding": "gzip"})]  # noqa: E731
    with fake_registry(pkg, gz) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        with pytest.raises(RegistryError, match="'gzip'-encoded data although identity was asked for"):
            remote.download_and_install("npm", "zod")
        assert all(h.get("accept-encoding") == "identity" for h in fake.headers)
    assert_untouched(home, installed_old, before)


def test_a_dripping_server_meets_the_overall_deadline(home, tmp_path, installed_old, monkeypatch):
    """One byte every 0.3 s never trips a per-read timeout; the 2 s deadline stops it."""
    import time

    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    before = installed_old.read_bytes()

    def drip():
        yield http_response(200, b"", content_length=100_000)
        for _ in range(100):
            time.sleep(0.3)
            yield b"x"

    monkeypatch.setenv("CONTEXT_DOWNLOAD_DEADLINE", "2")
    with fake_registry(pkg, drip) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        start = time.monotonic()
        with pytest.raises(RegistryError, match="took longer than 2 s in all"):
            remote.download_and_install("npm", "zod")
        assert time.monotonic() - start < 5
    assert_untouched(home, installed_old, before)


@pytest.mark.parametrize("length", ["\u00b2", "-1", "12abc", "1e3"])
def test_an_unreadable_content_length_is_one_clear_error(home, tmp_path, installed_old, monkeypatch, length):
    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    before = installed_old.read_bytes()
    odd = lambda: [http_response(200, pkg.read_bytes(), content_length=length)]  # noqa: E731
    with fake_registry(pkg, odd) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        with pytest.raises(RegistryError, match="unreadable Content-Length"):
            remote.download_and_install("npm", "zod")
        r = CliRunner().invoke(cli, ["install", "npm/zod"])
        assert r.exit_code == 1 and r.output.count("\n") == 1 and "Traceback" not in r.output
    assert_untouched(home, installed_old, before)


def test_an_endless_search_answer_is_cut_off(home, monkeypatch):
    """JSON answers are read within a cap too (16 MiB): a server streaming `[` forever fails."""
    endless = [http_response(200, b"", {"Content-Type": "application/json"}, content_length=""),
               *([b"[" * (1 << 20)] * 17)]
    with FakeServer(lambda m, p: endless) as fake:
        monkeypatch.setenv("CONTEXT_REGISTRY_URL", fake.url)
        with pytest.raises(RegistryError, match=r"answered badly .*: larger than 16777216 bytes; stopped$"):
            remote.search_remote("npm", "zod")


# -- config.json ----------------------------------------------------------------------

def test_config_defaults_and_file(home, monkeypatch):
    assert load_servers() == list(DEFAULT_SERVERS) and get_server().name == "neuledge"
    (home).mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"servers": [
        {"name": "a", "url": "https://a.example/"}, {"name": "b", "url": "http://b.example", "default": True}]}))
    assert get_server() == Server("b", "http://b.example", True)
    assert get_server("a").url == "https://a.example"
    monkeypatch.setenv("CONTEXT_REGISTRY_URL", "http://127.0.0.1:1234")
    assert get_server().url == "http://127.0.0.1:1234" and get_server("a").url == "https://a.example"
    with pytest.raises(RegistryError, match="configured: a, b"):
        get_server("zzz")


@pytest.mark.parametrize("text", ["{", "[]", '{"servers": [{"name": "x"}]}',
                                  '{"servers": [{"name": "x", "url": "ftp://x"}]}'])
def test_config_errors_are_clear(home, text):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(text)
    with pytest.raises(RegistryError, match="config.json"):
        get_server()


def test_save_servers_keeps_other_keys(home):
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text('{"servers": [], "other": 1}')
    save_servers([Server("x", "http://x.example", True)])
    data = json.loads((home / "config.json").read_text())
    assert data == {"servers": [{"name": "x", "url": "http://x.example", "default": True}], "other": 1}


def test_ctrl_c_during_an_install_exits_130_and_says_nothing_was_installed(home, tmp_path, installed_old):
    import os
    import signal
    import subprocess
    import sys
    import time

    pkg = make_package(tmp_path / "new.db", "zod", "3.1.0")
    data, before = pkg.read_bytes(), installed_old.read_bytes()

    def stalled():  # half the file, then nothing: the user gives up and presses Ctrl-C
        yield http_response(200, data[: len(data) // 2], content_length=len(data))
        time.sleep(30)

    with fake_registry(pkg, stalled) as fake:
        env = {**os.environ, "CONTEXT_HOME": str(home), "CONTEXT_REGISTRY_URL": fake.url}
        # A shell without job control starts background jobs with SIGINT ignored, and children
        # inherit that (Python then installs no KeyboardInterrupt handler): a CI runner's
        # suite, or one started with `&`, would send a Ctrl-C that nothing hears.
        proc = subprocess.Popen([sys.executable, "-m", "context_cli", "install", "npm/zod"], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        deadline = time.monotonic() + 30
        while not any(p.endswith("/download") for _, p in fake.requests) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.3)  # the client is reading the body now
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["Interrupted: nothing was installed."]
    assert_untouched(home, installed_old, before)
