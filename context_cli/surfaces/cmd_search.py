"""`context query` and `context search`: answer from installed packages."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import click

from ..errors import ContextError
from ..search.answer import dumps
from ..search.engine import DEFAULT_BUDGET, DEFAULT_LIMIT, SearchOptions, answer
from ..store.store import Installed, Store
from .plain_query import answer_text, json_text
from .project import ProjectScope, project_options, project_scope, resolve_in_scope
from .render import echo, json_safe, to_markdown


def select_packages(store: Store, specs: tuple[str, ...], scope: ProjectScope) -> list[Installed]:
    """The packages a search covers: each --lib spec (the project's version of a bare name),
    else the project's packages, else everything installed."""
    if specs:
        return [resolve_in_scope(store, spec, scope) for spec in specs]
    if scope.lock is not None:
        if not scope.packages:
            raise ContextError(f"none of the packages {scope.lock} lists is installed; run `context sync`")
        return scope.packages
    return store.installed()


@click.command("query")
@click.argument("library")
@click.argument("topic")
@click.option("--budget", type=click.IntRange(1, 100_000), default=DEFAULT_BUDGET, show_default=True)
@click.option("--pretty", is_flag=True, help="Indented JSON (the default on a terminal; piped, it is one compact line).")
@project_options
def query(library: str, topic: str, budget: int, pretty: bool, project: Path | None, no_project: bool) -> None:
    """Search one LIBRARY ([registry/]name[@version]) for TOPIC; prints JSON."""
    click.echo(answer_text(library, topic, budget=budget, pretty=pretty, project=project, no_project=no_project))


@click.command("search")
@click.argument("topic", required=False)
@click.option("--lib", "libs", multiple=True, help="Only this package ([registry/]name[@version]); repeatable.")
@click.option("--budget", type=click.IntRange(1, 100_000), default=DEFAULT_BUDGET, show_default=True,
              help="Token budget of the answer.")
@click.option("--limit", type=click.IntRange(1, 100), default=DEFAULT_LIMIT, show_default=True,
              help="Most sections to return.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@click.option("--pretty", is_flag=True,
              help="With --format json: indented JSON (the default on a terminal; piped, it is one compact line).")
@click.option("--batch", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help='JSONL file of {"id", "query"}; prints one JSON result per line.')
@click.option("--mode", type=click.Choice(["hybrid", "lexical", "dense"]), default="hybrid", hidden=True)
@project_options
def search(topic: str | None, libs: tuple[str, ...], budget: int, limit: int, fmt: str, pretty: bool,
           batch: Path | None, mode: str, project: Path | None, no_project: bool) -> None:
    """Search installed packages for TOPIC and print a context pack.

    Inside a project synced with `context sync`, only the packages its .context/docs.lock
    lists are searched (see --project, --no-project).
    """
    store = Store()
    packages = select_packages(store, libs, project_scope(store, project, no_project))
    opts = SearchOptions(budget=budget, limit=limit, mode=mode)
    if batch is not None:
        run_batch(batch, packages, replace(opts, warm=True))  # many questions: read each package once
        return
    if not topic:
        raise click.UsageError("give a TOPIC, or --batch FILE")
    result = answer(topic, packages, opts)
    if fmt == "json":
        click.echo(json_text(result.to_dict(), pretty=pretty))
    else:
        echo(to_markdown(result), redacted=False)


def run_batch(path: Path, packages: list[Installed], opts: SearchOptions) -> None:
    """One JSON line out per input line; a bad line yields an error line, not an abort."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            qid: object = n
            try:
                qid, text = _batch_item(line, n)
                out = {"id": qid, **answer(text, packages, opts).to_dict()}
            except ContextError as e:
                out = {"id": qid, "error": str(e)}
            sys.stdout.write(json_safe(dumps(out)) + "\n")
            sys.stdout.flush()


def _batch_item(line: str, n: int) -> tuple[object, str]:
    """(id, query) of one JSONL line; the id defaults to the line number."""
    try:
        item = json.loads(line)
    except ValueError as e:
        raise ContextError(f"line {n} is not JSON ({e})") from None
    except RecursionError:
        raise ContextError(f"line {n} is nested too deeply to be a query") from None
    if not isinstance(item, dict) or not isinstance(item.get("query"), str):
        raise ContextError('expected {"id": ..., "query": "..."}')
    return item.get("id", n), item["query"]

