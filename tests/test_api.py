"""The public Python API: `import context_cli as cx` is light, and its answers are the CLI's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import make_package

import context_cli as cx
from context_cli.surfaces.cli import cli

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "model2vec", "mcp", "requests", "markdown_it", "docutils", "lxml", "rich", "starlette",
         "context_cli.parse", "context_cli.search", "context_cli.store")


def test_import_loads_nothing_heavy():
    code = f"import sys, context_cli as cx; print([m for m in {HEAVY!r} if m in sys.modules]); print(cx.__version__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[0] == "[]"


def test_the_example_in_docs_python_md_runs(tmp_path):
    text = (ROOT / "docs" / "python.md").read_text("utf-8")
    example = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    env = {**os.environ, "CONTEXT_HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 0, run.stderr
    assert "Streams > Stopping a stream streams.md" in run.stdout
    assert "['local/mylib@1.2.0']" in run.stdout
    assert not list((tmp_path / "home" / "packages").glob("*.db"))  # the example removes what it added


def test_answer_to_dict_is_what_the_cli_prints(docs_folder, tmp_path):
    pkg = cx.build(docs_folder, tmp_path / "mylib.db", name="mylib", version="1.0.0", embed=False)
    cx.Store().install(pkg.path)
    printed = CliRunner().invoke(cli, ["search", "stop the pipeline halfway", "--format", "json", "--budget", "500"])
    assert printed.exit_code == 0, printed.output
    answer = cx.search("stop the pipeline halfway", ["mylib"], budget=500)
    assert isinstance(answer, cx.Answer) and all(isinstance(h, cx.Hit) for h in answer.results)
    from_cli = json.loads(printed.output)
    assert list(from_cli) == list(answer.to_dict())  # same keys in the same order
    assert from_cli["results"] == [h.to_dict() for h in answer.results]
    assert answer.results[0].source == "guide/cancel.md"
    assert list(answer.results[0].to_dict()) == ["rank", "library", "title", "content", "source", "url", "tokens",
                                                 "score", "verdict", "signals", "page"]
    assert answer.results[0].to_dict()["page"] == {"rank": 1, "title": answer.results[0].title.split(" > ")[0],
                                                   "source": "guide/cancel.md", "url": None}
    assert json.loads(answer.to_json()) == answer.to_dict() and "\n" not in answer.to_json()  # the text, compact


def test_search_takes_paths_specs_and_opened_packages(tmp_path):
    a = make_package(tmp_path / "a.db", "alpha", "1.0.0", [("a.md", "Intro", "alpha streams data")])
    b = make_package(tmp_path / "b.db", "beta", "2.0.0", [("b.md", "Intro", "beta streams data too")])
    cx.Store().install(b)
    answer = cx.search("streams", [str(a), "beta", cx.open(a)])
    assert {h.library for h in answer.results} == {"alpha@1.0.0", "beta@2.0.0"}
    assert answer.library is None and "library" not in answer.to_dict()
    single = cx.search("streams", a)
    assert single.library == "alpha@1.0.0" and single.version == "1.0.0"


def test_build_from_a_db_copies_it_and_refuses_another_name(tmp_path):
    src = make_package(tmp_path / "src.db", "lib", "1.0.0")
    out = cx.build(src, tmp_path / "out" / "copy.db")
    assert out.label == "lib@1.0.0" and out.path == tmp_path / "out" / "copy.db"
    with pytest.raises(cx.ContextError, match="cannot be renamed"):
        cx.build(src, tmp_path / "other.db", name="other")
    assert not (tmp_path / "other.db").exists()


def test_store_add_installs_and_resolves(docs_folder):
    store = cx.Store()
    result = store.add(str(docs_folder), name="mylib", version="1.0.0", embed=False)
    assert result.installed.id.qualified == "local/mylib@1.0.0"
    assert store.resolve("mylib").origin == "built"
    assert [i.label for i in store.installed()] == ["mylib@1.0.0"]
    store.remove("mylib")
    assert store.installed() == []


def test_public_names_stay_functions_after_the_modules_load():
    from context_cli.build import BuildOptions  # noqa: F401 - loads the `build` module
    from context_cli.search import engine  # noqa: F401 - loads the `search` subpackage

    assert callable(cx.search) and cx.search.__module__ == "context_cli.api"
    assert callable(cx.build) and cx.build.__module__ == "context_cli.api"
    with pytest.raises(AttributeError):
        cx.nothing_here  # noqa: B018


def test_every_exception_of_ours_is_a_context_error():
    import importlib
    import inspect

    modules = ["context_cli.errors", "context_cli.api", "context_cli.search.engine", "context_cli.store.store",
               "context_cli.mcp_server.tools", "context_cli.search.answer"]
    found = [obj for m in modules for _, obj in inspect.getmembers(importlib.import_module(m), inspect.isclass)
             if issubclass(obj, BaseException) and obj.__module__.startswith("context_cli")]
    assert len(found) >= 10
    assert [e.__name__ for e in found if not issubclass(e, cx.ContextError)] == []
