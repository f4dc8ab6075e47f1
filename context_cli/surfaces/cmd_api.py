"""`context api NAME` and `context changes LIB FROM TO`: the API reference read from the released code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..apiref.changes import DEFAULT_TOKENS as CHANGES_TOKENS
from ..apiref.changes import Changes as ChangesResult
from ..apiref.changes import by_parameters
from ..apiref.lookup import Found, Lookup, find_api
from ..apiref.pages import deprecation_note, since_note
from ..store.store import Installed, Store
from .project import project_options, project_scope
from .render import echo, json_safe

MAX_NAMED = 5  # libraries an error names; past this it counts them (one line, however many are installed)


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
    for note in found.notes if fmt != "json" else ():
        echo(f"Note: {note}", err=True)
    if fmt == "json":
        click.echo(json_safe(json.dumps(found.to_dict(), indent=2, ensure_ascii=False)))
    elif found.symbols:
        echo("\n\n".join(_markdown(f) for f in found.symbols) + _more(found), redacted=False)
    if not found.symbols:
        if fmt != "json":
            hint = f"; did you mean: {', '.join(found.suggestions)}?" if found.suggestions else ""
            where = ", ".join(found.libraries) if len(found.libraries) <= MAX_NAMED else \
                f"any of the {len(found.libraries)} installed libraries with an API reference (--lib names one)"
            echo(f"Error: no symbol {found.query!r} in {where}{hint}", err=True)
        raise SystemExit(1)


def _markdown(f: Found) -> str:
    s = f.symbol
    parts = [f"## {s.name} ({s.kind}, {f.library})"]
    if s.signature:
        parts.append(f"```\n{s.signature}\n```")
    if deprecated := deprecation_note(s):
        parts.append(deprecated)
    if s.aliases:
        parts.append("Also available as " + ", ".join(f"`{a}`" for a in s.aliases) + ".")
    if since := since_note(s):  # (a JSDoc @since; a docstring's versionadded is in its text)
        parts.append(since)
    if s.doc:
        parts.append(s.doc)
    parts.append(f"Source: {s.source}:{s.line}")
    return "\n\n".join(parts)


def _more(found: Lookup) -> str:
    return f"\n\n({found.more} more entries of that name; qualify it, e.g. Class.{found.query})" if found.more else ""


@click.command("changes")
@click.argument("library")
@click.argument("old", metavar="FROM")
@click.argument("new", metavar="TO", required=False)
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True)
@click.option("--no-fetch", is_flag=True, help="Use installed versions only (never download or build).")
@click.option("--budget", type=click.IntRange(100, 10_000_000), default=CHANGES_TOKENS, show_default=True,
              help="Most tokens to print: removed entries first, then changed parameters, deprecations, additions, "
                   "annotation changes and release notes; the rest is counted.")
@project_options
def changes(library: str, old: str, new: str | None, fmt: str, no_fetch: bool, budget: int, project: Path | None,
            no_project: bool) -> None:
    """What changed in LIBRARY's API from FROM to TO: symbols added, removed, changed and newly
    deprecated, and the release notes in between. A version that is not installed is got as
    `sync` gets one (registry server, else the released artefact). Inside a synced project TO
    defaults to the project's version."""
    from ..apiref.changes import changes as compare_versions
    from ..apiref.obtain import obtain, registry_of
    from ..store.store import Spec

    store = Store()
    spec = Spec.parse(library)
    if new is None:
        scope = project_scope(store, project, no_project)
        mine = store.find(Spec(spec.name, None, spec.registry), among=scope.packages) if scope.lock else []
        if not mine:
            raise click.UsageError("give TO (the version to compare FROM with)")
        new = mine[0].id.version
    registry = registry_of(store, spec)
    before = obtain(store, registry, spec.name, old, fetch=not no_fetch)
    after = obtain(store, registry, spec.name, new, fetch=not no_fetch)
    result = compare_versions(before, after).within(budget)
    if fmt == "json":
        click.echo(json_safe(json.dumps(result.to_dict(), indent=2, ensure_ascii=False)))
        return
    echo(_changes_markdown(result), redacted=False)


def _changes_markdown(c: ChangesResult) -> str:
    def count(items: list[Any], key: str) -> str:
        left = c.left_out.get(key, 0)
        return f"{len(items)} of {len(items) + left}" if left else str(len(items))

    lines = [f"# {c.old} -> {c.new}", ""]
    for title, items, key in (("Added", c.added, "added"), ("Removed", c.removed, "removed")):
        lines += [f"## {title} ({count(items, key)})", ""] + [f"- `{s.name}` ({s.kind})" for s in items] + [""]
    lines += [f"## Changed ({count(c.changed, 'changed')})"]
    for title, pairs in zip(("In their parameters", "In annotations only"), by_parameters(c.changed), strict=True):
        if pairs:
            lines += ["", f"### {title} ({len(pairs)})", ""]
        for o, n in pairs:
            lines += [f"- `{n.name}`", f"  - before: `{' '.join(o.signature.split())}`",
                      f"  - now: `{' '.join(n.signature.split())}`"]
    lines += ["", f"## Newly deprecated ({count(c.deprecated, 'deprecated')})", ""]
    lines += [f"- `{s.name}`" + (f": {s.deprecated}" if s.deprecated else "") for s in c.deprecated]
    if c.notes:
        lines += ["", "## Release notes", ""]
        for note in c.notes:
            lines += [f"### {note.title}", "", note.content, ""]
    cut = [f"{n} {what}" for what, n in (*c.left_out.items(), ("release notes", c.notes_left_out)) if n]
    if cut:
        lines += ["", f"Left out to fit the budget: {', '.join(cut)} (--budget shows more)."]
    return "\n".join(lines).rstrip()
