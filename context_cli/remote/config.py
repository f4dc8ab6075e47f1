"""Registry servers, read from `$CONTEXT_HOME/config.json` in Neuledge Context's format.

    {"servers": [{"name": "neuledge", "url": "https://context.neuledge.com", "default": true}]}

Without a file the built-in default below applies (the same one Context ships); `context
server add/remove` (`add_server`, `remove_server`) write the file. `CONTEXT_REGISTRY_URL`
replaces the default server's URL for one run (tests, demos, CI).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

from ..atomic import write_text
from ..environment import REGISTRY_URL
from ..errors import RegistryError
from ..home import config_path


@dataclass(frozen=True)
class Server:
    name: str
    url: str
    default: bool = False

    def as_json(self) -> dict[str, object]:
        entry: dict[str, object] = {"name": self.name, "url": self.url}
        if self.default:
            entry["default"] = True
        return entry


DEFAULT_SERVERS = (Server("neuledge", "https://context.neuledge.com", default=True),)
URL_ENV = REGISTRY_URL.name
SERVER_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")


def load_servers(path: Path | None = None) -> list[Server]:
    """Configured servers; exactly one is marked default (the first, if the file marks none)."""
    path = path or config_path()
    if not path.exists():
        return list(DEFAULT_SERVERS)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise RegistryError(f"cannot read {path}: {e}; fix or remove it") from None
    entries = data.get("servers") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise RegistryError(f"{path}: expected {{\"servers\": [{{\"name\", \"url\"}}, …]}}")
    servers = []
    for entry in entries:
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str)
                and isinstance(entry.get("url"), str)):
            raise RegistryError(f"{path}: every server needs a \"name\" and a \"url\"")
        servers.append(Server(entry["name"], _check_url(entry["url"], path),
                              bool(entry.get("default", False))))
    if not servers:
        return list(DEFAULT_SERVERS)
    if not any(s.default for s in servers):
        servers[0] = Server(servers[0].name, servers[0].url, True)
    return servers


def save_servers(servers: list[Server], path: Path | None = None) -> Path:
    """Write the list in Context's format (Context's client reads the same file)."""
    path = path or config_path()
    data = {"servers": [s.as_json() for s in servers]}
    if path.exists():
        try:
            old = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(old, dict):
                data = {**old, **data}  # keep keys other tools put there
        except (OSError, ValueError):
            pass
    return write_text(path, json.dumps(data, indent=2) + "\n")


def add_server(name: str, url: str, *, default: bool = False, path: Path | None = None) -> Server:
    """Add server `name` (or point it at `url` if it exists; it stays the default if it was)
    and save; `default` makes it the one every registry call uses unless told otherwise. The first server added to the built-in
    list keeps the built-in one beside it, as Context's client does."""
    if not SERVER_NAME_RE.match(name):
        raise RegistryError(f"server name {name!r}: use letters, digits, '.', '_' or '-' (at most 64)")
    known = load_servers(path)
    was_default = any(s.name == name and s.default for s in known)
    server = Server(name, _check_url(url, "the URL"), default or was_default)
    servers = [s for s in known if s.name != name]
    if default:
        servers = [replace(s, default=False) for s in servers]
    elif not any(s.default for s in servers):
        server = replace(server, default=True)
    servers.append(server)
    save_servers(servers, path)
    return server


def remove_server(name: str, path: Path | None = None) -> Server:
    """Remove server `name` and save; when it was the default, the first one left becomes it
    (none left: the built-in default applies again)."""
    servers = load_servers(path)
    gone = next((s for s in servers if s.name == name), None)
    if gone is None:
        raise RegistryError(f"no registry server named {name!r} (configured: "
                            f"{', '.join(s.name for s in servers)}); see `context server list`")
    left = [s for s in servers if s.name != name]
    if gone.default and left:
        left[0] = replace(left[0], default=True)
    save_servers(left, path)
    return gone


def get_server(name: str | Server | None = None) -> Server:
    """The server called `name`, or the default one; an unknown name lists the known ones."""
    if isinstance(name, Server):
        return name
    servers = load_servers()
    if name:
        for s in servers:
            if s.name == name:
                return s
        known = ", ".join(s.name for s in servers)
        raise RegistryError(f"no registry server named {name!r} (configured: {known}); "
                            f"add it with `context server add {name} URL`")
    default = next(s for s in servers if s.default)
    override = (REGISTRY_URL.value() or "").strip()
    if override:
        return Server(default.name, _check_url(override, URL_ENV), True)
    return default


def _check_url(url: str, where: object) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise RegistryError(f"{where}: server URL {url!r} must start with http:// or https://")
    return url.strip().rstrip("/")
