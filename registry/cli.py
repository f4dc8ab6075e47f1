"""`context-registry`: check definitions, discover versions, build and publish packages.

Commands parse options, call one library function and print. Our exceptions become one
line and a non-zero exit (the group does it, so commands added later get it too).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from context_cli.environment import REGISTRY_DEFINITIONS
from context_cli.errors import ContextError
from context_cli.surfaces.render import echo

if TYPE_CHECKING:
    from .definitions import Definition

DEFINITIONS_ENV = REGISTRY_DEFINITIONS.name


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
    """$CONTEXT_REGISTRY_DEFINITIONS, else ./packages.yaml, else the catalogue this
    distribution ships (`registry/packages.yaml`)."""
    from context_cli.sources.docsources.catalogue import shipped

    chosen = REGISTRY_DEFINITIONS.value()
    if chosen:
        return Path(chosen)
    here = Path("packages.yaml")
    return here if here.exists() else shipped()


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
    help=f"packages.yaml or definitions folder [default: ${DEFINITIONS_ENV}, ./packages.yaml or the "
         "shipped catalogue]",
)


@main.command()
@click.argument("path", type=click.Path(path_type=Path), required=False)
@click.option("--strict", is_flag=True, help="Treat warnings (unknown keys) as errors.")
def validate(path: Path | None, strict: bool) -> None:
    """Check every definition in PATH (a packages.yaml, one definition file, or a folder;
    default: as --definitions chooses)."""
    from .definitions import load

    result = load(_definitions_path(path))
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
        "site": {"url": d.site.url, "latest": d.site.latest} if d.site else None,
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
        echo(f"{row['version']:<16} {date:<10}{extra}".rstrip())


# ---- build, publish, publish-all -----------------------------------------------------------
# These commands belong to the publishing half and are registered here, on `main`, by whoever
# implements them (e.g. `@main.command() def build(...)` importing from registry.build); they
# get the same one-line error handling from `_Group` without doing anything.


def _spec(spec: str) -> str:
    registry, sep, name = spec.partition("/")
    if not sep or not registry or not name or spec.startswith("@"):
        raise click.BadParameter("write it as REGISTRY/NAME, e.g. pip/flask", param_hint="SPEC")
    return spec


embed_options = [
    click.option("--no-embed", is_flag=True, help="Skip embeddings (lexical search only)."),
    click.option("--model", "embed_model", default=None, metavar="MODEL",
                 help="Embedding model [default: the configured one]."),
    click.option("--quality/--no-quality", default=None,
                 help="Also the quality vectors (needs context-docs[quality] and the model; "
                      "docs/quality-vectors.md) [default: config.json's quality.build]."),
]


def _with(options: list[Any]) -> Callable[[Any], Any]:
    def apply(f: Any) -> Any:
        for option in reversed(options):
            f = option(f)
        return f
    return apply


@main.command("build")
@click.argument("spec", metavar="REGISTRY/NAME")
@click.argument("version", required=False)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="Folder for the package file.")
@definitions_option
@_with(embed_options)
def build_cmd(spec: str, version: str | None, out_dir: Path, definitions_path: Path | None,
              no_embed: bool, embed_model: str | None, quality: bool | None) -> None:
    """Build REGISTRY/NAME at VERSION into a package file in --out.

    Without VERSION a versioned definition builds its newest release; an unversioned one
    always builds `latest` from its branch.
    """
    from .build import build_definition, releases
    from .definitions import find_definition, load_definitions

    definition = find_definition(load_definitions(_definitions_path(definitions_path)), _spec(spec))
    if definition.versioned and not version:
        found = releases(definition, latest=1)
        if not found:
            raise click.ClickException(f"no releases of {definition.key} fall in its version "
                                       "ranges; give a VERSION")
        version = found[0]
    result = build_definition(definition, version, out_dir, embed=not no_embed,
                              embed_model=embed_model, quality=quality)
    for note in result.notes:
        echo(f"  {note}", err=True)
    size = result.path.stat().st_size
    vectors = f"vectors: {result.embedding_model}" if result.embedding_model else "no vectors"
    click.echo(f"Built {result.id.qualified}: {result.chunks} sections from {result.pages} pages, "
               f"{size / 1e6:.1f} MB, {vectors}, in {result.seconds:.1f}s -> {result.path}")


server_option = click.option(
    "--server", default=None, metavar="NAME",
    help="A server from config.json [default: $REGISTRY_SERVER_URL].")


@main.command("publish")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                metavar="FILE.db")
@click.option("--registry", default=None, metavar="R",
              help="Registry to publish under [default: the file's own].")
@server_option
def publish_cmd(file: Path, registry: str | None, server: str | None) -> None:
    """Upload FILE.db to a registry server.

    The key comes from $REGISTRY_PUBLISH_KEY (or $CONTEXT_REGISTRY_KEY); the server from
    --server, else $REGISTRY_SERVER_URL.
    """
    from .publish import publish_file, resolve_target

    target = resolve_target(server)
    done = publish_file(file, target, registry=registry)
    verb = "Already published (same bytes):" if done.status == "unchanged" else "Published"
    click.echo(f"{verb} {done.id.qualified} to {target.name} ({done.size / 1e6:.1f} MB)")


@main.command("publish-all")
@click.option("--since", "since_days", type=click.FloatRange(min=0), default=None,
              metavar="DAYS", help="Only releases from the last DAYS days.")
@click.option("--latest", type=click.IntRange(min=1), default=None, metavar="N",
              help="Only the newest N minors of each package.")
@click.option("--only", default=None, metavar="REGISTRY/NAME", help="Only this definition.")
@definitions_option
@click.option("--dry-run", is_flag=True,
              help="Say what would be built and published; build and upload nothing.")
@server_option
@_with(embed_options)
def publish_all_cmd(since_days: float | None, latest: int | None, only: str | None,
                    definitions_path: Path | None, dry_run: bool, server: str | None,
                    no_embed: bool, embed_model: str | None, quality: bool | None) -> None:
    """Build and publish every release the server does not have yet.

    Skips versions the server already has, unversioned sources whose commit is unchanged,
    and releases whose git tag is missing. Retries 5xx answers, stops on a refused key.
    Ends with a summary; exits 1 if anything failed.
    """
    from .definitions import load_definitions
    from .publish import PublishAllOptions, publish_all, resolve_target

    if only:
        _spec(only)
    defs = load_definitions(_definitions_path(definitions_path))
    target = resolve_target(server, need_key=not dry_run)
    opts = PublishAllOptions(since_days=since_days, latest=latest, only=only, dry_run=dry_run,
                             embed=not no_embed, embed_model=embed_model, quality=quality)
    summary = publish_all(defs, target, opts, report=lambda o: click.echo(o.line()))
    for line in summary.lines():
        click.echo(line)
    if not summary.ok:
        raise SystemExit(1)
