"""A project's documentation site, as the ladder's site step.

The site is read by the web source (`web.fetch_site`): its `llms-full.txt`, `llms.txt`, `.md`
pages, sitemap or a crawl. First the site's build of exactly the version asked for (a version
segment such as Read the Docs' `/en/1.2.3/`, `/v1.2.3/`, `?version=`); only where the site has
none and the caller allows it (a definition's `site: {latest: true}`), the site as it is now,
recorded as such in the package meta (`docs_version: latest`, `docs_ref`: the URL read), so
that the sync table, `context info` and answers say so. Never another version silently.

A site the package metadata names is the package author's choice: every request to it,
redirects included, passes `guard.check_public` first (https to a public host). A definition's
site is the catalogue's (reviewed) or the user's own choice, and is fetched as given.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ...errors import SourceError
from ..base import Fetched
from .guard import check_public

MAX_PAGES = 400
DEADLINE_S = 300.0  # one dependency's whole crawl; a sync has many
NO_SUCH_VERSION = "0.0.0-no-such-version"
BORROWED = "using the site root's"  # web.py's note when a page's llms file is the root's


def fetch_docs_site(site: str, version: str, *, latest: bool = False, guarded: bool = True) -> Fetched:
    """The pages of `site`'s build of `version`, else (with `latest`) of the site as it is now;
    SourceError saying why not."""
    from ..http import HttpClient, HttpOptions
    from ..web import WebLimits, fetch_site

    if guarded:
        check_public(site, schemes=("https",))
    opts = HttpOptions.from_env()
    with _guarded_client(opts) if guarded else HttpClient(opts) as client:
        exact = exact_build(client, site, version)
        fetched = None
        if exact is not None:
            fetched = fetch_site(exact, client=client, limits=WebLimits(max_pages=MAX_PAGES, deadline=DEADLINE_S))
            if any(BORROWED in n for n in fetched.notes):  # the root's llms file: not this version's
                fetched.cleanup()
                fetched, exact = None, None
        if fetched is None:
            if not latest:
                raise SourceError(f"{_host(site)} has no build of {version}; an unversioned site is used "
                                  "only where a definition allows it (site: {latest: true})")
            fetched = fetch_site(site, client=client, limits=WebLimits(max_pages=MAX_PAGES, deadline=DEADLINE_S))
            fetched.meta.update({"docs_version": "latest", "docs_ref": fetched.source_url})
            fetched.notes.append(f"docs from {fetched.source_url}: the site as it is now (latest); "
                                 f"it has no build of {version}")
        else:
            fetched.meta["docs_ref"] = fetched.source_url
    fetched.version = version
    fetched.meta["docs_source"] = "site"
    return fetched


def exact_build(client: Any, site: str, version: str) -> str | None:
    """The URL of `site`'s build of exactly `version` (`/en/1.2.3/`, `/v1.2.3/`, or the site's
    own version segment replaced), or None. A `?version=` query is no build (every page ignores
    an unknown query), and neither is a path a site answers whatever version it names."""
    from ..http import FetchError
    from ..site_urls import versioned_candidates

    for cand in versioned_candidates(site, version):
        if "version=" in urlsplit(cand).query:
            continue
        try:
            client.get(cand)
        except FetchError as e:
            if e.network:
                raise
            continue
        try:
            client.get(cand.replace(version, NO_SUCH_VERSION, 1))
        except FetchError as e:
            if e.network:
                raise
            return cand
        return None  # it answers for a version that does not exist too
    return None


def _host(url: str) -> str:
    return urlsplit(url).hostname or url[:100]


def _guarded_client(opts: Any) -> Any:
    """An HttpClient whose sessions refuse, before connecting, any URL the guard refuses; the
    client follows redirects by hand, so every hop is a request that passes here."""
    import requests

    from ..http import HttpClient

    class GuardedAdapter(requests.adapters.HTTPAdapter):
        def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
            check_public(str(request.url), schemes=("https",))
            return super().send(request, *args, **kwargs)

    class GuardedClient(HttpClient):
        def _session(self) -> requests.Session:
            s = super()._session()
            if not isinstance(s.get_adapter("https://"), GuardedAdapter):
                for prefix in ("https://", "http://"):
                    s.mount(prefix, GuardedAdapter())
            return s

    return GuardedClient(opts)
