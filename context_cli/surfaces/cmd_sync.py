"""`context sync`: docs for exactly the versions a project's lockfiles name (a thin layer over
`context_cli.sync.run.sync`)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .render import echo, table_cell

if TYPE_CHECKING:
    from ..sync.plan import Row
    from ..sync.run import Outcome


@click.command("sync")
@click.argument("path", default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--all", "transitive", is_flag=True, help="Transitive dependencies too, not only direct ones.")
@click.option("--no-build", is_flag=True, help="Only install from the registry server; build nothing.")
@click.option("--check", is_flag=True, help="Download nothing; exit 1 if any docs are missing or out of step.")
@click.option("--dry-run", is_flag=True, help="Print the plan and change nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the same rows.")
@click.option("--rebuild", multiple=True, metavar="NAME",
              help="Build NAME again even if installed (repeatable; `readme`: every README-only one).")
@click.option("--include", multiple=True, metavar="GLOB",
              help="Also read sub-projects under these folders (tests/, fixtures/, examples/ and "
                   ".gitignore'd ones are skipped by default).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Leave sub-projects under these folders out.")
def sync_cmd(path: Path, transitive: bool, no_build: bool, check: bool, dry_run: bool, as_json: bool,
             rebuild: tuple[str, ...], include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    """Get docs for exactly the versions the project in PATH uses (default: here).

    Reads lockfiles (uv, poetry, pdm, pipenv, requirements, npm, pnpm, yarn, bun, mix) or, without
    one, manifests' ranges; each dependency is taken from what is installed, else the registry
    server, else built from its released artefact; never another version. Records the result
    in PATH/.context/docs.lock (commit it).

    Exit 0: all synced; 1: some not available (the rest are synced); 2: a file could not be read.
    Dependencies named in `[tool.context] accept` (pyproject.toml) or `.context/config`'s
    `accept` may have no docs without failing.

    \b
    Examples:
      context sync
      context sync ./web --all --no-build
      context sync --check        # in CI
    """
    from ..sync.model import LockfileError
    from ..sync.project import NoDependencyFiles
    from ..sync.run import sync

    if check and dry_run:
        raise click.UsageError("--check and --dry-run are alternatives; give one")
    try:
        with _progress(enabled=not as_json and sys.stderr.isatty()) as (on_plan, on_done):
            outcome = sync(path, transitive=transitive, build=not no_build, check=check, dry_run=dry_run,
                           on_plan=on_plan, on_done=on_done, rebuild=frozenset(rebuild),
                           include=include, exclude=exclude)
    except (LockfileError, NoDependencyFiles) as e:
        echo(f"Error: {e}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(outcome.to_json(), indent=2))
    else:
        _print(outcome, check=check, dry_run=dry_run)
    sys.exit(outcome.exit_code)


def _print(outcome: Outcome, *, check: bool, dry_run: bool) -> None:
    from rich.console import Console
    from rich.table import Table

    if outcome.server_note:
        echo(f"note: registry server: {outcome.server_note}; everything below was looked for elsewhere")
    console = Console(width=None if sys.stdout.isatty() else 160, soft_wrap=False)
    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("dependency", "wanted", "action", "source", "size"):
        table.add_column(column, justify="right" if column == "size" else "left", overflow="fold")
    shown, hidden = _shown_rows(outcome.rows)
    for row in shown:
        wanted = row.version or row.wanted or ""
        if row.wanted and row.version:
            wanted = f"{row.version} ({row.wanted})"
        action = row.action + _docs_label(row) + ("" if row.direct else " (transitive)")
        table.add_row(_escape(f"{row.registry}/{row.name}"), _escape(wanted), action, _source(row), _size(row.size))
        for note in row.notes:
            table.add_row("", "", f"[dim]{_escape(note)}[/dim]", "", "")
    console.print(table)
    if hidden:
        echo(f"... and {hidden} more rows that need nothing (up to date or skipped); --json lists every row")
    summary = _summary(outcome.summary())
    echo(f"{len(outcome.rows)} dependencies from {', '.join(outcome.project.files)}: {summary}")
    for note in outcome.project.notes:
        echo(f"note: {note}")
    for problem in outcome.problems:
        echo(f"out of step: {problem}")
    if check or dry_run:
        click.echo("nothing was changed (--check)" if check else "nothing was changed (--dry-run)")
    elif outcome.lock_written:
        click.echo(f"wrote {outcome.lock}")


DERIVED = ("readme only", "API reference and README only", "accepted without docs")


def _summary(counts: dict[str, int]) -> str:
    """`12 built, 40 up to date; 9 of them README only` (README-only counted apart)."""
    text = ", ".join(f"{n} {a}" for a, n in sorted(counts.items()) if a not in DERIVED)
    apart = [f"{counts[k]} {'of them ' if i == 0 else ''}{k.replace('readme', 'README')}"
             for i, k in enumerate(k for k in DERIVED if counts.get(k))]
    return text + ("; " + ", ".join(apart) if apart else "")


MAX_TABLE_ROWS = 300  # past this, rows that need nothing are counted, not printed (--json has all)


def _shown_rows(rows: list[Row]) -> tuple[list[Row], int]:
    """The rows to print: all of them up to MAX_TABLE_ROWS, else those that need attention
    first (not up to date, not skipped), up to MAX_TABLE_ROWS; and how many were left out."""
    if len(rows) <= MAX_TABLE_ROWS:
        return rows, 0
    quiet = ("up to date", "skip")
    shown = [r for r in rows if r.action not in quiet or r.docs in ("readme", "api")][:MAX_TABLE_ROWS]
    return shown, len(rows) - len(shown)


def _docs_label(row: Row) -> str:
    if row.docs == "readme":
        return " (README only)"
    if row.docs == "api":
        return " (API + README)"
    return f" (docs: {row.docs_version})" if row.docs_version else ""


def _source(row: Row) -> str:
    return _escape(row.source)


def _escape(text: str) -> str:
    return table_cell(text)


def _size(size: int | None) -> str:
    if size is None:
        return ""
    return f"{size / 1_000_000:.1f} MB" if size >= 100_000 else f"{size / 1000:.0f} kB"


@contextmanager
def _progress(enabled: bool) -> Iterator[tuple[Callable[[list[Row]], None] | None, Callable[[Row], None] | None]]:
    """(on_plan, on_done) callbacks driving a rich bar on a terminal; (None, None) otherwise."""
    if not enabled:
        yield None, None
        return
    from rich.console import Console
    from rich.progress import Progress

    from .progress import columns, watching_downloads

    with Progress(*columns(), console=Console(stderr=True), transient=True) as bar, watching_downloads(bar):
        task = bar.add_task("syncing", total=None)

        def on_plan(rows: list[Row]) -> None:
            bar.update(task, total=sum(r.action in ("download", "build") for r in rows))

        def on_done(row: Row) -> None:
            bar.update(task, advance=1, description=table_cell(f"{row.action} {row.label}"))

        yield on_plan, on_done
