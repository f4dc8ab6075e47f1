"""Every call `sync` makes into other layers (store, registry client, artefact fetcher, git,
builder) lives here and nowhere else, so the rest of `sync` is plain data and decisions.

The identities sync uses are (registry, name, version) with registry `pip`, `npm` or `hex`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

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
    from ..versions import is_version

    doc = _index_doc(registry, name)
    if registry == "hex":
        found = [table(r).get("version") for r in doc.get("releases") or []]
    else:
        found = list((doc.get("releases") if registry == "pip" else doc.get("versions")) or {})
    return [v for v in found if is_version(v)]  # a hostile index's 5,000-digit entry is no version


def _index_doc(registry: str, name: str) -> dict[str, Any]:
    from ..sources.artefact import base_url, get_json

    if registry == "pip":
        url = f"{base_url('pypi')}/pypi/{quote(name, safe='')}/json"
        doc = get_json(url, what="PyPI", not_found=f"no such package on PyPI: {name}")
    elif registry == "hex":
        url = f"{base_url('hex')}/api/packages/{quote(name, safe='')}"
        doc = get_json(url, what="Hex", not_found=f"no such package on Hex: {name}")
    else:
        url = f"{base_url('npm')}/{quote(name, safe='@')}"
        doc = get_json(url, what="npm registry", not_found=f"no such package on npm: {name}")
    if not isinstance(doc, dict):
        raise SourceError(f"the {registry} index sent an unexpected answer for {name}")
    return doc


def artefact_spec(registry: str, name: str, version: str) -> str:
    if registry == "hex":
        return f"hex:{name}@{version}"
    return f"pypi:{name}=={version}" if registry == "pip" else f"npm:{name}@{version}"


@dataclass
class Built:
    local: Local
    source: str  # what it was built from: an artefact spec, or `REPOSITORY#TAG`
    readme_only: bool
    notes: list[str]
    tag: str | None = None


def build_from_artefact(store: Store, registry: str, name: str, version: str) -> Built:
    """`context add pypi:NAME==VER` / `npm:NAME@VER`, filed under `pip`/`npm` (not `local`)."""
    from ..adding import AddRequest, add_source

    if registry == "hex":
        raise SourceError("hex release tarballs are not built (their docs live in the code)")
    spec = artefact_spec(registry, name, version)
    result = add_source(AddRequest(source=spec, name=name, version=version, registry=registry), store=store)
    readme = any(re.match(r"^docs from readme", n, re.IGNORECASE) for n in result.notes)
    return Built(local_of(result.installed), spec, readme, list(result.notes))


def build_from_tag(store: Store, registry: str, name: str, version: str) -> Built | None:
    """The docs folder of the source repository at this version's tag, or None when the index
    names no repository or the repository has no such tag."""
    from ..adding import AddRequest, add_source
    from ..sources.git import clean_url, list_tags

    repo = source_repository(registry, name, version)
    if repo is None:
        return None
    url, directory = repo
    try:
        tags = set(list_tags(url))
    except ContextError:
        return None
    short = name.rsplit("/", 1)[-1]
    tag = next((t for t in (f"v{version}", version, f"{name}@{version}", f"{short}@{version}",
                            f"{short}-v{version}", f"{short}-{version}") if t in tags), None)
    if tag is None:
        return None
    result = add_source(AddRequest(source=url, tag=tag, name=name, version=version, registry=registry,
                                   path=directory), store=store)
    return Built(local_of(result.installed), f"{clean_url(url)}#{tag}", False, list(result.notes), tag)


def source_repository(registry: str, name: str, version: str) -> tuple[str, str | None] | None:
    """(git URL, folder inside it) from the index's metadata: PyPI `project_urls`, npm
    `repository` (with its `directory` for monorepos)."""
    from ..sources.git import parse_git_url

    try:
        doc = _index_doc(registry, name)
    except ContextError:
        return None
    candidates: list[tuple[str, str | None]] = []
    if registry == "pip":
        info = table(doc.get("info"))
        urls = table(info.get("project_urls"))
        ranked = sorted(urls.items(), key=lambda kv: _URL_RANK.get(str(kv[0]).lower().replace("-", " "), 9))
        candidates = [(str(u), None) for k, u in ranked if _URL_RANK.get(str(k).lower().replace("-", " "), 9) < 9]
        if isinstance(info.get("home_page"), str):
            candidates.append((info["home_page"], None))
    elif registry == "hex":
        links = table(table(doc.get("meta")).get("links"))
        ranked = sorted(links.items(), key=lambda kv: _URL_RANK.get(str(kv[0]).lower(), 5))
        candidates = [(str(u), None) for _, u in ranked if isinstance(u, str)]
    else:
        meta = table(table(doc.get("versions")).get(version))
        repo = meta.get("repository") or doc.get("repository")
        if isinstance(repo, str):
            candidates.append((repo, None))
        elif isinstance(repo, dict) and isinstance(repo.get("url"), str):
            directory = repo.get("directory") if isinstance(repo.get("directory"), str) else None
            candidates.append((repo["url"], directory))
    for text, directory in candidates:
        url = _git_url(text)
        if url and parse_git_url(url) is not None:
            return url, directory
    return None


_URL_RANK = {"source": 0, "source code": 0, "repository": 1, "code": 1, "github": 2, "gitlab": 2,
             "homepage": 3, "home": 3}


def _git_url(url: str) -> str | None:
    url = url.strip()
    m = re.match(r"^(github|gitlab|bitbucket):([\w.-]+/[\w.-]+)$", url)
    if m:
        return f"https://{m.group(1)}.{'org' if m.group(1) == 'bitbucket' else 'com'}/{m.group(2)}.git"
    if re.match(r"^[\w.-]+/[\w.-]+$", url):
        return f"https://github.com/{url}.git"
    url = url.removeprefix("git+")
    if url.startswith("git://github.com/"):
        url = "https://" + url[len("git://"):]
    return url or None

