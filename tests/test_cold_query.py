"""A cold `context query` loads only what one query needs and ends without the interpreter's
teardown, printing exactly what it printed before (docs/performance.md, "Cold query").

These run the real CLI in a fresh process against a package built in a temp home; they check
what was imported and what was printed, never how long it took.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from context_cli.adding import AddRequest, add_source

QUESTION = "how do I stop a pipeline halfway"


@pytest.fixture
def home(docs_folder: Path, context_home: Path) -> Path:
    add_source(AddRequest(source=str(docs_folder), name="mylib", version="1.0.0"))
    return context_home


def run(home: Path, *args: str, code: str = "") -> subprocess.CompletedProcess[str]:
    """`python [-X importtime] -m context_cli ARGS`, or `code` that calls the CLI's `main`."""
    env = {**os.environ, "CONTEXT_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-c", code, *args] if code else [sys.executable, "-X", "importtime", "-m", "context_cli",
                                                            *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, cwd=home)


def imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_a_query_imports_none_of_what_only_other_commands_need(home: Path) -> None:
    """(The second query: a first one may write what the home remembers of the model.)"""
    assert run(home, "query", "mylib", QUESTION).returncode == 0
    done = run(home, "query", "mylib", QUESTION)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["searched"] == {"mylib@1.0.0": "hybrid"}
    modules = imported(done.stderr)
    assert {"numpy", "context_cli.search.engine", "context_cli.sync.scope"} <= modules  # real imports seen
    for needless in ("click", "context_cli.surfaces.cli",  # a plain query is parsed without them
                     "packaging", "packaging.version",  # versions are compared only between several candidates
                     "shutil", "bz2", "lzma",  # installing copies files, a query does not
                     "difflib",  # only a "not installed" message suggests names
                     "context_cli.sync.docslock", "context_cli.sync.model",  # no docs.lock here to read
                     "click.shell_completion", "mcp", "requests", "docutils", "hashlib", "logging",
                     "concurrent.futures", "tempfile", "context_cli.remote.client", "context_cli.parse"):
        assert needless not in modules, needless


def test_a_query_in_a_synced_project_still_reads_its_lock(home: Path) -> None:
    """The lock's reader loads when there is a lock: the scope it sets is still enforced."""
    lock = home / ".context" / "docs.lock"
    lock.parent.mkdir()
    lock.write_text(json.dumps({"format": 1, "packages": []}), "utf-8")
    done = run(home, "query", "mylib", QUESTION)
    assert done.returncode == 0, done.stderr
    assert "context_cli.sync.docslock" in imported(done.stderr)
    assert json.loads(done.stdout)["library"] == "mylib@1.0.0"


def cli_after(prelude: str) -> str:
    """Python code that runs `prelude`, then the CLI as `context` would."""
    return prelude + "import sys\nsys.argv[0] = 'context'\nfrom context_cli.surfaces.entry import main\nmain()\n"


