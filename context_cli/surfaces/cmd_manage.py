"""`context list`, `info`, `remove`: manage installed packages."""

from __future__ import annotations

import json
from typing import Any

import click

from ..package.reader import open_package
from ..store.store import Installed, Store
from .render import echo


def _row(i: Installed) -> dict[str, Any]:
    """One package as `context list --json` prints it."""
    return {"registry": i.id.registry, "name": i.id.name, "version": i.id.version,
            "sections": int(i.meta.get("chunk_count") or 0) or None,
            "vectors": bool(i.meta.get("embedding_dim")), "size": i.path.stat().st_size,
            "description": i.meta.get("description", "")}


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(as_json: bool) -> None:
    """List installed packages, newest version first."""
    installed = Store().installed()
    if as_json:
        click.echo(json.dumps([_row(i) for i in installed], indent=2))
        return
    if not installed:
        click.echo("No packages installed. Add one with `context add FOLDER` or `context install REGISTRY/NAME`.")
        return
    for i in installed:
        vec = "hybrid" if i.meta.get("embedding_dim") else "lexical"
        echo(f"{i.id.qualified}  {i.meta.get('chunk_count') or '?'} sections  "
                   f"{i.path.stat().st_size / 1e6:.1f} MB  {vec}")


@click.command("info")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def info(spec: str, as_json: bool) -> None:
    """Show an installed package's details (SPEC: [registry/]name[@version])."""
    store = Store()
    inst = store.resolve(spec)
    with open_package(inst.path, registry=inst.id.registry) as pkg:
        sections, vectors, meta = pkg.chunk_count(), pkg.has_vectors, dict(pkg.meta)
    size = inst.path.stat().st_size
    versions = [i.id.version for i in store.find(f"{inst.id.registry}/{inst.id.name}")]
    mode, why = _search_mode(inst)
    if as_json:
        click.echo(json.dumps({"registry": inst.id.registry, "name": inst.id.name, "version": inst.id.version,
                               "path": str(inst.path), "size": size, "sections": sections, "vectors": vectors,
                               "meta": meta, "versions": versions, "origin": inst.origin,
                               "search": mode, "searchNote": why}, indent=2))
        return
    echo(inst.id.qualified)
    lines = [
        ("description", meta.get("description")),
        ("sections", sections),
        ("size", f"{size / 1e6:.2f} MB"),
        ("source", describe_source(meta)),
        ("docs", _docs_line(meta, inst.id.version)),
        ("commit", meta.get("source_commit")),
        ("built", f"{meta.get('built_at', '?')} by {meta.get('builder', 'unknown')}"),
        ("embeddings", (f"{meta['embedding_model']} ({meta.get('embedding_dim')} dims, "
                        f"{meta.get('embedding_dtype', 'int8')}, fingerprint {meta.get('embedding_fingerprint', '?')})")
         if vectors else "none (lexical search only)"),
        ("search", "hybrid (BM25 + embeddings)" if mode == "hybrid" else f"LEXICAL ONLY: {why}"),
        ("installed", ", ".join(versions)),
        ("from", inst.origin),
        ("file", str(inst.path)),
    ]
    for key, value in lines:
        if value:
            echo(f"  {key:<11} {value}")


def _docs_line(meta: dict[str, str], version: str) -> str | None:
    """Where the docs came from (the docs-source ladder's step), and what they cover when that
    is not exactly this version."""
    from ..package.docs_cover import docs_note

    step, ref = meta.get("docs_source"), meta.get("docs_ref")
    if step == "readme" and meta.get("symbol_count", "0") not in ("", "0"):
        step = "api (the README and the API read from the released code)"  # as sync labels it
    note = docs_note({**meta, "version": version})
    if note:
        return f"{step or '?'}: {note}"
    return f"{step}" + (f" at {ref}" if ref else "") if step else None


@click.command("remove")
@click.argument("spec")
def remove(spec: str) -> None:
    """Remove an installed package (SPEC: [registry/]name[@version])."""
    removed = Store().remove(spec)
    click.echo(f"Removed {removed.id.qualified}")


SOURCE_KINDS = {"git": "git repository", "web": "website", "folder": "folder", "db": "package file",
                "openapi": "OpenAPI spec"}


def describe_source(meta: dict[str, str]) -> str:
    """Where a package's docs came from, in words: `flask 3.1.0's sdist on PyPI
    (pypi:flask==3.1.0)` rather than the meta keys side by side."""
    kind, url = meta.get("source_type") or "", meta.get("source_url") or ""
    if kind == "pypi" and url.startswith("pypi:") and "==" in url:
        name, _, version = url.removeprefix("pypi:").partition("==")
        artefact = meta.get("artefact") or ""  # the release's file, for a wheel (no sdist) named
        return f"{name} {version}'s {'wheel ' + artefact if artefact.endswith('.whl') else 'sdist'} on PyPI ({url})"
    if kind == "npm" and url.startswith("npm:"):
        return f"{url.removeprefix('npm:')}'s tarball on npm ({url})"
    if kind in SOURCE_KINDS:
        return f"{SOURCE_KINDS[kind]} {url}".strip()
    return " ".join(part for part in (kind, url) if part) or "unknown"


def _search_mode(inst: Installed) -> tuple[str, str | None]:
    """How a search of this package will run here, and why not hybrid: a missing embedding
    model must be impossible to miss, since search still works (lexically) without it."""
    from ..search.searcher import open_searcher

    s = open_searcher(inst)
    return ("hybrid", None) if s.dense() is not None else ("lexical", s.note)
