"""`context api NAME`: a symbol's entry from the API reference read from the released code."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..apiref.lookup import Found, Lookup, find_api
from ..store.store import Installed, Store
from .project import project_options, project_scope
from .render import echo, json_safe


@click.command("api")
@click.argument("name")
@click.option("--lib", "libs", multiple=True, help="Only this package ([registry/]name[@version]); repeatable.")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@project_options
def api(name: str, libs: tuple[str, ...], fmt: str, project: Path | None, no_project: bool) -> None:
    """Show NAME's entry: signature, docs, deprecation, source (qualified or not: send_file,
    flask.send_file, Session.request). Exits 1 when nothing has that name, with close matches."""
    from .cmd_search import select_packages

    store = Store()
    packages: list[Installed] = select_packages(store, libs, project_scope(store, project, no_project))
    found = find_api(name, packages)
    if fmt == "json":
        click.echo(json_safe(json.dumps(found.to_dict(), indent=2, ensure_ascii=False)))
    elif found.symbols:
        echo("\n\n".join(_markdown(f) for f in found.symbols) + _more(found), redacted=False)
    if not found.symbols:
        if fmt != "json":
            hint = f"; did you mean: {', '.join(found.suggestions)}?" if found.suggestions else ""
            echo(f"Error: no symbol {found.query!r} in {', '.join(found.libraries)}{hint}", err=True)
        raise SystemExit(1)


def _markdown(f: Found) -> str:
    s = f.symbol
    parts = [f"## {s.name} ({s.kind}, {f.library})"]
    if s.signature:
        parts.append(f"```\n{s.signature}\n```")
    if s.deprecated is not None:
        parts.append(f"**Deprecated:** {s.deprecated}" if s.deprecated else "**Deprecated.**")
    if s.aliases:
        parts.append("Also available as " + ", ".join(f"`{a}`" for a in s.aliases) + ".")
    if s.doc:
        parts.append(s.doc)
    parts.append(f"Source: {s.source}:{s.line}")
    return "\n\n".join(parts)


def _more(found: Lookup) -> str:
    return f"\n\n({found.more} more entries of that name; qualify it, e.g. Class.{found.query})" if found.more else ""