def test_the_quick_exit_runs_exit_hooks_and_flushes_everything(home: Path) -> None:
    """Output written after the answer (an atexit hook's) still arrives, and in order."""
    done = run(home, "query", "mylib", QUESTION, code=cli_after("import atexit\n"
                                                                "atexit.register(lambda: print('hook ran'))\n"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("}\nhook ran\n")
    assert json.loads(done.stdout[: -len("hook ran\n")])["results"]


@pytest.mark.parametrize(("args", "collecting"), [(("query", "mylib", QUESTION), False), (("search", QUESTION), True)])
def test_only_a_query_runs_without_the_cyclic_collector(home: Path, args: tuple[str, ...], collecting: bool) -> None:
    """A query answers one question and ends; a search may be a batch of thousands."""
    done = run(home, *args, code=cli_after("import atexit, gc\n"
                                           "atexit.register(lambda: print('collecting', gc.isenabled()))\n"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith(f"collecting {collecting}\n")


@pytest.mark.parametrize(("args", "status", "error"), [
    (("query", "nosuch", QUESTION), 1, "Error: nosuch is not installed (see `context list`)\n"),
    (("query", "mylib", "   "), 1, "Error: the query is empty; ask a question or name an API\n"),
    (("query", "mylib"), 2, "Error: Missing argument 'TOPIC'.\n"),
])
def test_a_failed_query_exits_as_before(home: Path, args: tuple[str, ...], status: int, error: str) -> None:
    done = run(home, *args)
    assert done.returncode == status
    assert done.stdout == ""
    assert "".join(line for line in done.stderr.splitlines(keepends=True)
                   if not line.startswith("import time:")).endswith(error)


def test_a_thread_left_running_gets_the_normal_exit(home: Path) -> None:
    """A non-daemon thread still running is joined as Python always joins it, not cut off."""
    done = run(home, "query", "mylib", QUESTION, code=cli_after("import threading, time\n"
                                                                "def late():\n"
                                                                "    time.sleep(1)\n"
                                                                "    print('thread done', flush=True)\n"
                                                                "threading.Thread(target=late).start()\n"))
    assert done.returncode == 0, done.stderr
    assert "thread done\n" in done.stdout
    assert json.loads(done.stdout.replace("thread done\n", ""))["results"]


def test_a_profiled_query_still_reports(home: Path) -> None:
    """cProfile (like coverage or a debugger) reports at exit: with one attached, the exit is the normal one."""
    env = {**os.environ, "CONTEXT_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "cProfile", "-s", "cumtime", "-m", "context_cli", "query", "mylib",
                           QUESTION], env=env, capture_output=True, text=True, timeout=120, cwd=home)
    assert done.returncode == 0, done.stderr
    assert "function calls" in done.stdout and "engine.py" in done.stdout


@pytest.mark.parametrize("closed", [">&-", "2>&-"])
def test_a_query_started_with_a_closed_stream_exits_as_before(home: Path, closed: str) -> None:
    """Python leaves a stream closed at start as None; click skips it, and so does the quick exit."""
    env = {**os.environ, "CONTEXT_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(f'"{sys.executable}" -m context_cli query mylib "{QUESTION}" {closed}', shell=True,
                          env=env, capture_output=True, text=True, timeout=120, cwd=home)
    assert (done.returncode, done.stderr) == (0, "")


# `query LIBRARY TOPIC` with every default, through click instead of the plain path.
THROUGH_CLICK = ("--budget", "2000")


@pytest.mark.parametrize("args", [("mylib", QUESTION), ("nosuch", QUESTION), ("mylib", "   "), ("mylib@9", QUESTION),
                                  ("mylib", "pipeline \u00e9t\u00e9 \u2028 \x1b[31m \udcff"), ("", QUESTION)])
def test_a_plain_query_prints_what_click_prints(home: Path, args: tuple[str, str]) -> None:
    """The same bytes on stdout and stderr and the same status, answer or error, either way."""
    plain, clicked = run(home, "query", *args), run(home, "query", *args, *THROUGH_CLICK)
    group = "context_cli.surfaces.cli"  # (click itself is loaded to show an error either way)
    assert group not in imported(plain.stderr) and group in imported(clicked.stderr)
    assert (plain.returncode, plain.stdout) == (clicked.returncode, clicked.stdout)
    assert said(plain.stderr) == said(clicked.stderr)


def said(stderr: str) -> list[str]:
    """stderr without `-X importtime`'s lines."""
    return [line for line in stderr.splitlines() if not line.startswith("import time:")]


@pytest.mark.parametrize("extra", [(), THROUGH_CLICK])
def test_a_reader_that_leaves_gets_status_1_and_no_traceback(home: Path, extra: tuple[str, ...]) -> None:
    """A closed pipe: click's way (status 1, nothing on stderr) on the plain path too."""
    env = {**os.environ, "CONTEXT_HOME": str(home), "HF_HUB_OFFLINE": "1"}
    read, write = os.pipe()
    os.close(read)
    with subprocess.Popen([sys.executable, "-m", "context_cli", "query", "mylib", QUESTION, *extra], env=env,
                          stdout=write, stderr=subprocess.PIPE, cwd=home) as proc:
        os.close(write)
        _, err = proc.communicate(timeout=120)
    assert (proc.returncode, err) == (1, b"")


@pytest.mark.parametrize(("args", "env", "plain"), [
    (["query", "mylib", QUESTION], {}, True),
    (["query", "mylib", "-v"], {}, False),  # an option, or a topic click would take for one
    (["query", "-h", QUESTION], {}, False),
    (["query", "mylib"], {}, False),  # click reports the missing topic
    (["query", "mylib", QUESTION, "extra"], {}, False),
    (["search", "mylib", QUESTION], {}, False),
    (["query", "mylib", QUESTION], {"_CONTEXT_COMPLETE": "bash_complete"}, False),  # a shell's completion request
    (["query", "mylib", QUESTION], {"PYTHONIOENCODING": "latin-1"}, False),  # click rewraps only some streams
    (["query", "mylib", QUESTION], {"PYTHONIOENCODING": "utf8"}, True),
])
def test_only_a_plain_query_skips_click(args: list[str], env: dict[str, str], plain: bool) -> None:
    code = ("import json, sys; from context_cli.surfaces.plain_query import is_plain; "
            "print(is_plain(json.loads(sys.argv[1])), 'click' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(args)], env={**os.environ, **env},
                          capture_output=True, text=True, check=True)
    assert done.stdout.split() == [str(plain), "False"]


def test_a_plain_query_stops_on_ctrl_c_as_click_does(home: Path) -> None:
    """Ctrl-C while answering: the full command line's message and status."""
    prelude = ("from context_cli.search import engine\n"
               "def interrupted(*args, **kwargs):\n"
               "    raise KeyboardInterrupt\n"
               "engine.answer = interrupted\n")
    for extra in ((), THROUGH_CLICK):
        done = run(home, "query", "mylib", QUESTION, *extra, code=cli_after(prelude))
        assert (done.returncode, done.stdout, done.stderr) == (130, "", "Interrupted: stopped.\n")
