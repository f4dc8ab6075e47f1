"""Run the real `context` CLI in a child process and hold it to the promise.

Every hostile case ends the same way: within a time bound, under a memory bound (the
child's own peak RSS: `VmHWM` polled from /proc, which starts afresh at exec, unlike
`ru_maxrss`, which inherits the forking test process's size), with a non-zero exit and one short error
line on stderr, and the store exactly as it was. The child runs in its own session so a
timeout kills it and anything it started.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KEEP = 1 << 20  # bytes of each stream kept for assertions; the rest is counted and dropped
MAX_ERROR_CHARS = 600  # an error line longer than this is not "one clear line"
DEFAULT_RSS_MB = 600  # a CLI run that loads numpy and the model stays well under this


@dataclass
class Outcome:
    args: tuple[str, ...]
    rc: int
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int
    seconds: float
    peak_rss_mb: float
    timed_out: bool

    def __str__(self) -> str:
        return (f"context {' '.join(a[:80] for a in self.args)} -> rc={self.rc} in {self.seconds:.1f}s, "
                f"{self.peak_rss_mb:.0f} MB{' (KILLED AT TIMEOUT)' if self.timed_out else ''}\n"
                f"stderr ({self.stderr_bytes} bytes): {self.stderr[:800]!r}\nstdout: {self.stdout[:400]!r}")

    def json(self) -> object:
        """stdout as strict JSON: NaN and Infinity are not JSON."""
        return json.loads(self.stdout, parse_constant=_no_constants)

    def json_lines(self) -> list[object]:
        return [json.loads(line, parse_constant=_no_constants) for line in self.stdout.splitlines() if line.strip()]


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


CONTEXT = ("-m", "context_cli")
REGISTRY = ("-c", "from registry.cli import main; main()")  # `context-registry`


def run(args: Sequence[str], home: Path, *, timeout: float = 30.0, env: dict[str, str] | None = None,
        fsize: int | None = None, stdin: bytes | None = None, cwd: Path = REPO,
        program: Sequence[str] = CONTEXT) -> Outcome:
    """`python -m context_cli ARGS` with CONTEXT_HOME=home; killed (with its group) at `timeout`."""
    proc = spawn(args, home, env=env, fsize=fsize, stdin=subprocess.PIPE if stdin is not None else None, cwd=cwd,
                 program=program)
    if stdin is not None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(stdin)
            proc.stdin.close()
        except BrokenPipeError:
            pass
    return finish(proc, tuple(args), timeout)


def spawn(args: Sequence[str], home: Path, *, env: dict[str, str] | None = None, fsize: int | None = None,
          stdin: int | None = None, cwd: Path = REPO, program: Sequence[str] = CONTEXT) -> subprocess.Popen[bytes]:
    full_env = {**os.environ, "CONTEXT_HOME": str(home), "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
                **(env or {})}
    full_env.pop("CONTEXT_DEBUG", None)
    return subprocess.Popen([sys.executable, *program, *args], cwd=cwd, env=full_env,
                            stdin=stdin if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=_limits(fsize))


def _limits(fsize: int | None) -> Callable[[], None] | None:
    if fsize is None:
        return None

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
    return apply


def finish(proc: subprocess.Popen[bytes], args: tuple[str, ...], timeout: float) -> Outcome:
    """Wait for `proc` (killing its group at `timeout`), reading both streams in bounded memory."""
    out, err = _Drain(proc.stdout), _Drain(proc.stderr)
    start = time.monotonic()
    timed_out = False
    peak_kb = 0
    while True:
        peak_kb = max(peak_kb, peak_rss_kb(proc.pid))
        pid, status = os.waitpid(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            timed_out = True
            kill_group(proc)
            pid, status = os.waitpid(proc.pid, 0)
            break
        time.sleep(0.02)
    seconds = time.monotonic() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    kill_group(proc)  # anything the child left behind
    out.join()
    err.join()
    return Outcome(args, proc.returncode, out.text(), err.text(), out.total, err.total, seconds,
                   peak_kb / 1024, timed_out)


def peak_rss_kb(pid: int) -> int:
    """The process's peak resident set so far (0 once it has exited)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Drain(threading.Thread):
    """Reads a pipe to the end, keeping the first KEEP bytes and counting the rest."""

    def __init__(self, pipe: object) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.kept = bytearray()
        self.total = 0
        self.start()

    def run(self) -> None:
        if self.pipe is None:
            return
        while block := self.pipe.read1(1 << 16):  # type: ignore[attr-defined]
            self.total += len(block)
            if len(self.kept) < KEEP:
                self.kept += block[:KEEP - len(self.kept)]
        self.pipe.close()  # type: ignore[attr-defined]

    def join(self, timeout: float | None = 10) -> None:
        super().join(timeout)

    def text(self) -> str:
        return self.kept.decode("utf-8", "replace")


