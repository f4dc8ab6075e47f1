"""A project's versioned documentation site, as the ladder's sixth step.

Only a site that serves exactly the version asked for is used: a Read the Docs project's build
of that version (`https://<project>.readthedocs.io/en/<version>/`, tried as `<version>` and
`v<version>`). An unversioned site would be another version's docs under this one's name, so it
is left out and the reason said. The site is fetched by the web source (`web.fetch_website`)
through a client whose every request, redirects included, passes `guard.check_public` first.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from ...errors import SourceError
from ..base import Fetched
from .guard import check_public

MAX_PAGES = 400
RTD_HOSTS = (".readthedocs.io", ".readthedocs.org", ".rtfd.io")


def versioned_urls(site: str, version: str) -> list[str]:
    """The URLs of `site`'s build of exactly `version`; empty when the site is not versioned."""
    host = (urlsplit(site).hostname or "").lower()
    if not host.endswith(RTD_HOSTS):
        return []
    project = host.split(".", 1)[0]
    return [f"https://{project}.readthedocs.io/en/{v}/" for v in (version, f"v{version}")]


def fetch_site(site: str, version: str) -> Fetched:
    """The site's pages for `version`; SourceError saying why not."""
    from ..http import HttpOptions
    from ..web import WebLimits, fetch_website

    urls = versioned_urls(site, version)
    if not urls:
        raise SourceError(f"{urlsplit(site).hostname} serves no per-version build (only Read the Docs "
                          "builds of the exact version are used)")
    failures = []
    for url in urls:
        check_public(url)
        with _guarded_client(HttpOptions.from_env()) as client:
            try:
                fetched = fetch_website(url, client, WebLimits(max_pages=MAX_PAGES))
            except SourceError as e:
                failures.append(str(e))
                continue
        fetched.version = version
        fetched.meta.update({"docs_source": "site"})
        return fetched
    raise SourceError(f"no build of {version} at {urls[0]} ({failures[-1] if failures else 'no answer'})")


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
