"""Which releases of a package exist: npm, PyPI, Maven Central and Hex.

`discover` asks a registry for every release and keeps what is worth a docs package: stable
releases only, the newest patch of each minor (docs rarely change within a minor, and this is
what Neuledge publishes), optionally only those released in the last N days and the newest N.
`discover_for` does the same within a definition's version ranges, and answers without any
network for explicit releases and unversioned definitions.

Order of the filters: stable -> in range -> newest patch per minor -> since -> newest first
-> latest N. `--since` therefore means "minors whose newest patch came out recently"; a
release without a date (Maven when its search service is down) is kept.

HTTP goes through `context_cli.sources.artefact.http_get`: retries on 5xx, 429 and network
errors with backoff (honouring Retry-After), one clear error on any other 4xx.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote, urlencode

from packaging.version import Version

from context_cli.errors import SourceError
from context_cli.sources.artefact import base_url, get_json, http_get

from .definitions import Definition, is_stable, parse_version

MAVEN_PAGE = 200
MAVEN_MAX_PAGES = 10


@dataclass(frozen=True)
class DiscoveredVersion:
    version: str
    released_at: datetime | None = None


def discover(
    registry: str,
    name: str,
    *,
    since_days: float | None = None,
    latest: int | None = None,
    base_urls: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> list[DiscoveredVersion]:
    """Stable releases of `registry/name`, newest patch per minor, newest first.

    `base_urls` overrides registry locations by kind (npm, pypi, maven, maven_search, hex).
    """
    releases = fetch_releases(registry, name, base_urls=base_urls)
    return select(releases, since_days=since_days, latest=latest, now=now)


def discover_for(
    definition: Definition,
    *,
    since_days: float | None = None,
    latest: int | None = None,
    base_urls: Mapping[str, str] | None = None,
    now: datetime | None = None,
) -> list[DiscoveredVersion]:
    """The releases a definition builds.

    Unversioned: `latest`. Explicit version lists only: those versions, no network (they
    have no release dates, so `since_days` does not apply). Otherwise the registry's
    releases that fall in a range, then the filters of `discover`.
    """
    if not definition.versioned:
        return [DiscoveredVersion("latest")]
    explicit = [v for r in definition.versions if r.explicit for v in r.versions]
    bounded = [r for r in definition.versions if not r.explicit]
    if not bounded:
        found = [DiscoveredVersion(v) for v in dict.fromkeys(explicit)]
        found.sort(key=lambda d: _order(d.version), reverse=True)
        return found[:latest] if latest else found
    releases = fetch_releases(definition.registry, _lookup_name(definition), base_urls=base_urls)
    chosen = select(
        releases,
        keep=lambda v: definition.range_for(v) is not None,
        since_days=since_days,
        now=now,
    )
    have = {d.version for d in chosen}
    chosen += [DiscoveredVersion(v) for v in explicit if v not in have]
    chosen.sort(key=lambda d: _order(d.version), reverse=True)
    return chosen[:latest] if latest else chosen


def _lookup_name(definition: Definition) -> str:
    """The name to ask the registry under: an artefact source may name its package on
    PyPI/npm (`package:`) differently from the definition."""
    packages = {getattr(r.source, "package", None) for r in definition.versions}
    only = packages.pop() if len(packages) == 1 else None
    return only if isinstance(only, str) else definition.name


def select(
    releases: Iterable[DiscoveredVersion],
    *,
    keep: Callable[[str], bool] = lambda v: True,
    since_days: float | None = None,
    latest: int | None = None,
    now: datetime | None = None,
) -> list[DiscoveredVersion]:
    """Apply the filters described at the top of the module."""
    newest: dict[tuple[int, int], DiscoveredVersion] = {}
    for r in releases:
        v = parse_version(r.version)
        if v is None or not is_stable(r.version) or not keep(r.version):
            continue
        minor = (v.release[0], v.release[1] if len(v.release) > 1 else 0)
        held = newest.get(minor)
        if held is None or v > _order(held.version):
            newest[minor] = r
    found = list(newest.values())
    if since_days is not None:
        cutoff = (now or datetime.now(UTC)) - timedelta(days=since_days)
        found = [r for r in found if r.released_at is None or r.released_at >= cutoff]
    found.sort(key=lambda r: _order(r.version), reverse=True)
    return found[:latest] if latest else found


def fetch_releases(
    registry: str, name: str, *, base_urls: Mapping[str, str] | None = None
) -> list[DiscoveredVersion]:
    """Every release the registry lists (yanked and retired ones left out), unfiltered."""
    fetch = _FETCHERS.get(registry)
    if fetch is None:
        supported = ", ".join(sorted(_FETCHERS))
        raise SourceError(
            f"no version discovery for registry {registry!r} (supported: {supported}); "
            "list explicit versions in the definition"
        )
    urls = base_urls or {}
    return fetch(name, urls)


def _npm(name: str, urls: Mapping[str, str]) -> list[DiscoveredVersion]:
    base = base_url("npm", urls.get("npm"))
    doc = get_json(f"{base}/{quote(name, safe='@')}", what="npm registry",
                   not_found=f"no such package on npm: {name}")
    times = doc.get("time") or {}
    return [DiscoveredVersion(v, _when(times.get(v))) for v in doc.get("versions") or {}]


def _pypi(name: str, urls: Mapping[str, str]) -> list[DiscoveredVersion]:
    base = base_url("pypi", urls.get("pypi"))
    doc = get_json(f"{base}/pypi/{quote(name, safe='')}/json", what="PyPI",
                   not_found=f"no such package on PyPI: {name}")
    out = []
    for version, files in (doc.get("releases") or {}).items():
        files = files or []
        if files and all(f.get("yanked") for f in files):
            continue
        dates = [d for d in (_when(f.get("upload_time_iso_8601")) for f in files) if d]
        out.append(DiscoveredVersion(version, min(dates) if dates else None))
    return out


def _maven(name: str, urls: Mapping[str, str]) -> list[DiscoveredVersion]:
    """The version list from maven-metadata.xml (authoritative), dates from the search API.

    The search service is best effort: when it fails, versions simply have no date.
    """
    group, _, artifact = name.partition(":")
    if not group or not artifact or ":" in artifact:
        raise SourceError(f"Maven names are groupId:artifactId, not {name!r}")
    base = base_url("maven", urls.get("maven"))
    r = http_get(f"{base}/{group.replace('.', '/')}/{quote(artifact)}/maven-metadata.xml",
                 what="Maven Central", not_found=f"no such artifact on Maven Central: {name}")
    try:
        root = ET.fromstring(r.content)
    except ET.ParseError:
        raise SourceError(f"Maven Central sent unreadable metadata for {name}") from None
    versions = [v.text.strip() for v in root.iterfind("./versioning/versions/version") if v.text]
    dates = _maven_dates(group, artifact, urls)
    return [DiscoveredVersion(v, dates.get(v)) for v in versions]


def _maven_dates(group: str, artifact: str, urls: Mapping[str, str]) -> dict[str, datetime]:
    base = base_url("maven_search", urls.get("maven_search"))
    dates: dict[str, datetime] = {}
    try:
        for page in range(MAVEN_MAX_PAGES):
            query = urlencode({"q": f'g:"{group}" AND a:"{artifact}"', "core": "gav",
                               "rows": MAVEN_PAGE, "start": page * MAVEN_PAGE, "wt": "json"})
            doc = get_json(f"{base}/solrsearch/select?{query}", what="Maven Central search",
                           not_found="Maven Central search is unavailable")
            response = doc.get("response") or {}
            for d in response.get("docs") or []:
                if isinstance(d.get("timestamp"), (int, float)) and d.get("v"):
                    dates[str(d["v"])] = datetime.fromtimestamp(d["timestamp"] / 1000, UTC)
            found = response.get("numFound")
            if not isinstance(found, int) or (page + 1) * MAVEN_PAGE >= found:
                break
    except (SourceError, ValueError, TypeError, AttributeError):
        pass
    return dates


def _hex(name: str, urls: Mapping[str, str]) -> list[DiscoveredVersion]:
    base = base_url("hex", urls.get("hex"))
    doc = get_json(f"{base}/api/packages/{quote(name, safe='')}", what="Hex",
                   not_found=f"no such package on Hex: {name}")
    retired = doc.get("retirements") or {}
    return [
        DiscoveredVersion(str(r["version"]), _when(r.get("inserted_at")))
        for r in doc.get("releases") or []
        if r.get("version") and r["version"] not in retired
    ]


_FETCHERS: dict[str, Callable[[str, Mapping[str, str]], list[DiscoveredVersion]]] = {
    "npm": _npm,
    "pip": _pypi,
    "pypi": _pypi,
    "maven": _maven,
    "hex": _hex,
}


def _when(value: object) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _order(version: str) -> Version:
    return parse_version(version) or Version("0")
