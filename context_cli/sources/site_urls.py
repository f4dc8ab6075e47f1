"""URLs of a docs site: one spelling per page, and which language and version a path serves.

A crawl meets the same page under many spellings (`/a`, `/a/`, `/a/index.html`, `/a#x`,
`/a?utm_source=…`) and the same text under many variants (`/en/5.1/…`, `/fr/5.1/…`,
`/en/4.2/…`, `/docs/next/…`). `normalise` gives each page one URL; `variant` reads the locale
and version segments of a path so the crawler keeps the English, current pages (or the
version the user asked for) and collapses the rest.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from posixpath import normpath
from urllib.parse import parse_qsl, urldefrag, urlencode, urlsplit, urlunsplit

# Not pages: assets a docs site links to.
_ASSET = re.compile(
    r"\.(?:png|jpe?g|gif|svg|webp|avif|ico|bmp|css|js|mjs|map|json|xml|woff2?|ttf|otf|eot|pdf|zip|gz|tgz|"
    r"bz2|xz|7z|tar|whl|exe|dmg|msi|deb|rpm|mp[34]|webm|mov|avi|ogg|wav|csv|xlsx?|docx?|pptx?|ipynb|db)$",
    re.I,
)
_TRACKING = re.compile(r"^(?:utm_\w+|ref|ref_src|fbclid|gclid|_ga|mc_\w+)$", re.I)
LOCALES = frozenset(
    "en en-us en-gb fr de es it ja ko zh zh-cn zh-tw zh-hans zh-hant pt pt-br ru uk pl nl tr vi id ar he "
    "fa hi th sv cs hu ro el da fi no nb bn ms ta".split()
)
ENGLISH = frozenset({"en", "en-us", "en-gb"})
_VERSION = re.compile(r"^(?:v?\d+(?:\.\d+){0,2}(?:\.x)?|v\d+\.x|latest|stable|current|dev|next|main|master)$", re.I)
# A version segment counts first in the path, or after a locale or a docs folder (`/en/5.1/`,
# `/v18/`, `/docs/next/`); deeper ones (`/api/v1/users`) are page names.
_DOCS_ROOTS = frozenset({"docs", "doc", "documentation", "manual", "guide"})
CURRENT = frozenset({"latest", "stable", "current"})  # what an unversioned crawl accepts as "now"


@dataclass(frozen=True)
class Variant:
    locale: str | None
    version: str | None


def normalise(url: str) -> str:
    """One spelling per page: no fragment, lower-case host, no default port, no `index.html`,
    no duplicate slashes, tracking parameters dropped, the rest of the query sorted."""
    url = urldefrag(url)[0]
    p = urlsplit(url)
    host = (p.hostname or "").lower()
    port = p.port
    default = {"http": 80, "https": 443}.get(p.scheme.lower())
    netloc = host if port in (None, default) else f"{host}:{port}"
    path = re.sub(r"/{2,}", "/", p.path or "/")
    trailing = path.endswith("/")
    path = normpath(path) if path not in ("", "/") else "/"
    if path.endswith(("/index.html", "/index.htm")):
        path, trailing = path.rsplit("/", 1)[0] or "/", True
    if trailing and not path.endswith("/"):
        path += "/"
    query = urlencode(sorted((k, v) for k, v in parse_qsl(p.query, keep_blank_values=True) if not _TRACKING.match(k)))
    return urlunsplit((p.scheme.lower(), netloc, path, query, ""))


def is_page_link(url: str) -> bool:
    """An http(s) URL that may be a page (not an image, stylesheet, archive, ...)."""
    p = urlsplit(url)
    return p.scheme in ("http", "https") and not _ASSET.search(p.path)


def variant(url: str) -> Variant:
    """The locale and site-version segments at the head of a URL's path, or `?version=`."""
    segs = urlsplit(url).path.split("/")
    locale = segs[1].lower() if len(segs) > 2 and segs[1].lower() in LOCALES else None
    at = _version_at(segs)
    version = segs[at].lower() if at is not None else None
    if version is None:
        q = dict(parse_qsl(urlsplit(url).query))
        version = (q.get("version") or q.get("v") or "").lower() or None
    return Variant(locale, version)


def _version_at(segs: list[str]) -> int | None:
    """Index of the version segment in `path.split("/")`: first, or after a locale or docs folder."""
    i = 1
    if len(segs) > i + 1 and segs[i].lower() in LOCALES:
        i += 1
    if len(segs) > i + 1 and segs[i].lower() in _DOCS_ROOTS and _VERSION.match(segs[i + 1]):
        i += 1
    return i if len(segs) > i and segs[i] and _VERSION.match(segs[i]) else None


def acceptable(link: str, start: Variant, asked: str | None) -> bool:
    """Whether a crawl that began at a page of variant `start` keeps `link`: English or the
    start's language, and the asked version, else the start's, else an unversioned or current path."""
    v = variant(link)
    if v.locale is not None and v.locale not in ENGLISH and v.locale != start.locale:
        return False
    want = (asked or "").lower() or start.version
    if v.version is None:
        return True
    if want is not None:
        return v.version in (want, "v" + want) or v.version.lstrip("v") == want.lstrip("v")
    return v.version in CURRENT


def carry_version(link: str, start: str) -> str:
    """`link` as the version `start` asked for by query (`?version=1.0`) serves it: such a site
    answers a link without the query with its current docs, so the query is carried over. A
    link that names a version of its own is left as it is."""
    query = parse_qsl(urlsplit(start).query)
    key = next((k for k, _ in query if k in ("version", "v")), None)
    if key is None or _version_at(urlsplit(start).path.split("/")) is not None or variant(link).version is not None:
        return link
    p = urlsplit(link)
    return normalise(urlunsplit((p.scheme, p.netloc, p.path, urlencode([*parse_qsl(p.query), (key, dict(query)[key])]),
                                 "")))


def scope_prefix(url: str) -> str:
    """The folder a crawl stays in: the URL itself when it ends in `/`, else its parent."""
    path = urlsplit(url).path or "/"
    return path if path.endswith("/") else path.rsplit("/", 1)[0] + "/"


def recorded_version(url: str, asked: str | None) -> str:
    """The version to record for a build from `url`: the asked one, else a version segment of
    the URL (`/en/5.1/` -> `5.1`), else `latest` (`stable`, `current` also mean latest)."""
    if asked:
        return asked
    v = variant(url).version
    if v is None or v in CURRENT or v in ("dev", "next", "main", "master"):
        return "latest"
    return v.removeprefix("v") if re.match(r"^v\d", v) else v


def versioned_candidates(url: str, version: str) -> list[str]:
    """Where a site may serve `version` of the page at `url`: its version segment replaced, or
    the Read the Docs layout `/en/VERSION/`, `/VERSION/`, `/vVERSION/`, `?version=VERSION`."""
    p = urlsplit(url)
    segs = p.path.split("/")
    at = _version_at(segs)
    if at is not None:
        old = segs[at]
        segs[at] = "v" + version.lstrip("v") if re.match(r"^v\d", old, re.I) else version
        return [urlunsplit((p.scheme, p.netloc, "/".join(segs), p.query, ""))]
    root = f"{p.scheme}://{p.netloc}"
    rest = p.path.lstrip("/")
    out = [f"{root}/en/{version}/", f"{root}/{version}/{rest}", f"{root}/v{version.lstrip('v')}/{rest}"]
    query = urlencode([*((k, v) for k, v in parse_qsl(p.query) if k not in ("version", "v")), ("version", version)])
    out.append(urlunsplit((p.scheme, p.netloc, p.path or "/", query, "")))
    return list(dict.fromkeys(out))
