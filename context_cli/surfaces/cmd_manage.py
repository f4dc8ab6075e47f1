"""`context list`, `info`, `remove`: manage installed packages."""

from __future__ import annotations

import json

import click

from ..store.store import Store


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(as_json: bool) -> None:
    """List installed packages, newest version first."""
    rows = [
        {"registry": i.id.registry, "name": i.id.name, "version": i.id.version,
         "sections": int(i.meta.get("chunk_count") or 0) or None,
         "vectors": bool(i.meta.get("embedding_dim")), "size": i.path.stat().st_size,
         "description": i.meta.get("description", "")}
        for i in Store().installed()
    ]
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("No packages installed. Add one with `context add FOLDER` or `context install REGISTRY/NAME`.")
        return
    for r in rows:
        vec = "hybrid" if r["vectors"] else "lexical"
        click.echo(f"{r['registry']}/{r['name']}@{r['version']}  {r['sections'] or '?'} sections  "
                   f"{r['size'] / 1e6:.1f} MB  {vec}")


@click.command("info")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def info(spec: str, as_json: bool) -> None:
    """Show an installed package's details (SPEC: [registry/]name[@version])."""
    store = Store()
    with store.open(spec) as pkg:
        data = {"registry": pkg.id.registry, "name": pkg.name, "version": pkg.version,
                "path": str(pkg.path), "size": pkg.path.stat().st_size,
                "sections": pkg.chunk_count(), "vectors": pkg.has_vectors, "meta": pkg.meta,
                "versions": [i.id.version for i in store.find(f"{pkg.id.registry}/{pkg.name}")]}
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    meta = data["meta"]
    click.echo(f"{data['registry']}/{data['name']}@{data['version']}")
    lines = [
        ("description", meta.get("description")),
        ("sections", data["sections"]),
        ("size", f"{data['size'] / 1e6:.2f} MB"),
        ("source", f"{meta.get('source_type', '?')}: {meta.get('source_url', '?')}"),
        ("commit", meta.get("source_commit")),
        ("built", f"{meta.get('built_at', '?')} by {meta.get('builder', 'unknown')}"),
        ("embeddings", (f"{meta['embedding_model']} ({meta.get('embedding_dim')} dims, "
                        f"{meta.get('embedding_dtype', 'int8')}, fingerprint {meta.get('embedding_fingerprint', '?')})")
         if data["vectors"] else "none (lexical search only)"),
        ("installed", ", ".join(data["versions"])),
        ("file", data["path"]),
    ]
    for key, value in lines:
        if value:
            click.echo(f"  {key:<11} {value}")


@click.command("remove")
@click.argument("spec")
def remove(spec: str) -> None:
    """Remove an installed package (SPEC: [registry/]name[@version])."""
    removed = Store().remove(spec)
    click.echo(f"Removed {removed.id.qualified}")
