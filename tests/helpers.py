"""Small builders shared by tests: real package files written by our own writer."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from context_cli.document import Chunk, estimate_tokens
from context_cli.package.writer import write_package

# Copies of Neuledge Context's package and of the eval corpus (tests/fixtures/*/README.md say
# where they come from and under which licence): the tests read nothing outside the repository.
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PEER_DB = FIXTURES / "neuledge" / "anthropic-docs@2024.7.0.db"
EVAL_CORPUS = FIXTURES / "eval" / "anthropic-docs"


def make_package(path: Path, name: str = "lib", version: str = "1.0.0", sections: list[tuple[str, str, str]] | None = None,
                 **meta: str) -> Path:
    """A lexical package: sections are (doc_path, section_title, content)."""
    sections = sections or [("guide.md", "Intro", f"{name} {version} explains streaming and cancellation.")]
    chunks = [Chunk(doc_path=p, doc_title=p.rsplit(".", 1)[0].title(), section_title=t, content=c,
                    tokens=estimate_tokens(c), has_code="```" in c) for p, t, c in sections]
    return write_package(path, {"name": name, "version": version, **meta}, chunks)


def targz(members: dict[str, str | bytes]) -> bytes:
    """A .tar.gz in memory (sdists, npm tarballs): archive path -> text or bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            raw = data.encode() if isinstance(data, str) else data
            info = tarfile.TarInfo(name)
            info.size = len(raw)
            tf.addfile(info, io.BytesIO(raw))
    return buf.getvalue()


def run_on_pty(args: list[str], *, stream: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """`context ARGS` as a subprocess whose `stream` ("stdout" or "stderr") is a real pty, the
    other one discarded: what a person at a terminal sees. Returns (exit status, what was shown)."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    streams = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, stream: follower}
    with subprocess.Popen([sys.executable, "-m", "context_cli", *args], env=env, stdin=subprocess.DEVNULL,
                          **streams) as proc:
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the pty closed: the process is done
                break
            if not chunk:
                break
            shown += chunk
        code = proc.wait(120)
    os.close(leader)
    return code, shown.decode(errors="replace")
