"""The command line through click's runner: thin commands over library functions."""

import json
import re

import pytest
from click.testing import CliRunner
from helpers import PEER_DB, make_package, run_on_pty

from context_cli.surfaces.cli import COMMANDS, cli


def run(*args, ok=True):
    result = CliRunner().invoke(cli, list(args))
    if ok:
        assert result.exit_code == 0, result.output
    return result


def one_error_line(result):
    assert result.exit_code != 0
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:"), result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_help(name):
    out = run(name, "--help").output
    assert "Usage:" in out and len(out.splitlines()) > 3


def test_add_folder_search_and_manage(docs_folder, tmp_path):
    saved = tmp_path / "share" / "mylib.db"
    out = run("add", str(docs_folder), "--name", "mylib", "--pkg-version", "1.0.0", "--no-embed",
              "--save", str(saved)).output
    assert re.search(r"Added local/mylib@1\.0\.0: \d+ sections from 3 pages", out)
    assert saved.exists()
    assert "local/mylib@1.0.0" in run("list").output
    info = json.loads(run("info", "mylib", "--json").output)
    assert info["meta"]["source_url"] == "mylib-docs" and info["vectors"] is False
    answer = json.loads(run("search", "stop the pipeline halfway", "--format", "json").output)
    assert answer["results"][0]["source"] == "guide/cancel.md"
    md = run("search", "stop the pipeline halfway").output
    assert "## 1. Cancelling a pipeline" in md and "### Stopping halfway" in md
    q = json.loads(run("query", "mylib", "retry backoff").output)
    assert q["library"] == "mylib@1.0.0"
    assert "Removed local/mylib@1.0.0" in run("remove", "mylib").output


def test_saved_copy_installs_elsewhere(docs_folder, tmp_path, monkeypatch):
    saved = tmp_path / "mylib.db"
    run("add", str(docs_folder), "--name", "mylib", "--pkg-version", "2.0.0", "--no-embed", "--save", str(saved))
    monkeypatch.setenv("CONTEXT_HOME", str(tmp_path / "teammate"))
    assert "Installed local/mylib@2.0.0" in run("add", str(saved)).output


