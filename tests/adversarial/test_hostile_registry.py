"""`context install` against a hostile registry server: bounded, one line, nothing installed.

The server is ours to script (hostile_http.py); the client is the real CLI in a child
process pointed at it with CONTEXT_REGISTRY_URL. A file-size limit (`ulimit -f`) on the
child keeps an unbounded download from filling the disk while the defect stands.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from . import hostile_http as web
from . import hostile_packages as hp
from .runner import (
    StoreSnapshot,
    assert_good_package_searchable,
    assert_ok,
    assert_one_line_error,
    finish,
    listed,
    run,
    spawn,
)

DOWNLOAD = "/packages/npm/alpha/1.0.0/download"
SPEC = "npm/alpha@1.0.0"


def install(home: Path, url: str, *, timeout: float = 20, fsize: int | None = None, spec: str = SPEC,
            env: dict[str, str] | None = None):
    return run(["install", spec], home, timeout=timeout, env={"CONTEXT_REGISTRY_URL": url, **(env or {})}, fsize=fsize)


@pytest.fixture
def alpha(tmp_path: Path) -> bytes:
    """The bytes of a real npm/alpha@1.0.0."""
    return hp.base_package(tmp_path / "alpha.db", name="alpha", registry="npm").read_bytes()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_harness_installs_from_an_honest_answer(home: Path, alpha: bytes) -> None:
    """The raw server answering correctly installs: the refusals below are about the attack."""
    with web.HostileServer({DOWNLOAD: lambda r: web.reply(alpha, headers={"X-Content-SHA256": sha(alpha)})}) as srv:
        assert_ok(install(home, srv.url))
    assert_good_package_searchable(home)
    assert (home / "packages" / "npm__alpha__1.0.0.db").read_bytes() == alpha


@pytest.mark.parametrize("answer", ["wrong_checksum", "other_package", "cut_short", "html", "server_error"])
def test_bad_download_refused(answer: str, home: Path, snapshot: StoreSnapshot, alpha: bytes, tmp_path: Path) -> None:
    beta = hp.base_package(tmp_path / "beta.db", name="beta", registry="npm").read_bytes()
    replies = {
        "wrong_checksum": lambda r: web.reply(alpha, headers={"X-Content-SHA256": sha(b"other")}),
        "other_package": lambda r: web.reply(beta, headers={"X-Content-SHA256": sha(beta)}),
        "cut_short": lambda r: [web.head(200, length=len(alpha)), alpha[:1000]],
        "html": lambda r: web.reply(b"<html>" + b"<p>hi</p>" * 1000, headers={"Content-Type": "text/html"}),
        "server_error": lambda r: web.json_reply({"error": "boom " * 10_000}, 500),
    }
    with web.HostileServer({DOWNLOAD: replies[answer]}) as srv:
        assert_one_line_error(install(home, srv.url))
    snapshot.assert_unchanged(home)


def test_endless_download_is_capped(home: Path, snapshot: StoreSnapshot) -> None:
    """No declared size: the configured cap (CONTEXT_MAX_DOWNLOAD_BYTES) ends it."""
    with web.HostileServer({DOWNLOAD: lambda r: web.endless()}) as srv:
        # 256 MiB of file size at most: a missing cap ends in EFBIG instead of filling the disk
        o = install(home, srv.url, timeout=25, fsize=256 * 1024 * 1024,
                    env={"CONTEXT_MAX_DOWNLOAD_BYTES": str(64 * 1024 * 1024)})
        sent = srv.sent
    assert_one_line_error(o)
    assert sent < 300 * 1024 * 1024
    snapshot.assert_unchanged(home)


def test_endless_search_answer_is_bounded(home: Path, snapshot: StoreSnapshot) -> None:
    """`context install npm/alpha` (no version) asks /search first; that answer streams for ever
    (throttled to 16 MB/s so the defect costs memory slowly)."""
    def endless_json(r: web.Request) -> Iterator[web.Part]:
        return web.endless({"Content-Type": "application/json"}, block=1 << 20, pause=0.06,
                           fill=b'[{"name": "alpha", "version": "1.0.0"}, ')

    with web.HostileServer({"/search": endless_json}) as srv:
        o = install(home, srv.url, spec="npm/alpha", timeout=12)
    assert_one_line_error(o, rss_mb=400)
    snapshot.assert_unchanged(home)


def test_gzip_bomb_is_not_inflated(home: Path, snapshot: StoreSnapshot) -> None:
    bomb = web.gzip_bomb()
    with web.HostileServer({DOWNLOAD: lambda r: web.reply(bomb, headers={"Content-Encoding": "gzip"})}) as srv:
        o = install(home, srv.url, fsize=32 * 1024 * 1024)
    assert_one_line_error(o)
    snapshot.assert_unchanged(home)


def test_slow_drip_download_has_a_deadline(home: Path, snapshot: StoreSnapshot, alpha: bytes) -> None:
    """Each read is quick, the whole is not: the overall deadline (CONTEXT_DOWNLOAD_DEADLINE) ends it."""
    with web.HostileServer({DOWNLOAD: lambda r: web.drip(alpha, every=2.0)}) as srv:
        o = install(home, srv.url, timeout=10, env={"CONTEXT_DOWNLOAD_DEADLINE": "4"})
    assert_one_line_error(o)
    snapshot.assert_unchanged(home)


def test_the_default_limits_end_a_drip_within_a_minute(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 #7: with nothing set, under 1 KiB/s for 30 s ends a download (before: only the
    900 s deadline), and a silent stall ends at the 30 s read timeout. The two tests below run
    the same code with a 3 s window, so that the suite does not wait the minute."""
    from context_cli.environment import DOWNLOAD_MIN_RATE, DOWNLOAD_SLOW_SECONDS, HTTP_TIMEOUT
    from context_cli.remote.client import timeouts
    from context_cli.sources.transfer import min_rate

    for variable in (DOWNLOAD_MIN_RATE, DOWNLOAD_SLOW_SECONDS, HTTP_TIMEOUT):
        monkeypatch.delenv(variable.name, raising=False)
    assert min_rate() == (1024, 30.0)
    assert timeouts() == (10.0, 30.0)