# -- the promise ----------------------------------------------------------------------

def assert_bounded(o: Outcome, *, rss_mb: float = DEFAULT_RSS_MB) -> None:
    assert not o.timed_out, f"did not finish in time: {o}"
    assert o.peak_rss_mb < rss_mb, f"peak memory {o.peak_rss_mb:.0f} MB over {rss_mb} MB: {o}"


def assert_one_line_error(o: Outcome, *, rss_mb: float = DEFAULT_RSS_MB) -> str:
    """Non-zero exit, bounded, and stderr is one short line that is not an internal error."""
    assert_bounded(o, rss_mb=rss_mb)
    assert o.rc not in (0, -9), f"expected a refusal: {o}"
    assert o.rc > 0, f"died by signal {-o.rc}: {o}"
    assert o.stderr_bytes <= MAX_ERROR_CHARS * 4, f"stderr is {o.stderr_bytes} bytes: {o}"
    lines = [line for line in o.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one error line: {o}"
    line = lines[0]
    assert len(line) <= MAX_ERROR_CHARS, f"error line is {len(line)} chars: {o}"
    assert "Traceback" not in o.stderr and "internal error" not in line, f"not a clear error: {o}"
    return line


def assert_ok(o: Outcome, *, rss_mb: float = DEFAULT_RSS_MB) -> None:
    assert_bounded(o, rss_mb=rss_mb)
    assert o.rc == 0, f"expected success: {o}"


@dataclass(frozen=True)
class StoreSnapshot:
    """Every file under $CONTEXT_HOME/packages (temp and side files too) with its SHA-256."""

    files: dict[str, str]

    @classmethod
    def take(cls, home: Path) -> StoreSnapshot:
        root = home / "packages"
        files = {}
        if root.is_dir():
            for p in sorted(root.rglob("*")):
                if p.is_file():
                    files[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
        return cls(files)

    def assert_unchanged(self, home: Path) -> None:
        now = StoreSnapshot.take(home)
        assert now.files == self.files, f"store changed: before {sorted(self.files)}, after {sorted(now.files)}"


def assert_good_package_searchable(home: Path, *, query: str = "streaming cancellation", timeout: float = 30,
                                   lib: str | None = None) -> dict:
    """The package installed before the attack still answers, as strict JSON, within bounds."""
    args = ["search", query, "--format", "json"] + (["--lib", lib] if lib else [])
    o = run(args, home, timeout=timeout)
    assert_ok(o)
    answer = o.json()
    assert isinstance(answer, dict)
    assert any(r["library"].startswith("goodlib@") for r in answer["results"]), o
    return answer


def listed(home: Path) -> set[str]:
    """`registry/name@version` of every package `context list` shows."""
    o = run(["list", "--json"], home, timeout=20)
    assert_ok(o)
    data = o.json()
    assert isinstance(data, list)
    return {f"{p['registry']}/{p['name']}@{p['version']}" for p in data}
