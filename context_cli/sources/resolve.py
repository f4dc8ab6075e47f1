"""Decide what a `context add SOURCE` argument is and fetch it.

Dispatch order (first match wins): a local `.db` file, a local folder, a local OpenAPI file
(or a single docs file), `pypi:`/`npm:` artefacts, git URL forms, a `.db` URL, an OpenAPI
URL (by name, or by content for `.json`/`.yaml` URLs), then any other http(s) URL as a
website. Every failure is one `SourceError` line.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..errors import SourceError
from .base import Fetched, SourceOptions

if TYPE_CHECKING:
    from .http import HttpClient

__all__ = ["SourceOptions", "fetch_file", "fetch_folder", "fetch_source"]  # SourceOptions: old home


def fetch_source(source: str, opts: SourceOptions | None = None) -> Fetched:
    """Turn a SOURCE argument into a Fetched (a folder, documents or a ready .db)."""
    opts = opts or SourceOptions()
    source = source.strip()
    if not source:
        raise SourceError("no source given")
    if "://" not in source and not source.startswith(("pypi:", "npm:")):
        local = Path(source).expanduser()
        if local.is_file() and local.suffix == ".db":
            return Fetched(source_type="db", source_url=local.name, db_file=local)
        if local.is_dir():
            return fetch_folder(local)
        if local.is_file():
            from .folder import DOC_SUFFIXES
            from .openapi import SPEC_SUFFIXES, fetch_openapi_file

            if local.suffix.lower() in SPEC_SUFFIXES:
                return fetch_openapi_file(local)
            if local.suffix.lower() in DOC_SUFFIXES:
                return fetch_file(local)
            raise SourceError(f"{source}: not a docs file, .db package or OpenAPI spec; "
                              "add its folder instead")
    if source.startswith(("pypi:", "npm:")):
        from .artefact import fetch_artefact

        return fetch_artefact(source, docs_path=opts.path)

    from .git import fetch_git, parse_git_url

    if parse_git_url(source) is not None:
        return fetch_git(source, opts)
    scheme = urlsplit(source).scheme.lower() if "://" in source else ""
    if scheme not in ("http", "https"):
        if scheme:
            raise SourceError(f"{source}: unsupported URL scheme {scheme!r}")
        raise SourceError(f"{source}: no such file or folder, and not a URL, git URL, "
                          "pypi:NAME or npm:NAME")
    return _fetch_http(source, opts)


def _fetch_http(url: str, opts: SourceOptions) -> Fetched:
    from .http import HttpClient, HttpOptions, safe_url
    from .openapi import SPEC_NAMES, SPEC_SUFFIXES, fetch_openapi_url, fetched_from_spec, load_spec
    from .web import WebLimits, fetch_website

    http_opts = HttpOptions.from_env(connect_timeout=opts.timeout, read_timeout=opts.timeout)
    path = urlsplit(url).path.lower()
    with HttpClient(http_opts) as client:
        if path.endswith(".db"):
            return _download_db(url, client)
        if path.endswith(SPEC_NAMES):
            return fetch_openapi_url(url, client)
        if path.endswith(SPEC_SUFFIXES):
            resp = client.get(url)
            spec = load_spec(resp.text)
            if spec is None:
                raise SourceError(f"{safe_url(url)}: a JSON/YAML file that is not an OpenAPI spec")
            return fetched_from_spec(spec, safe_url(resp.url))
        limits = WebLimits(progress=opts.progress, browser=opts.browser, version=opts.tag)
        if opts.max_pages:
            limits.max_pages = opts.max_pages
        return fetch_website(url, client, limits)


def _download_db(url: str, client: HttpClient) -> Fetched:
    """Stream a package file to a temp dir (size-capped); the installer validates it."""
    from .http import safe_url

    tmp = Path(tempfile.mkdtemp(prefix="context-db-"))
    name = re.sub(r"[^A-Za-z0-9._@+-]+", "-", urlsplit(url).path.rsplit("/", 1)[-1]) or "package.db"
    try:
        dest = client.download(url, tmp / name)
        with open(dest, "rb") as f:
            if f.read(16) != b"SQLite format 3\x00":
                raise SourceError(f"{safe_url(url)}: not a package file (not an SQLite database)")
    except BaseException:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return Fetched(source_type="db", source_url=safe_url(url), db_file=dest, temp_dirs=[tmp])


def fetch_folder(folder: Path) -> Fetched:
    """A local folder: named after its project (or itself); never records the absolute path.

    The version comes from the project's package.json or pyproject.toml when there is one,
    else it is `latest`.
    """
    folder = folder.resolve()
    name, version = _project_identity(folder)
    if not name:
        name = re.sub(r"[^A-Za-z0-9._-]+", "-", folder.name).strip("-.").lower() or "docs"
    return Fetched(source_type="folder", source_url=folder.name, folder=folder, name=name,
                   version=version or "latest")


def fetch_file(file: Path) -> Fetched:
    """One documentation file: its folder, narrowed to it; named after the file."""
    file = file.resolve()
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", file.stem).strip("-.").lower() or "docs"
    return Fetched(source_type="folder", source_url=file.name, folder=file.parent, docs_path=file.name,
                   name=name, version="latest")


def _project_identity(folder: Path) -> tuple[str | None, str | None]:
    import json
    import tomllib

    for root in (folder, folder.parent):
        try:
            data = json.loads((root / "package.json").read_text("utf-8"))
            if isinstance(data, dict) and isinstance(data.get("name"), str):
                return data["name"], data.get("version") if isinstance(data.get("version"), str) else None
        except (OSError, ValueError):
            pass
        try:
            project = tomllib.loads((root / "pyproject.toml").read_text("utf-8")).get("project", {})
            if isinstance(project.get("name"), str):
                v = project.get("version")
                return project["name"], v if isinstance(v, str) else None
        except (OSError, ValueError):
            pass
    return None, None