def test_slow_drip_download_ends_in_the_rate_window(home: Path, snapshot: StoreSnapshot, alpha: bytes) -> None:
    """One byte every 2 s: under 1 KiB/s for the whole window ends it, not the overall deadline."""
    with web.HostileServer({DOWNLOAD: lambda r: web.drip(alpha, every=2.0)}) as srv:
        o = install(home, srv.url, timeout=30, env={"CONTEXT_DOWNLOAD_SLOW_SECONDS": "3"})
    line = assert_one_line_error(o)
    assert "slower than 1024 bytes a second" in line and o.seconds < 15, o
    snapshot.assert_unchanged(home)


def test_stalled_download_ends_at_the_read_timeout(home: Path, snapshot: StoreSnapshot, alpha: bytes) -> None:
    """A server that sends part of the file and then nothing at all: the read timeout ends it."""
    with web.HostileServer({DOWNLOAD: lambda r: web.stall_after(alpha, 1000)}) as srv:
        o = install(home, srv.url, timeout=30, env={"CONTEXT_HTTP_TIMEOUT": "3"})
    assert_one_line_error(o)
    assert o.seconds < 15, o
    snapshot.assert_unchanged(home)


def test_unicode_digit_content_length(home: Path, snapshot: StoreSnapshot, alpha: bytes) -> None:
    with web.HostileServer({DOWNLOAD: lambda r: [web.head(200, length="\u00b2"), alpha]}) as srv:
        o = install(home, srv.url)
    if o.rc == 0:  # reading to the end and checking the package is a fine answer too
        assert_good_package_searchable(home)
        return
    assert_one_line_error(o)
    snapshot.assert_unchanged(home)


def test_local_file_cannot_replace_registry_package(home: Path, alpha: bytes, tmp_path: Path) -> None:
    with web.HostileServer({DOWNLOAD: lambda r: web.reply(alpha, headers={"X-Content-SHA256": sha(alpha)})}) as srv:
        assert_ok(install(home, srv.url))
    before = StoreSnapshot.take(home)
    spoof = hp.impersonator(tmp_path / "spoof.db")
    hp.set_meta(spoof, description="spoofed")
    assert_one_line_error(run(["add", str(spoof)], home, timeout=20))
    before.assert_unchanged(home)


def _interrupted_install(home: Path, alpha: bytes, sig: int) -> None:
    body = alpha + b"\0" * (2 * 1024 * 1024)  # big enough that part of it reaches the temp file
    with web.HostileServer({DOWNLOAD: lambda r: web.stall_after(body, len(body) // 2)}) as srv:
        proc = spawn(["install", SPEC], home, env={"CONTEXT_REGISTRY_URL": srv.url})
        srv.wait_for(DOWNLOAD)
        time.sleep(1.0)
        os.kill(proc.pid, sig)
        o = finish(proc, ("install", SPEC), 15)
    assert not o.timed_out and o.rc != 0, o


def test_sigterm_during_install_leaves_nothing(home: Path, snapshot: StoreSnapshot, alpha: bytes) -> None:
    _interrupted_install(home, alpha, signal.SIGTERM)
    snapshot.assert_unchanged(home)
    assert listed(home) == {"local/goodlib@1.0.0"}


def test_kill9_during_install_installs_nothing(home: Path, alpha: bytes) -> None:
    """A killed install cannot clean up, but what it leaves is never a package."""
    _interrupted_install(home, alpha, signal.SIGKILL)
    assert listed(home) == {"local/goodlib@1.0.0"}
    assert_good_package_searchable(home)


def test_full_disk_during_install(home: Path, snapshot: StoreSnapshot, alpha: bytes) -> None:
    """`ulimit -f` below the package's size: a clear error, nothing half-written."""
    with web.HostileServer({DOWNLOAD: lambda r: web.reply(alpha, headers={"X-Content-SHA256": sha(alpha)})}) as srv:
        o = install(home, srv.url, fsize=len(alpha) // 3)
    assert_one_line_error(o)
    snapshot.assert_unchanged(home)