def test_batch(tmp_path):
    run("add", str(PEER_DB))
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": "a", "query": "streaming"}\nnot json\n{"id": 7, "query": "NOT ((("}\n')
    lines = [json.loads(x) for x in run("search", "--batch", str(batch)).output.splitlines()]
    assert [x["id"] for x in lines] == ["a", 2, 7]
    assert lines[0]["results"] and "error" in lines[1] and "results" in lines[2]


@pytest.mark.parametrize("args", [
    ["search", "anything"],  # nothing installed
    ["query", "nope", "x"],
    ["remove", "nope"],
    ["info", "nope"],
    ["add", "/definitely/not/here"],
])
def test_errors_are_one_line(args):
    one_error_line(run(*args, ok=False))


def test_add_refuses_a_bad_db_and_keeps_what_is_installed(tmp_path):
    run("add", str(PEER_DB))
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"SQLite format 3\x00garbage" * 10)
    one_error_line(run("add", str(bad), ok=False))
    assert "anthropic-docs@2024.7.0" in run("list").output


def test_remove_lists_versions_when_ambiguous(tmp_path):
    for v in ("1.0.0", "1.1.0"):
        run("add", str(make_package(tmp_path / f"{v}.db", "lib", v)))
    result = run("remove", "lib", ok=False)
    one_error_line(result)
    assert "lib@1.0.0" in result.output and "lib@1.1.0" in result.output


def test_cold_import_stays_light():
    import subprocess
    import sys

    code = ("import sys; from context_cli.surfaces import cli, cmd_search, cmd_manage; "
            "heavy = [m for m in ('numpy', 'model2vec', 'mcp', 'markdown_it', 'docutils', 'lxml', 'torch', "
            "'huggingface_hub', 'rich') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_one_progress_notion_for_steps_and_downloads():
    from rich.progress import Progress

    from context_cli.surfaces.progress import Bars, amount, progress_bar

    with progress_bar(False) as nothing:
        assert nothing is None
    progress = Progress(disable=True)
    bars = Bars(progress)
    bars.stage("parse", 3, 10)
    bars.download("npm/zod@3.1.0")(1_500_000, 3_000_000)
    shown = [amount(t) for t in progress.tasks]
    assert shown == ["3/10", "1.5 MB of 3.0 MB"]


def test_batch_line_with_a_lone_surrogate_gets_an_error_and_the_batch_goes_on(tmp_path):
    run("add", str(PEER_DB))
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": 1, "query": "stream \\ud800 responses"}\n{"id": "\\udfff", "query": "streaming"}\n'
                     '{"id": 3, "query": "streaming"}\n', "utf-8")
    out = run("search", "--batch", str(batch)).output
    lines = [json.loads(x) for x in out.splitlines()]
    assert lines[0] == {"id": 1, "error": "the query is not valid text (it contains a lone surrogate)"}
    assert lines[1]["id"] == "\udfff" and lines[1]["results"]  # echoed as a JSON escape
    assert lines[2]["id"] == 3 and lines[2]["results"]


def test_add_db_refuses_to_replace_a_registry_install_without_replace(tmp_path):
    from context_cli.store.store import Store

    official = make_package(tmp_path / "official.db", "alpha", "1.0.0", registry="npm", description="official")
    Store().install(official, server="http://127.0.0.1:8080")
    spoof = make_package(tmp_path / "spoof.db", "alpha", "1.0.0", registry="npm", description="spoof")
    result = run("add", str(spoof), ok=False)
    one_error_line(result)
    assert "installed from the registry http://127.0.0.1:8080" in result.output and "--replace" in result.output
    assert json.loads(run("info", "npm/alpha", "--json").output)["meta"]["description"] == "official"
    assert "Installed npm/alpha@1.0.0" in run("add", str(spoof), "--replace").output
    assert json.loads(run("info", "npm/alpha", "--json").output)["meta"]["description"] == "spoof"


@pytest.mark.parametrize("meta, shown", [
    ({"source_type": "pypi", "source_url": "pypi:flask==3.1.0"}, "flask 3.1.0's sdist on PyPI (pypi:flask==3.1.0)"),
    ({"source_type": "pypi", "source_url": "pypi:tomli==2.0.1", "artefact": "tomli-2.0.1-py3-none-any.whl"},
     "tomli 2.0.1's wheel tomli-2.0.1-py3-none-any.whl on PyPI (pypi:tomli==2.0.1)"),
    ({"source_type": "npm", "source_url": "npm:@trpc/server@10.0.0"},
     "@trpc/server@10.0.0's tarball on npm (npm:@trpc/server@10.0.0)"),
    ({"source_type": "git", "source_url": "https://github.com/pallets/flask"},
     "git repository https://github.com/pallets/flask"),
    ({"source_type": "folder", "source_url": "docs"}, "folder docs"),
    ({}, "unknown"),
])
def test_info_says_where_the_docs_came_from_in_words(tmp_path, meta, shown):
    run("add", str(make_package(tmp_path / "s.db", "srclib", "1.0.0", registry="pip", **meta)))
    lines = [ln.split(None, 1) for ln in run("info", "srclib").output.splitlines()[1:]]
    assert dict(lines)["source"] == shown


@pytest.mark.parametrize("args", [["search", "streaming cancellation", "--format", "json"],
                                  ["query", "jlib", "streaming cancellation"]])
def test_search_json_is_one_line_when_piped_and_indented_for_people(tmp_path, args):
    run("add", str(make_package(tmp_path / "j.db", "jlib", "1.0.0")))
    piped = run(*args).output
    assert piped.count("\n") == 1 and json.loads(piped)["results"]
    pretty = run(*args, "--pretty").output
    assert pretty.startswith('{\n  "query": ') and json.loads(pretty) == json.loads(piped)
    code, shown = run_on_pty(args, stream="stdout")
    assert code == 0 and shown.startswith('{\r\n  "query": ')


def test_markdown_nests_a_sections_own_headings_under_its_result(tmp_path):
    content = ("Pipelines stop when asked.\n\n## Cancelling halfway\n\nCall `cancel()`.\n\n"
               "```sh\n# stop the pipeline halfway\n## not a heading\n```\n\n### Flushing sinks\n\nSinks flush.")
    run("add", str(make_package(tmp_path / "h.db", "hlib", "1.0.0", [("guide.md", "Stopping", content)])))
    md = run("search", "stop the pipeline halfway", "--lib", "hlib").output
    assert "### Stopping\n" in md
    assert "\n#### Cancelling halfway\n" in md and "\n##### Flushing sinks\n" in md
    assert "\n# stop the pipeline halfway\n## not a heading\n```" in md  # code stays as it was
    outline = [ln.split(" ")[0] for ln in md.split("```")[0::2][1].splitlines() if ln.startswith("#")]
    assert outline == ["#####"]  # after the code block
    assert [ln.split(" ")[0] for ln in md.split("```")[0].splitlines() if ln.startswith("#")] == [
        "#", "##", "###", "####"]  # query, page, section, the section's own heading
