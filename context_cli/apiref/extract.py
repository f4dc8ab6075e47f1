"""The API of a source's code, by its language, summarised for the build: a released artefact
(its registry says the language), or a folder or repository that is a package (tree.py)."""

from __future__ import annotations

from concurrent.futures import CancelledError, Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ContextError
from ..sources.base import Fetched
from ..symbol import Symbol
from .model import ApiReference

if TYPE_CHECKING:
    from ..build_pages import Pool

MAX_NOTES = 10  # skipped files named in the build summary; the rest are counted
LANGUAGE_OF = {"pypi": "python", "npm": "typescript"}  # a released artefact's language, by its source type
RELEASE_KINDS = {"pip": "pypi", "npm": "npm"}  # registry -> the kind of artefact its releases are


class ApiReading:
    """A source's API, read by a page worker while the other workers parse the pages (given
    the build's `workers`), else here at once. Only a page with an autodoc directive waits for it
    (Expander); in a worker it costs no time of this process's, which hands out the pages."""

    def __init__(self, fetched: Fetched, *, registry: str, name: str, version: str,
                 workers: Pool | None = None) -> None:
        self._ref: ApiReference | None = None
        self._future: Future[ApiReference | None] | None = None
        self._args = (replace(fetched, documents=None), registry, name, version)  # (pages need not travel)
        try:
            self._future = workers.executor().submit(_extract, *self._args) if workers is not None else None
        except (OSError, RuntimeError):  # the pool is down: read it here
            self._future = None
        if self._future is None:
            self._ref = _extract(*self._args)

    def result(self) -> ApiReference | None:
        if self._future is not None:
            future, self._future = self._future, None
            try:
                self._ref = future.result()
            except (OSError, RuntimeError, CancelledError):  # the pool broke or was shut (its pages are read here)
                self._ref = _extract(*self._args)
        return self._ref

    def symbols(self) -> list[Symbol]:
        ref = self.result()
        return ref.symbols if ref is not None else []


def _extract(fetched: Fetched, registry: str, name: str, version: str) -> ApiReference | None:
    return extract_source(fetched, registry=registry, name=name, version=version)


def extract_source(fetched: Fetched, *, registry: str, name: str, version: str) -> ApiReference | None:
    """The API entries of `fetched`'s code: a `pypi` sdist or an `npm` tarball (whose `@types`
    package stands in when it ships no declarations), or a folder or git source that holds
    an importable package (tree.py); for docs the ladder found without the code (a site),
    the release's own artefact; None for sources without code."""
    if fetched.code is not None and fetched.source_type in LANGUAGE_OF:
        return extract_release(fetched.code, source_type=fetched.source_type, registry=registry, name=name,
                               version=version)
    from .tree import find_code

    try:
        code = find_code(fetched)
    except ContextError as e:  # the sparse checkout could not fetch the code
        return _skipped(ApiReference(registry=registry, name=name, version=version), str(e))
    if code is not None and code.language == "python":
        from .python import extract_api

        return extract_api(code.root, registry=registry, name=name, version=version)
    if code is not None:
        return _declarations(code.root, registry=registry, name=code.name, version=version)
    if fetched.meta.get("docs_source") and registry in RELEASE_KINDS:
        return _from_release(registry, name, version)
    return None


def _from_release(registry: str, name: str, version: str) -> ApiReference | None:
    """The API of the release itself, for docs the docs-source ladder found elsewhere (a
    site, a repository whose code is not at its root or ships no declarations): a package
    built for a release carries that release's API whatever its docs came from."""
    from ..sources.artefact import fetch_npm, fetch_pypi

    kind = RELEASE_KINDS[registry]
    try:
        fetched = (fetch_pypi if kind == "pypi" else fetch_npm)(name, version)
    except ContextError as e:
        return _skipped(ApiReference(registry=registry, name=name, version=version, language=LANGUAGE_OF[kind]),
                        f"the release could not be fetched: {e}")
    try:
        ref = extract_release(fetched.code or Path("."), source_type=kind, registry=registry, name=name,
                              version=version)
    finally:
        fetched.cleanup()
    if ref is not None and not ref.origin:
        ref.origin = fetched.source_url
    return ref


def extract_release(root: Path, *, source_type: str, registry: str, name: str, version: str) -> ApiReference | None:
    """The API entries of the artefact unpacked at `root` (a `pypi` sdist, an `npm` tarball,
    whose `@types` package stands in when it ships no declarations), None for other sources."""
    if source_type == "pypi":
        from .python import extract_api

        return extract_api(root, registry=registry, name=name, version=version)
    if source_type != "npm":
        return None
    from .types_package import from_types_package
    from .typescript import entry_points

    if not entry_points(root, name):
        return from_types_package(registry, name, version)
    return _declarations(root, registry=registry, name=name, version=version)


def _declarations(root: Path, *, registry: str, name: str, version: str) -> ApiReference:
    from .npm_dependencies import NpmDependencies
    from .typescript import extract_declarations

    dependencies = NpmDependencies()
    try:
        ref = extract_declarations(root, registry=registry, name=name, version=version, dependencies=dependencies)
    except ContextError as e:  # the optional parser is not installed
        return _skipped(ApiReference(registry=registry, name=name, version=version, language="typescript"), str(e))
    finally:
        dependencies.cleanup()
    ref.notes += dependencies.notes
    return ref


def _skipped(ref: ApiReference, why: str) -> ApiReference:
    ref.skipped = True
    ref.notes.append(f"API: skipped ({why})")
    return ref


def summary(ref: ApiReference) -> list[str]:
    """Build-summary lines: how many entries, from where, and what was skipped."""
    modules = sum(1 for s in ref.symbols if s.kind in ("module", "namespace"))
    origin = f" from {ref.origin}" if ref.origin else ""
    lines = [] if ref.skipped else [f"API: {len(ref.symbols)} symbols in {modules} module{'s' * (modules != 1)}{origin}"]
    lines += ref.notes[:MAX_NOTES]
    if len(ref.notes) > MAX_NOTES:
        lines.append(f"API: {len(ref.notes) - MAX_NOTES} more notes not shown")
    return lines
