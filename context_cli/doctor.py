"""`context doctor`: what is installed and whether it works, each problem with the command that fixes it.

Checks, in order: the package folder and what is in it, each package's validity and the
embedding model its vectors need, the registry servers in config.json (asked with a short
timeout), the project scope found from the working folder (`.context/docs.lock`), temp
files a killed process left behind, the browser that JavaScript-only web pages need, and the
web page cache against its bound.
A `fail` is something broken (the command exits non-zero); a `warn` works but is worse
than it could be. Nothing is changed: the fixes are printed for the user to run.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .environment import HOME

if TYPE_CHECKING:
    from .store.store import Installed

OK, WARN, FAIL = "ok", "warn", "fail"
PING_SECONDS = 3.0


@dataclass
class Check:
    check: str  # what was looked at: "packages", "package pip/x@1", "server neuledge", ...
    status: str  # ok | warn | fail
    detail: str
    fix: str | None = None  # the command (or step) that fixes it

    def as_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class Report:
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    def as_json(self) -> dict[str, object]:
        return {"ok": self.ok, "checks": [c.as_json() for c in self.checks]}


def diagnose(cwd: Path | None = None, *, ping_seconds: float = PING_SECONDS) -> Report:
    """Run every check; never raises for what it finds (a finding is a Check)."""
    cwd = cwd or Path.cwd()
    checks: list[Check] = []
    checks += _stale_files()
    found, installed = _packages()
    checks += found
    checks += _servers(ping_seconds)
    checks += _project(cwd, installed)
    checks += _browser()
    checks += _web_cache()
    return Report(checks)


def _packages() -> tuple[list[Check], list[Installed]]:
    """A check per package file, and the packages that opened (read without `Store.installed`,
    which would also clear the temp files this report is about)."""
    from .errors import InvalidPackage
    from .home import packages_dir
    from .package.reader import open_package
    from .store.store import Store, describe

    store = Store()
    files = store.package_files()
    out = [Check("packages", OK if files else WARN,
                 f"{len(files)} installed in {store.root}" if files else f"none installed in {store.root}",
                 None if files else "context install REGISTRY/NAME, or context add SOURCE")]
    if (home := HOME.value()) is not None:
        out[0].detail += f" ({HOME.name}={home})"
    models: dict[tuple[str, str | None], bool] = {}
    installed: list[Installed] = []
    for path in files:
        try:
            with open_package(path) as pkg:
                inst = describe(pkg, path)
                has_vectors = pkg.has_vectors
        except (InvalidPackage, OSError, ValueError) as e:
            out.append(Check(f"package {path.name}", FAIL, f"fails validation: {e}",
                             f"rm {path} (then context install or context add it again)"))
            continue
        installed.append(inst)
        label = inst.id.qualified
        name, fingerprint = inst.meta.get("embedding_model", ""), inst.meta.get("embedding_fingerprint")
        if not has_vectors or not name:
            out.append(Check(f"package {label}", OK, "valid; lexical search only (built without vectors)"))
            continue
        key = (name, fingerprint)
        if key not in models:
            models[key] = _model_here(name, fingerprint)
        if models[key]:
            out.append(Check(f"package {label}", OK, f"valid; embedding model {name} is here"))
        else:
            out.append(Check(f"package {label}", WARN,
                             f"valid, but its embedding model {name} is not on this machine: searched lexically",
                             f"set CONTEXT_EMBED_MODEL to that model's folder, or put it in "
                             f"{packages_dir().parent / 'models' / name}"))
    return out, installed


def _model_here(name: str, fingerprint: str | None) -> bool:
    try:
        from .embed.model import find_model

        return find_model(name, fingerprint) is not None
    except Exception:  # noqa: BLE001 - a broken model folder reads as "not here"
        return False


def _servers(ping_seconds: float) -> list[Check]:
    from .errors import ContextError
    from .home import config_path
    from .remote.config import load_servers

    try:
        servers = load_servers()
    except ContextError as e:
        return [Check("servers", FAIL, str(e), f"fix or remove {config_path()}")]
    return [_ping(s.name, s.url, s.default, ping_seconds) for s in servers]


def _ping(name: str, url: str, default: bool, seconds: float) -> Check:
    """A server answers when it sends any HTTP response within `seconds`."""
    import requests

    label = f"server {name}" + (" (default)" if default else "")
    try:
        resp = requests.get(url, timeout=seconds, allow_redirects=False, stream=True)
        resp.close()
    except requests.RequestException as e:
        why = "timed out" if isinstance(e, requests.Timeout) else "unreachable"
        return Check(label, WARN, f"{url} {why} (after {seconds:g}s): installs from it will fail",
                     f"check the network, or context server remove {name}")
    if resp.status_code >= 500:
        return Check(label, WARN, f"{url} answers HTTP {resp.status_code}", f"try later, or context server remove {name}")
    return Check(label, OK, f"{url} answers")


def _project(cwd: Path, installed: list[Installed]) -> list[Check]:
    from .errors import ContextError
    from .store.store import Store
    from .sync.scope import find_docs_lock, project_specs

    lock = find_docs_lock(cwd)
    if lock is None:
        return [Check("project", OK, f"no .context/docs.lock in {cwd} or above: agents see every installed package",
                      None)]
    try:
        specs = project_specs(lock)
    except ContextError as e:
        return [Check("project", FAIL, f"{lock}: {e}", f"context sync {lock.parent.parent}")]
    store = Store()
    missing = [s for s in specs if not store.find(s, installed)]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        return [Check("project", FAIL, f"{lock} lists {len(specs)} packages; not installed: {shown}",
                      f"context sync {lock.parent.parent}")]
    return [Check("project", OK, f"{lock}: {len(specs)} packages, all installed")]


def _stale_files() -> list[Check]:
    from .store.store import STALE_SECONDS, Store, is_temp

    root = Store().root
    try:
        entries = list(root.iterdir()) if root.is_dir() else []
    except OSError:
        return []
    cutoff = time.time() - STALE_SECONDS
    stale = []
    for path in entries:
        try:
            if is_temp(path.name) and path.is_file() and path.stat().st_mtime < cutoff:
                stale.append(path)
        except OSError:
            continue
    if not stale:
        return [Check("temp files", OK, "none left behind")]
    size = sum(p.stat().st_size for p in stale if p.exists())
    return [Check("temp files", WARN, f"{len(stale)} left by killed installs or builds in {root} "
                  f"({size / 1e6:.1f} MB)", "context list (it removes them)")]


def _browser() -> list[Check]:
    from .sources.site_browser import find_browser

    found = find_browser()
    if found:
        return [Check("browser", OK, f"{found}: web pages that need JavaScript are rendered")]
    return [Check("browser", WARN, "no chromium: web pages that only render with JavaScript are skipped",
                  "apt install chromium (only needed for such sites)")]


def _web_cache() -> list[Check]:
    from .environment import WEB_CACHE_MB
    from .errors import SourceError
    from .home import context_home
    from .sources.site_cache import PageCache, bound

    try:
        limit = bound()
    except SourceError as e:
        return [Check("web cache", FAIL, str(e), f"unset {WEB_CACHE_MB.name}, or set it to a number of megabytes")]
    cache = PageCache(context_home() / "cache" / "web", limit)
    used = sum(size for _, size, _ in cache.files())
    mb = 1024 * 1024  # the unit CONTEXT_WEB_CACHE_MB is given in
    detail = f"{used / mb:.1f} MB of {limit / mb:g} MB in {cache.root}"
    if used > limit:
        return [Check("web cache", WARN, detail + ": over its bound (it was lowered)",
                      "it is pruned on the next context add of a website")]
    return [Check("web cache", OK, detail)]
