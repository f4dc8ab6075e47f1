"""Every call `sync` makes into other layers (store, registry client, artefact fetcher, git,
builder) lives here and nowhere else, so the rest of `sync` is plain data and decisions.

The identities sync uses are (registry, name, version) with registry `pip`, `npm` or `hex`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import ContextError, RegistryError, SourceError
from ..store.store import Installed, Store
from .formats import table

INDEX_KIND = {"pip": "pypi", "npm": "npm", "hex": "hex"}  # registries with an index to build from


@dataclass(frozen=True)
class Local:
    """An installed package as sync needs it: where, how big."""

    registry: str
    name: str
    version: str
    path: Path
    size: int


def open_store(root: Path | None = None) -> Store:
    return Store(root)


def installed_path(store: Store, registry: str, name: str, version: str) -> Local | None:
    """The installed file of exactly this identity, found by its name: no package is opened,
    so a project of hundreds of dependencies that are all installed is checked in a moment."""
    from ..package.identity import InvalidIdentity, check_identity

    try:
        pid = check_identity(registry, name, version)
    except InvalidIdentity:
        return None
    path = store.root / pid.filename
    try:
        size = path.stat().st_size
    except OSError:
        return None
    return Local(registry, name, version, path, size)


def installed_versions(store: Store, registry: str, name: str) -> list[str]:
    """Versions of `registry/name` that are installed (any), newest first."""
    return [i.id.version for i in store.find(f"{registry}/{name}")]


def local_of(inst: Installed) -> Local:
    return Local(inst.id.registry, inst.id.name, inst.id.version, inst.path, inst.path.stat().st_size)


def package_source(path: Path) -> str:
    """Where an installed package says it came from (its `source_url` meta), for packages
    that were installed before the project was first synced."""
    from ..package.reader import open_package

    try:
        with open_package(path) as pkg:
            return str(pkg.meta.get("source_url") or "installed")
    except (ContextError, OSError):
        return "installed"


# -- the registry server ---------------------------------------------------------------------


def server_url() -> str:
    from ..remote.config import get_server

    return get_server().url


class NotFound(RegistryError):
    """The server answered, and has no such package (not a reason to stop asking it)."""


def server_versions(registry: str, name: str) -> list[str]:
    """Versions the configured registry server holds, newest first; RegistryError when it
    cannot say (unreachable, refusing), NotFound for a name it will not look up."""
    from ..remote.client import search_remote
    from ..versions import version_key

    try:
        found = [e["version"] for e in search_remote(registry, name)]
    except RegistryError as e:
        if "invalid" in str(e):
            raise NotFound(str(e)) from None
        raise
    return sorted(set(found), key=version_key, reverse=True)


def install_from_server(store: Store, registry: str, name: str, version: str) -> Local:
    from ..remote.client import download_and_install

    return local_of(download_and_install(registry, name, version, store=store))


# -- package indexes (PyPI, npm) --------------------------------------------------------------


def can_build(registry: str) -> bool:
    return registry in INDEX_KIND


def index_versions(registry: str, name: str) -> list[str]:
    """Versions the package index (PyPI or npm) has released; SourceError when it cannot say."""
    from ..sources.docsources.metadata import index_doc
    from ..versions import is_version

    doc = index_doc(registry, name)
    if registry == "hex":
        found = [table(r).get("version") for r in doc.get("releases") or []]
    else:
        found = list((doc.get("releases") if registry == "pip" else doc.get("versions")) or {})
    return [v for v in found if is_version(v)]  # a hostile index's 5,000-digit entry is no version


def artefact_spec(registry: str, name: str, version: str) -> str:
    if registry == "hex":
        return f"hex:{name}@{version}"
    return f"pypi:{name}=={version}" if registry == "pip" else f"npm:{name}@{version}"


@dataclass
class Built:
    local: Local
    source: str  # what it was built from: an artefact spec, `REPOSITORY#TAG`, a site
    docs: str  # "docs", or "readme" / "api" when the release's README is all there was
    notes: list[str]
    step: str = ""  # the ladder step that won
    docs_version: str | None = None  # when the docs are not exact to the version ("latest")

    @property
    def readme_only(self) -> bool:
        return self.docs != "docs"


def build_docs(store: Store, registry: str, name: str, version: str, earlier: list[str]) -> Built:
    """Build `registry/name@version` from the first step of the docs-source ladder that gives
    docs (`sources.docsources.ladder`), filed under `pip`/`npm`/`hex` (never `local`);
    `earlier` says why the installed and registry-server steps did not answer."""
    from ..adding import AddRequest, add_fetched
    from ..sources.docsources.ladder import Attempt, resolve

    before = [Attempt(step, False, reason) for step, _, reason in (e.partition(": ") for e in earlier)]
    resolved = resolve(registry, name, version, earlier=before)
    fetched = resolved.fetched
    ref = fetched.meta.get("docs_ref")
    if resolved.step == "runtime":  # another library's docs: what was read, never this package's spec
        source = ref or fetched.source_url
    elif resolved.step in ("artefact", "readme") or fetched.source_type in ("pypi", "npm"):
        source = artefact_spec(registry, name, version)
    else:
        source = fetched.source_url + (f"#{ref}" if ref else "")
    try:
        result = add_fetched(fetched, AddRequest(source=source, name=name, version=version, registry=registry),
                             store=store)
    except SourceError as e:
        raise SourceError(f"{e}; tried first: {resolved.tried()}" if resolved.tried() else str(e)) from None
    docs = "docs"
    if resolved.readme_only:
        docs = "api" if symbol_count(result.installed.path) else "readme"
    return Built(local_of(result.installed), source, docs, list(result.notes), resolved.step,
                 fetched.meta.get("docs_version"))


def definition_stamp(registry: str, name: str) -> str:
    """A digest of the catalogue definitions a build of the package reads (its own, and a stubs
    package's runtime library's: `@types/react` reads react's); "" when there is none. A
    README-only build records it in docs.lock and is tried again only when it changes: a
    definition that could not help (`@types/numeral 0.0.28`: numeral has no 0.0 release)
    would otherwise rebuild the package on every sync."""
    import hashlib

    from ..sources.docsources.catalogue import load_catalogue
    from ..sources.docsources.stubs import runtime_name

    catalogue = load_catalogue()
    runtime = runtime_name(registry, name)
    found = [catalogue.find(registry, name), catalogue.find(registry, runtime) if runtime else None]
    return hashlib.sha256(repr(found).encode()).hexdigest()[:16] if any(found) else ""


def symbol_count(path: Path) -> int:
    """The API symbols a package holds (the API reference read from the released code); 0 for a
    package built without that table."""
    import sqlite3
    from contextlib import closing

    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            return int(db.execute("SELECT count(*) FROM symbols").fetchone()[0])
    except sqlite3.Error:  # OperationalError: no such table (built without the API reference)
        return 0
