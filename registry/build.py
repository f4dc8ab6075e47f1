"""Build one registry definition at one version into a package file.

The definition says where the docs live; this module fetches exactly that and hands it to the
same builder `context add` uses. Each source type reuses the client's own fetcher, so a
package built here and one made with `context add` from the same source are the same:

* `pypi` / `npm`: the release's sdist or tarball (`context_cli.sources.artefact`, the code
  behind `context add pypi:NAME==VER` / `npm:NAME@VER`), checked against the registry digest;
* `git`: one tag (versioned: the range's `tag_pattern`) or the branch of an unversioned
  definition (its `ref`, else the remote's default branch), via `context_cli.sources.git`;
* `zip`: the archive at `url` (with `{version}` filled in), extracted safely; `docs_path`
  is relative to the archive's root, as Neuledge reads it.

Then `exclude_paths` are applied (the matching files are deleted from the fetched tree, which
is always a temp dir of ours) and `lang` picks the locale folders to keep. The package gets
the definition's registry, its name and the version asked for (`latest` when unversioned).

Fetching and building are separate steps (`fetch_for`, `build_fetched`) so that
`publish-all` can compare what it fetched with what the server has before paying for a build.
"""

from __future__ import annotations

from pathlib import Path

from context_cli.build import BuildOptions, BuildResult, Progress, build
from context_cli.package.identity import check_identity
from context_cli.sources.base import Fetched

from .definitions import (
    Definition,
    DefinitionError,
    NpmSource,
    PypiSource,
    Source,
)
from .fetch import fetch_defined


def build_definition(definition: Definition, version: str | None, out_dir: Path, *,
                     embed: bool = True, embed_model: str | None = None,
                     progress: Progress | None = None, quality: bool | None = None) -> BuildResult:
    """Fetch and build `definition` at `version` into `out_dir`; returns the build result.

    `version` is required for versioned definitions and must be None or `latest` otherwise.
    """
    version = version_to_build(definition, version)
    fetched, source = fetch_for(definition, version)
    try:
        return build_fetched(definition, version, fetched, source, out_dir,
                             embed=embed, embed_model=embed_model, progress=progress, quality=quality)
    finally:
        fetched.cleanup()


def version_to_build(definition: Definition, version: str | None) -> str:
    """The package version: the one asked for, or `latest` for an unversioned definition."""
    if not definition.versioned:
        if version not in (None, "latest"):
            raise DefinitionError(f"{definition.key} is unversioned; it builds only as 'latest'")
        return "latest"
    if not version or version == "latest":
        raise DefinitionError(f"{definition.key} is versioned; give a version "
                              f"(see `context-registry versions {definition.key}`)")
    return version


def fetch_for(definition: Definition, version: str) -> tuple[Fetched, Source]:
    """Fetch the docs of `definition` at `version`; the caller must `cleanup()` the result.

    An artefact source goes through the client's docs-source ladder (`context_cli.sources.
    docsources`), so a release whose sdist or tarball has only a README is built from its
    repository's tag or its versioned site, exactly as `context sync` would build it.
    """
    source = definition.resolve_source(None if version == "latest" else version)
    if isinstance(source, PypiSource | NpmSource):
        from context_cli.sources.docsources.ladder import resolve

        return resolve(definition.registry, definition.name, version, definition=definition).fetched, source
    return fetch_defined(definition, version)


def build_fetched(definition: Definition, version: str, fetched: Fetched, source: Source,
                  out_dir: Path, *, embed: bool = True, embed_model: str | None = None,
                  progress: Progress | None = None, quality: bool | None = None) -> BuildResult:
    """Build what `fetch_for` returned into `out_dir/<registry>__<name>__<version>.db`;
    `quality` adds the second vector set (None: as config.json says)."""
    pid = check_identity(definition.registry, definition.name, version)
    out_dir.mkdir(parents=True, exist_ok=True)
    opts = BuildOptions(
        name=definition.name, version=version, registry=definition.registry,
        lang=source.lang, description=definition.description, embed=embed,
        embed_model=embed_model, quality=quality,
    )
    return build(fetched, out_dir / pid.filename, opts, progress)


def releases(definition: Definition, *, since_days: float | None = None,
             latest: int | None = None) -> list[str]:
    """The versions to build, newest first (`discover_for`'s choice)."""
    from .discovery import discover_for

    found = discover_for(definition, since_days=since_days, latest=latest)
    return [d.version for d in found]


