"""Decide what a `context add SOURCE` argument is and fetch it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import SourceError
from .base import Fetched


@dataclass
class SourceOptions:
    tag: str | None = None
    path: str | None = None
    interactive: bool = False


def fetch_source(source: str, opts: SourceOptions | None = None) -> Fetched:
    """Turn a SOURCE argument into a Fetched (a folder, documents or a ready .db)."""
    opts = opts or SourceOptions()
    local = Path(source).expanduser()
    if local.is_file() and local.suffix == ".db":
        return Fetched(source_type="db", source_url=local.name, db_file=local)
    if local.is_dir():
        return fetch_folder(local)
    raise SourceError(f"{source}: not a folder, .db file or supported source")


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
