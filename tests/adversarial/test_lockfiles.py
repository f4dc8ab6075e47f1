"""Fuzzing the lockfile and manifest readers of `context sync`: any bytes under any of the
names it reads give a result or one of our own errors (LockfileError and friends), never a
crash, in bounded time."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context_cli.errors import ContextError
from context_cli.sync.project import read_project

NAMES = ["uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "requirements.txt", "pyproject.toml",
         "package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "package.json",
         "mix.lock", "mix.exs"]

# Fragments real files are made of, so the fuzzer reaches past the first syntax check.
FRAGMENTS = st.sampled_from([
    "version = 1\n", "[[package]]\n", 'name = "httpx"\n', 'version = "0.27.2"\n', "lockfileVersion: '9.0'\n",
    '{"lockfileVersion": 3, "packages": {"": {"dependencies": {"zod": "^3"}}}}', "packages:\n", "  /zod@3.23.8:\n",
    '"zod@^3":\n  version "3.23.8"\n', "httpx==0.27.2 --hash=sha256:00\n", "-r other.txt\n", '%{"jason": {:hex, :jason, "1.4.1"',
    "\u00b2", "../../etc/passwd", "\x00", "[" * 50, "{" * 50, "&a [*a, *a]\n", "\ud7ff", "\\\n",
])
CONTENT = st.one_of(st.text(max_size=400), st.lists(FRAGMENTS, max_size=30).map("".join))


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=CONTENT)
def test_any_content_is_read_or_refused_in_one_line(name: str, text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / name).write_text(text, "utf-8", errors="surrogatepass")
        start = time.perf_counter()
        try:
            read_project(root, transitive=True)
        except ContextError as e:
            assert "\n" not in str(e).strip() and len(str(e)) < 2000
        assert time.perf_counter() - start < 5


@pytest.mark.parametrize("name", ["package-lock.json", "pnpm-lock.yaml", "uv.lock", "yarn.lock"])
def test_binary_garbage_is_refused(name: str, tmp_path: Path) -> None:
    (tmp_path / name).write_bytes(bytes(range(256)) * 64)
    with pytest.raises(ContextError):
        read_project(tmp_path)
