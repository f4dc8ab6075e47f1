"""Fetching what a definition names, for one version: its repository's tag, its released
artefact or its zipped site, less `exclude_paths`.

Apart from `build.py` so that the client's docs-source ladder can fetch a definition's
source without importing the publisher's build (which itself uses the ladder).
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from context_cli.errors import SourceError
from context_cli.sources.base import Fetched, SourceOptions
from context_cli.sources.git import clean_url, fetch_git, ls_remote

from .definitions import Definition, GitSource, NpmSource, PypiSource, Source, ZipSource, is_excluded

MAX_ZIP_BYTES = 512 * 1024 * 1024


class MissingRef(SourceError):
    """The git tag a release needs is not in the repository (not pushed yet, or deleted).

    `publish-all` skips such releases instead of failing: the next run picks them up.
    """


@dataclass(frozen=True)
class RemoteRef:
    """A branch or tag of a remote and the commit it points at."""

    ref: str
    commit: str


def fetch_defined(definition: Definition, version: str) -> tuple[Fetched, Source]:
    """Fetch exactly what `definition` names for `version` (the ladder's definition step)."""
    source = definition.resolve_source(None if version == "latest" else version)
    chosen = definition.range_for(version) if definition.versioned else None
    covers = chosen.docs_version if chosen is not None else None
    if isinstance(source, GitSource):
        fetched = _fetch_git(source, tagged=definition.versioned and covers is None)
        if covers is not None:
            # A docs repository's folder or branch for a major version: said, never passed off.
            fetched.meta.update({"docs_version": covers, "docs_ref": fetched.source_commit or source.ref or "default branch"})
            fetched.notes.append(f"docs from {fetched.source_url} ({covers}, not tagged per release)")
    elif isinstance(source, ZipSource):
        fetched = fetch_zip(source)
    else:
        fetched = _fetch_artefact(definition, source, version)
    try:
        removed = drop_excluded(fetched, source.exclude_paths)
        if removed:
            fetched.notes.append(f"left out {removed} file{'s' if removed != 1 else ''} "
                                 "matching exclude_paths")
    except BaseException:
        fetched.cleanup()
        raise
    return fetched, source


# ---- artefacts -----------------------------------------------------------------------------


def _fetch_artefact(definition: Definition, source: PypiSource | NpmSource,
                    version: str) -> Fetched:
    from context_cli.sources.artefact import fetch_npm, fetch_pypi

    name = source.package or definition.name
    if isinstance(source, PypiSource):
        return fetch_pypi(name, version, docs_path=source.docs_path)
    return fetch_npm(name, version, docs_path=source.docs_path)


# ---- git -----------------------------------------------------------------------------------


def _fetch_git(source: GitSource, *, tagged: bool) -> Fetched:
    """The source's tag (`tagged`: a release's tag, which must exist), else its branch or tag
    `ref`, else the default branch."""
    if tagged:
        assert source.ref is not None  # resolve_source filled in the tag
        if not remote_refs(source.url, f"refs/tags/{source.ref}"):
            raise MissingRef(f"{clean_url(source.url)} has no tag {source.ref!r}")
        ref = source.ref
    else:
        ref = remote_head(source.url, source.ref).ref
    return fetch_git(source.url, SourceOptions(tag=ref, path=source.docs_path))


def remote_head(url: str, ref: str | None = None) -> RemoteRef:
    """What an unversioned git source would build now: `ref` (a branch, else a tag) or the
    remote's default branch, with its commit. One `git ls-remote`, no clone."""
    if ref is None:
        lines = ls_remote(url, "HEAD", symref=True)
        branch = next((r.removeprefix("ref: refs/heads/") for sha, r in lines
                       if sha == "" and r.startswith("ref: refs/heads/")), None)
        commit = next((sha for sha, r in lines if r == "HEAD" and sha), None)
        if not branch or not commit:
            raise SourceError(f"{clean_url(url)}: cannot tell the default branch (no HEAD)")
        return RemoteRef(branch, commit)
    found = dict((r, sha) for sha, r in remote_refs(url, ref))
    for candidate in (f"refs/heads/{ref}", f"refs/tags/{ref}^{{}}", f"refs/tags/{ref}"):
        if candidate in found:
            return RemoteRef(ref, found[candidate])
    raise MissingRef(f"{clean_url(url)} has no branch or tag {ref!r}")


def remote_refs(url: str, *patterns: str) -> list[tuple[str, str]]:
    """(commit, ref) pairs that `git ls-remote` lists for `patterns` (peeled tags included)."""
    return [(sha, r) for sha, r in ls_remote(url, *patterns) if sha]


# ---- zip -----------------------------------------------------------------------------------


def fetch_zip(source: ZipSource) -> Fetched:
    """Download (or copy, for `file://`) and extract a zipped doc site into a temp dir.

    The archive's SHA-256 is recorded as `source_commit` (`sha256:...`): an unversioned zip
    whose bytes have not changed is then recognised as already published.
    """
    from context_cli.sources.archive import extract
    from context_cli.sources.http import safe_url

    tmp = Path(tempfile.mkdtemp(prefix="context-zip-"))
    try:
        archive = tmp / "archive.zip"
        digest = _download(source.url, archive)
        root = tmp / "src"
        extracted = extract(archive, root)
        archive.unlink()
        docs_path = source.docs_path
        if docs_path and not (root / docs_path).exists():
            raise SourceError(f"{safe_url(source.url)} has no {docs_path!r} folder")
        shown = safe_url(source.url) if not source.url.startswith("file:") else Path(
            unquote(urlsplit(source.url).path)).name
        return Fetched(source_type="zip", source_url=shown, folder=root, docs_path=docs_path,
                       source_commit=f"sha256:{digest}", temp_dirs=[tmp],
                       notes=[f"downloaded {shown}", *extracted.notes()])
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _download(url: str, dest: Path) -> str:
    """Stream `url` to `dest` with a size cap; returns the SHA-256 hex digest."""
    from context_cli.sources.artefact import http_get
    from context_cli.sources.http import safe_url

    digest, total = hashlib.sha256(), 0
    if url.startswith("file:"):
        local = Path(unquote(urlsplit(url).path))
        if not local.is_file():
            raise SourceError(f"{local.name}: no such file")
        with local.open("rb") as src, dest.open("wb") as out:
            for block in iter(lambda: src.read(1 << 20), b""):
                digest.update(block)
                out.write(block)
        return digest.hexdigest()
    shown = safe_url(url)
    r = http_get(url, what=f"download of {shown}", not_found=f"{shown}: not found (404)",
                 stream=True)
    with r, dest.open("wb") as out:
        for block in r.iter_content(1 << 20):
            total += len(block)
            if total > MAX_ZIP_BYTES:
                raise SourceError(f"{shown} is over the {MAX_ZIP_BYTES}-byte limit")
            digest.update(block)
            out.write(block)
    return digest.hexdigest()


# ---- exclude_paths -------------------------------------------------------------------------


def drop_excluded(fetched: Fetched, patterns: tuple[str, ...]) -> int:
    """Delete the files under the docs path that match `patterns`; returns how many.

    Only ever done to a tree this process fetched into a temp dir (never a user's folder).
    """
    if not patterns or fetched.folder is None:
        return 0
    folder = fetched.folder.resolve()
    if not any(folder.is_relative_to(Path(t).resolve()) for t in fetched.temp_dirs):
        raise SourceError("exclude_paths can only be applied to a fetched copy of the source")
    base = folder / fetched.docs_path if fetched.docs_path else folder
    if not base.is_dir():
        return 0
    removed = 0
    for path in sorted(base.rglob("*")):
        if (path.is_file() or path.is_symlink()) and is_excluded(
                path.relative_to(base).as_posix(), patterns):
            path.unlink()
            removed += 1
    return removed
