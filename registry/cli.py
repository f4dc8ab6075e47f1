"""`context-registry`: check definitions, discover versions, build and publish packages.

Commands parse options, call one library function and print. Our exceptions become one
line and a non-zero exit (the group does it, so commands added later get it too).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from context_cli.errors import ContextError

if TYPE_CHECKING:
    from .definitions import Definition

DEFINITIONS_ENV = "CONTEXT_REGISTRY_DEFINITIONS"


class _Group(click.Group):
    """Turns any `ContextError` raised by a command into a one-line `ClickException`."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ContextError as e:
            raise click.ClickException(str(e)) from None


@click.group(cls=_Group)
@click.version_option(package_name="context-docs")
def main() -> None:
    """Build and publish documentation packages from registry definitions.

    Definitions live in a packages.yaml keyed by registry, or in a folder tree in Neuledge
    Context's layout (<registry>/<name>.yaml).
    """


def default_definitions() -> Path:
    """$CONTEXT_REGISTRY_DEFINITIONS, else ./packages.yaml."""
    return Path(os.environ.get(DEFINITIONS_ENV) or "packages.yaml")


def _definitions_path(path: Path | None) -> Path:
    chosen = path or default_definitions()
    if not chosen.exists():
        raise click.ClickException(
            f"{chosen}: no such file or folder; give a packages.yaml or a definitions folder "
            f"(or set {DEFINITIONS_ENV})"
        )
    return chosen


definitions_option = click.option(
    "--definitions", "-d", "definitions_path", type=click.Path(path_type=Path), default=None,
    help=f"packages.yaml or definitions folder [default: ${DEFINITIONS_ENV} or ./packages.yaml]",
)


@main.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings (unknown keys) as errors.")
def validate(path: Path, strict: bool) -> None:
    """Check every definition in PATH (a packages.yaml, one definition file, or a folder)."""
    from .definitions import load

    result = load(path)
    for w in result.warnings:
        click.echo(f"warning: {w}")
    for e in result.errors:
        click.echo(str(e))
    failed = len(result.errors) + (len(result.warnings) if strict else 0)
    n = len(result.definitions)
    summary = f"{n} definition{'s' if n != 1 else ''} loaded"
    if result.errors:
        summary += f", {len(result.errors)} error{'s' if len(result.errors) != 1 else ''}"
    if result.warnings:
        summary += f", {len(result.warnings)} warning{'s' if len(result.warnings) != 1 else ''}"
    click.echo(summary if failed else f"{summary}; all valid")
    if failed:
        raise SystemExit(1)


@main.command("list")
@click.argument("path", type=click.Path(path_type=Path), required=False)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_(path: Path | None, as_json: bool) -> None:
    """List the definitions in PATH with their version ranges."""
    from .definitions import load_definitions

    defs = load_definitions(_definitions_path(path))
    if as_json:
        click.echo(json.dumps([_definition_json(d) for d in defs], indent=2))
        return
    width = max((len(d.key) for d in defs), default=0)
    for d in defs:
        if d.versioned:
            ranges = ", ".join(r.describe() for r in d.versions)
            kinds = "/".join(dict.fromkeys(r.source.type for r in d.versions))
            click.echo(f"{d.key:<{width}}  [{ranges}]  {kinds}")
        else:
            assert d.source is not None
            click.echo(f"{d.key:<{width}}  (unversioned)  {d.source.type}")


def _definition_json(d: Definition) -> dict[str, Any]:
    return {
        "registry": d.registry,
        "name": d.name,
        "description": d.description,
        "repository": d.repository,
        "versioned": d.versioned,
        "ranges": [
            {"range": r.describe(), "tag_pattern": r.tag_pattern, "source": r.source.type}
            for r in d.versions
        ],
        "source": d.source.type if d.source else None,
        "origin": d.origin,
    }


@main.command()
@click.argument("spec", metavar="REGISTRY/NAME")
@click.option("--since", "since_days", type=click.FloatRange(min=0), default=None,
              help="Only releases from the last DAYS days.", metavar="DAYS")
@click.option("--latest", type=click.IntRange(min=1), default=None,
              help="Only the newest N minors.", metavar="N")
@definitions_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def versions(spec: str, since_days: float | None, latest: int | None,
             definitions_path: Path | None, as_json: bool) -> None:
    """Discover the releases of REGISTRY/NAME worth building (newest patch per minor).

    When a definition for it is found, only releases inside its ranges are listed, with the
    git tag each would be built from.
    """
    from .definitions import find_definition, load_definitions
    from .discovery import discover, discover_for

    registry, sep, name = spec.partition("/")
    if not sep or not registry or not name:
        raise click.BadParameter("write it as REGISTRY/NAME, e.g. npm/react", param_hint="SPEC")
    definition = None
    path = definitions_path or default_definitions()
    if definitions_path or path.exists():
        defs = load_definitions(_definitions_path(path))
        definition = next((d for d in defs if d.key == spec), None)
        if definition is None and definitions_path:
            find_definition(defs, spec)  # raises with a helpful message
    if definition is not None:
        found = discover_for(definition, since_days=since_days, latest=latest)
    else:
        found = discover(registry, name, since_days=since_days, latest=latest)
    rows = []
    for v in found:
        row = {"version": v.version,
               "released_at": v.released_at.isoformat() if v.released_at else None}
        if definition is not None and definition.versioned:
            src = definition.resolve_source(v.version)
            row["source"] = src.type
            ref = getattr(src, "ref", None)
            if ref:
                row["tag"] = ref
        rows.append(row)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo(f"no releases of {spec} match", err=True)
        return
    for row in rows:
        date = (row["released_at"] or "")[:10] or "-"
        extra = f"  {row['tag']}" if "tag" in row else ""
        click.echo(f"{row['version']:<16} {date:<10}{extra}".rstrip())


# ---- build, publish, publish-all -----------------------------------------------------------
# These commands belong to the publishing half and are registered here, on `main`, by whoever
# implements them (e.g. `@main.command() def build(...)` importing from registry.build); they
# get the same one-line error handling from `_Group` without doing anything.
