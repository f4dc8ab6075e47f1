"""What a package index says about where a release's docs may live: its source repository
(PyPI `project_urls`, npm `repository` with its monorepo `directory`, Hex links) and its
documentation site (PyPI's `Documentation` URL, npm's `homepage`).

Every URL here is the package author's choice, so `repository_of` and `docs_site_of` return
only what `guard.check_public` lets through (https to a public host); what it refused is said
in the reasons, never followed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_URL_RANK = {"source": 0, "source code": 0, "repository": 1, "code": 1, "github": 2, "gitlab": 2,
             "homepage": 3, "home": 3}
_DOCS_KEYS = ("documentation", "docs", "documentation url", "api docs", "reference")
_SCP = re.compile(r"^(?:git\+)?(?:ssh://)?(?:[\w.-]+@)?(?P<host>[\w.-]+\.[a-z]{2,}):(?!\d+/)(?P<path>[\w.-]+/[\w.-]+?)"
                  r"(?:\.git)?/?\Z", re.I)


@dataclass(frozen=True)
class Repository:
    url: str  # https://host/owner/repo.git
    directory: str | None = None  # the package's folder in a monorepo (npm `repository.directory`)


def table(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def repository_of(registry: str, doc: dict[str, Any], version: str, reasons: list[str]) -> Repository | None:
    """The first candidate repository URL that is a public https git URL; `reasons` gains a
    line for each candidate refused."""
    from ..git import parse_git_url
    from .guard import UnsafeURL, check_public

    for text, directory in _candidates(registry, doc, version):
        url = normalise(text)
        if not url or parse_git_url(url) is None:
            continue
        try:
            check_public(url)
        except UnsafeURL as e:
            reasons.append(f"repository {e}")
            continue
        return Repository(url, directory)
    return None


def docs_site_of(registry: str, doc: dict[str, Any], version: str) -> str | None:
    """The documentation URL the metadata names (PyPI `Documentation`, npm `homepage`), when it
    is an https site and not a forge or index page."""
    urls: list[str] = []
    if registry == "pip":
        info = table(doc.get("info"))
        for key, url in table(info.get("project_urls")).items():
            if str(key).lower().replace("-", " ").strip() in _DOCS_KEYS and isinstance(url, str):
                urls.append(url)
        if isinstance(info.get("docs_url"), str):
            urls.append(info["docs_url"])
    elif registry == "npm":
        meta = table(table(doc.get("versions")).get(version))
        home = meta.get("homepage") or doc.get("homepage")
        if isinstance(home, str):
            urls.append(home)
    return next((u for u in urls if u.startswith("https://") and not _not_a_site(u)), None)


# Hosts that metadata names as "homepage" or "documentation" but that hold a repository or an
# index page (npm's default homepage is `https://github.com/o/r#readme`), never a docs site.
NOT_SITES = ("github.com", "gitlab.com", "bitbucket.org", "codeberg.org", "www.npmjs.com", "npmjs.com",
             "pypi.org", "hex.pm")


def _not_a_site(url: str) -> bool:
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(url).hostname or "").lower()
    except ValueError:
        return True
    return host in NOT_SITES or host.startswith("www.") and host[4:] in NOT_SITES


def _candidates(registry: str, doc: dict[str, Any], version: str) -> list[tuple[str, str | None]]:
    if registry == "pip":
        info = table(doc.get("info"))
        urls = table(info.get("project_urls"))
        ranked = sorted(urls.items(), key=lambda kv: _rank(kv[0]))
        out: list[tuple[str, str | None]] = [(str(u), None) for k, u in ranked if _rank(k) < 9 and isinstance(u, str)]
        if isinstance(info.get("home_page"), str):
            out.append((info["home_page"], None))
        return out
    if registry == "hex":
        links = table(table(doc.get("meta")).get("links"))
        ranked = sorted(links.items(), key=lambda kv: _URL_RANK.get(str(kv[0]).lower(), 5))
        return [(str(u), None) for _, u in ranked if isinstance(u, str)]
    meta = table(table(doc.get("versions")).get(version))
    repo = meta.get("repository") or doc.get("repository")
    if isinstance(repo, str):
        return [(repo, None)]
    if isinstance(repo, dict) and isinstance(repo.get("url"), str):
        directory = repo.get("directory") if isinstance(repo.get("directory"), str) else None
        return [(repo["url"], directory)]
    return []


def _rank(key: object) -> int:
    return _URL_RANK.get(str(key).lower().replace("-", " ").strip(), 9)


def normalise(url: str) -> str | None:
    """A metadata repository string as an https git URL where it names a forge repository:
    `github:owner/repo`, `owner/repo`, `git+https://…`, `git://` or `http://github.com/…` and the
    scp-style `git+ssh://git@github.com:owner/repo.git` (which is no valid URL at all)."""
    url = url.strip()
    m = re.match(r"^(github|gitlab|bitbucket):([\w.-]+/[\w.-]+)$", url)
    if m:
        return f"https://{m.group(1)}.{'org' if m.group(1) == 'bitbucket' else 'com'}/{m.group(2)}.git"
    if re.match(r"^[\w.-]+/[\w.-]+$", url):
        return f"https://github.com/{url}.git"
    m = _SCP.match(url)
    if m:
        return f"https://{m.group('host').lower()}/{m.group('path')}.git"
    url = url.removeprefix("git+")
    # A forge's git://, ssh:// or plain http:// address is read as https (the guard refuses
    # plain http, and these hosts serve every repository over https).
    m = re.match(r"^(?:git|ssh|http)://(?:git@)?(github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)/(.+)$", url, re.I)
    if m:
        return f"https://{m.group(1).lower()}/{m.group(2)}"
    return url or None


def index_doc(registry: str, name: str) -> dict[str, Any]:
    """The index's document for a package (PyPI JSON, npm packument, Hex package)."""
    from urllib.parse import quote

    from ...errors import SourceError
    from ..artefact import base_url, get_json

    if registry == "pip":
        url = f"{base_url('pypi')}/pypi/{quote(name, safe='')}/json"
        doc = get_json(url, what="PyPI", not_found=f"no such package on PyPI: {name}")
    elif registry == "hex":
        url = f"{base_url('hex')}/api/packages/{quote(name, safe='')}"
        doc = get_json(url, what="Hex", not_found=f"no such package on Hex: {name}")
    elif registry == "npm":
        url = f"{base_url('npm')}/{quote(name, safe='@')}"
        doc = get_json(url, what="npm registry", not_found=f"no such package on npm: {name}")
    else:
        raise SourceError(f"{registry} has no package index to read")
    if not isinstance(doc, dict):
        raise SourceError(f"the {registry} index sent an unexpected answer for {name}")
    return doc


def latest_version(registry: str, doc: dict[str, Any], wanted: str | None) -> str:
    """The release `wanted` names (an npm dist-tag resolved), else the newest stable one."""
    from ...errors import SourceError
    from ..artefact import latest_pypi

    if registry == "pip":
        if wanted:
            return wanted
        return latest_pypi(doc)
    tags = table(doc.get("dist-tags"))
    resolved = tags.get(wanted or "latest") or wanted
    if not isinstance(resolved, str) or not resolved:
        raise SourceError(f"no version {wanted or 'latest'} of {doc.get('name') or 'it'} on npm")
    return resolved
