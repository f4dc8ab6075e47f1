"""The three MCP tools as plain functions: `get_docs`, `search_packages`, `download_package`.

Kept free of the MCP SDK so they can be tested (and reused) without a protocol session:
each takes the raw `arguments` mapping an agent sent, checks it by hand (agents send
surprising things, and a one-line message beats a schema-validation dump), and returns
plain JSON data or raises `ToolError` with one line the agent can act on.

Names, arguments and the `library` enum follow Neuledge Context's server, so agent
instructions written for it work unchanged (docs/agents.md).
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any, TypeVar

from ..errors import AmbiguousPackage, ContextError, NotInstalled
from ..search.engine import SearchOptions, answer, check_text
from ..store.store import UNREADABLE, Installed, Spec, Store

T = TypeVar("T")

DEFAULT_TOKENS = 2000
MIN_TOKENS = 100
MAX_TOKENS = 20_000
MAX_LIBRARY_CHARS = 300

WORKFLOW = ("If the library is missing, call search_packages, then download_package, then get_docs again; "
            "if the registry does not have it, ask the user to run `context add` to build the docs from source.")
GET_DOCS_DESCRIPTION = (
    "Search the version-specific documentation of installed libraries. Returns the most relevant sections, "
    "ranked and fitted to a token budget, each with its source, plus a relevance verdict "
    "(STRONG / MODERATE / WEAK). Local and instant: use it before memory or web search for a library's API. "
)
LOCKED_NOTE = "Only the libraries listed are available in this session; if one is missing, tell the user."
LIBRARY_DESCRIPTION = ("Installed library to search, as name@version (a bare name means its highest version). "
                       "Omit it to search every available library.")
NO_LIBRARY_DESCRIPTION = ("Library to search, as name@version. No libraries are installed yet: call search_packages, "
                          "then download_package, then get_docs again (or ask the user to run `context add`).")
TOPIC_DESCRIPTION = ("What you need, in a few words or a question: an API name, an error message or a task "
                     "(e.g. 'cancel a running pipeline', 'useEffect cleanup'). Quotes and operators are read as words.")
TOKENS_DESCRIPTION = f"Most tokens the answer may use ({MIN_TOKENS}-{MAX_TOKENS}, default {DEFAULT_TOKENS})."
SEARCH_PACKAGES_DESCRIPTION = (
    "Find documentation packages on the registry server. Use the short name the package has in its registry "
    "(registry 'npm' name 'react', registry 'pip' name 'fastapi'). Then call download_package with a version "
    "from the results, then get_docs. If nothing suitable is found, ask the user to run `context add` to build "
    "the docs from source."
)
DOWNLOAD_PACKAGE_DESCRIPTION = (
    "Download a documentation package from the registry server and install it. Take registry, name and version "
    "from search_packages. Afterwards get_docs lists it as name@version (the tool list is refreshed)."
)
REGISTRY_DESCRIPTION = "Package registry, as in search results: npm, pip, maven, hex, ..."
SERVER_DESCRIPTION = "Registry server name from config.json (optional; the default server if omitted)."
REQUIRED_HINT = {"registry": " (npm, pip, ..., as search_packages results give it)",
                 "name": " (the package's name in its registry, e.g. react)",
                 "version": " (one from search_packages results, e.g. 18.3.1)"}
NO_RESULTS_MESSAGE = ("No documentation found. Try fewer or different words: the API or function name alone, "
                      "or a phrase from an error message.")


class ToolError(ContextError):
    """A tool call that failed in a way the agent can read and act on."""


class Catalog:
    """The installed packages one server may show, optionally pinned by `--libs` specs.

    The store folder is re-listed only when its files change (checked with one cheap
    `scandir`), so `get_docs` stays fast yet sees packages added by `download_package`
    or by a `context add` running in another process.
    """

    def __init__(self, store: Store | None = None, specs: Sequence[str] = (), *,
                 scope: Sequence[str] = ()) -> None:
        self.store = store or Store()
        self.specs = tuple(Spec.parse(s) for s in specs if s.strip())
        # A project's docs.lock: these packages only (plus --libs), registry tools kept.
        self.scope = tuple(Spec.parse(s) for s in scope if s.strip())
        self._lock = threading.Lock()
        self._key: tuple[tuple[str, int, int], ...] | None = None
        self._all: list[Installed] = []

    @property
    def locked(self) -> bool:
        """True when `--libs` pinned the session: no registry tools, no other libraries."""
        return bool(self.specs)

    def check_specs(self) -> None:
        """Refuse to start with a `--libs` spec that matches nothing installed."""
        installed = self.all()
        for spec in self.specs:
            if not any(spec.matches(i.id) for i in installed):
                raise NotInstalled(f"--libs {spec}: not installed (see `context list`)")

    def fingerprint(self) -> tuple[tuple[str, int, int], ...]:
        """Changes when a package file is added, replaced or removed. While the folder cannot
        be read, the last listing's: the server answers from what it has (the watcher says why)."""
        try:
            return self.store.fingerprint()
        except OSError:
            if self._key is None:
                raise
            return self._key

    def fresh(self) -> bool:
        """True when no package file changed since the listing was read: then `all()`,
        `visible()` and `resolve()` with `refresh=False` are in-memory work."""
        key = self.fingerprint()
        with self._lock:
            return key == self._key

    @property
    def listing(self) -> tuple[tuple[str, int, int], ...] | None:
        """The fingerprint of the listing last read (None before the first)."""
        return self._key

    def all(self, *, refresh: bool = True) -> list[Installed]:
        """Every installed package; re-listed first if a file changed (unless `refresh` is
        False and a listing was read before)."""
        key = self.fingerprint() if refresh or self._key is None else self._key
        with self._lock:
            if key != self._key:
                try:
                    self._all, self._key = self.store.installed(), key
                except UNREADABLE as e:
                    raise ToolError(f"a package file in {self.store.root} is damaged ({e}); ask the user to "
                                    "find it with `context list` and reinstall or remove it") from None
            return list(self._all)

    def visible(self, *, refresh: bool = True) -> list[Installed]:
        """Packages this session may search, by name then newest version first."""
        found = self.all(refresh=refresh)
        allowed = self.specs + self.scope
        if not allowed:
            return found
        return [i for i in found if any(s.matches(i.id) for s in allowed)]

    def choices(self) -> list[str]:
        """The `name@version` labels offered in `get_docs`'s enum, without duplicates."""
        return list(dict.fromkeys(i.label for i in self.visible()))

    def resolve(self, library: str, *, refresh: bool = True) -> Installed:
        """The one package `library` means; a bare name means its highest visible version."""
        if len(library) > MAX_LIBRARY_CHARS:
            raise ToolError(f"library is too long ({len(library)} characters); give name or name@version")
        spec = Spec.parse(library)
        visible = self.visible(refresh=refresh)
        try:
            return self.store.resolve(spec, among=visible)
        except NotInstalled:
            raise ToolError(self._missing(library, spec, visible, refresh)) from None
        except AmbiguousPackage as e:
            raise ToolError(str(e)) from None

    def _missing(self, library: str, spec: Spec, visible: list[Installed], refresh: bool) -> str:
        shown = ", ".join(dict.fromkeys(i.label for i in visible[:20])) or "none"
        close = difflib.get_close_matches(spec.name, sorted({i.id.name for i in visible}), n=3, cutoff=0.7)
        guess = f" Did you mean {' or '.join(close)}?" if close else ""
        if self.locked:
            if any(spec.matches(i.id) for i in self.all(refresh=refresh)):
                return (f"{library} is not available in this session (limited by --libs to: {shown}); use one of "
                        "those, or ask the user to add it to `context serve --libs`")
            return f"Package not found: {library}.{guess} Available in this session: {shown}. {LOCKED_NOTE}"
        same_name = [i.label for i in visible if i.id.name == spec.name]
        if same_name:
            return (f"Package not found: {library}. Installed versions: {', '.join(same_name)}. Use one of them, "
                    f"or call search_packages to find the versions of {spec.name} the registry has, then "
                    "download_package.")
        return f"Package not found: {library}.{guess} Installed: {shown}. {WORKFLOW}"


def tool_specs(catalog: Catalog) -> list[dict[str, Any]]:
    """The tool list as plain dicts (name, description, inputSchema), rebuilt on every call
    so that `get_docs`'s enum always matches what is installed."""
    try:
        choices = catalog.choices()
    except ToolError:
        choices = []  # a damaged store: get_docs itself will say what is wrong
    library: dict[str, Any] = {"type": "string"}
    if choices:
        library.update(enum=choices, description=LIBRARY_DESCRIPTION)
    else:
        library["description"] = NO_LIBRARY_DESCRIPTION if not catalog.locked else LIBRARY_DESCRIPTION
    get_docs_spec = {
        "name": "get_docs",
        "description": GET_DOCS_DESCRIPTION + (LOCKED_NOTE if catalog.locked else WORKFLOW),
        "inputSchema": {
            "type": "object",
            "properties": {
                "library": library,
                "topic": {"type": "string", "description": TOPIC_DESCRIPTION},
                "tokens": {"type": "integer", "minimum": MIN_TOKENS, "maximum": MAX_TOKENS,
                           "default": DEFAULT_TOKENS, "description": TOKENS_DESCRIPTION},
            },
            "required": ["topic"],
        },
    }
    if catalog.locked:
        return [get_docs_spec]
    return [get_docs_spec, _registry_spec("search_packages"), _registry_spec("download_package")]


def _registry_spec(name: str) -> dict[str, Any]:
    download = name == "download_package"
    version = ("Package version, from search_packages results (e.g. 18.3.1)" if download
               else "Specific version to look for (optional)")
    return {
        "name": name,
        "description": DOWNLOAD_PACKAGE_DESCRIPTION if download else SEARCH_PACKAGES_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "registry": {"type": "string", "description": REGISTRY_DESCRIPTION},
                "name": {"type": "string", "description": "Package name as published (e.g. react, fastapi)"},
                "version": {"type": "string", "description": version},
                "server": {"type": "string", "description": SERVER_DESCRIPTION},
            },
            "required": ["registry", "name", "version"] if download else ["registry", "name"],
        },
    }


@dataclass(frozen=True)
class DocsRequest:
    """A checked `get_docs` call: what to look for, in which packages, within what budget."""

    topic: str
    packages: list[Installed]
    budget: int


def get_docs(catalog: Catalog, args: Mapping[str, Any]) -> dict[str, Any]:
    """Search one library (or every visible one) for `topic`; the answer's JSON (docs/search.md)."""
    return search_docs(docs_request(catalog, args))


def docs_request(catalog: Catalog, args: Mapping[str, Any], *, refresh: bool = True) -> DocsRequest:
    """Check a `get_docs` call's arguments and resolve its library against the catalogue
    (as last listed, when `refresh` is False)."""
    topic = args.get("topic")
    if not isinstance(topic, str):
        raise ToolError("topic is required: a few words or a question, e.g. 'cancel a running pipeline'")
    if not topic.strip():
        raise ToolError("topic is empty: give a few words or a question, e.g. 'cancel a running pipeline'")
    check_text(topic, "topic")
    budget = token_budget(args.get("tokens"))
    library = args.get("library")
    if library is not None and not isinstance(library, str):
        raise ToolError("library must be a string such as name@version")
    if library is not None:
        check_text(library, "library")
    if library and library.strip():
        packages = [catalog.resolve(library.strip(), refresh=refresh)]
    else:
        packages = catalog.visible(refresh=refresh)
        if not packages:
            raise ToolError("No libraries are installed. " + (LOCKED_NOTE if catalog.locked else WORKFLOW))
    return DocsRequest(topic, packages, budget)


def search_docs(request: DocsRequest) -> dict[str, Any]:
    """The search itself: the part that reads package files."""
    try:
        result = answer(request.topic, request.packages, SearchOptions(budget=request.budget, warm=True))
    except UNREADABLE as e:
        names = ", ".join(p.label for p in request.packages[:5])
        raise ToolError(f"a package file is damaged ({names}: {e}); call download_package to reinstall it, "
                        "or ask the user to rebuild or remove it (`context remove NAME@VERSION`)") from None
    if not result.results:
        result = replace(result, message=NO_RESULTS_MESSAGE)
    return result.to_dict()


def token_budget(value: Any, default: int = DEFAULT_TOKENS) -> int:
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not MIN_TOKENS <= value <= MAX_TOKENS:
        raise ToolError(f"tokens must be a whole number from {MIN_TOKENS} to {MAX_TOKENS} (got {value!r:.40})")
    return value


def search_packages(catalog: Catalog, args: Mapping[str, Any]) -> dict[str, Any]:
    """Ask the registry server which versions of a package it has."""
    _refuse_if_locked(catalog, "search_packages")
    registry, name = _text(args, "registry"), _text(args, "name")
    version, server = _text(args, "version", required=False), _text(args, "server", required=False)
    results = [_entry(e) for e in _remote(lambda: _client().search_remote(registry, name, version, server=server))]
    answer: dict[str, Any] = {"results": results, "count": len(results)}
    if not results:
        answer["message"] = (f"The registry has no documentation package for {registry}/{name}"
                             f"{'@' + version if version else ''}. Try the name as published in the registry, "
                             "or ask the user to run `context add` to build the docs from source.")
    return answer


def download_package(catalog: Catalog, args: Mapping[str, Any]) -> dict[str, Any]:
    """Download and install one package; the caller then refreshes the tool list."""
    _refuse_if_locked(catalog, "download_package")
    registry, name, version = _text(args, "registry"), _text(args, "name"), _text(args, "version")
    server = _text(args, "server", required=False)
    inst = _remote(lambda: _client().download_and_install(registry, name, version, server=server,
                                                          store=catalog.store))
    sections = inst.section_count
    return {
        "success": True,
        "package": {"registry": inst.id.registry, "name": inst.id.name, "version": inst.id.version,
                    "library": inst.label, "description": inst.meta.get("description"), "sectionCount": sections,
                    "sizeBytes": inst.path.stat().st_size},
        "message": f"Installed {inst.label} ({sections} section{'' if sections == 1 else 's'}). It is now available via the get_docs tool "
                   f"as library \"{inst.label}\".",
    }


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    """A search result as Context's client reads it: one size, `size`, in bytes and a number
    (our server sends it twice, also as `sizeBytes`; a size that is not a count is left out)."""
    out = {k: v for k, v in entry.items() if k not in ("size", "sizeBytes")}
    size = entry.get("size", entry.get("sizeBytes"))
    if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
        out["size"] = size
    return out


def _refuse_if_locked(catalog: Catalog, tool: str) -> None:
    if catalog.locked:
        raise ToolError(f"{tool} is not available in this session: it is limited to the libraries given with "
                        "--libs; use get_docs with one of them, or ask the user to restart `context serve` "
                        "without --libs")


def _text(args: Mapping[str, Any], key: str, *, required: bool = True) -> str | None:
    """A string argument, stripped; a version sent as a bare number is taken as text."""
    value = args.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ToolError(f"{key} is required{REQUIRED_HINT.get(key, '')}")
        return None
    if key == "version" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ToolError(f"{key} must be a string")
    return value.strip()


def _client() -> ModuleType:
    """The registry client, imported on first use (it pulls in requests)."""
    try:
        from ..remote import client
    except ImportError as e:
        raise ToolError(f"the registry client is not available in this build ({e})") from None
    return client


def _remote(call: Callable[[], T]) -> T:
    """Run a registry call, turning failures into one line that names the agent's next step."""
    import requests

    client = _client()
    try:
        return call()
    except client.Unreachable as e:
        fix = (f"change or unset {client.URL_ENV} where `context serve` starts" if client.from_env(e.server)
               else "run `context server add NAME URL --default`")
        raise ToolError(f"cannot reach registry server {e.server.url}: {e.reason}. Try again later, or ask "
                        f"the user to {fix} to use another registry server.") from None
    except client.PackageNotFound as e:
        step = ("Call download_package with one of these versions." if e.versions else
                "Call search_packages with the name the registry uses, or ask the user to run `context add` "
                "to build the docs from source.")
        raise ToolError(f"{e}. {step}") from None
    except ContextError:
        raise
    except requests.RequestException as e:
        raise ToolError(f"the registry server could not be reached ({type(e).__name__}); try again later, or "
                        "ask the user to check it with `context server list`") from None
    except (OSError, ValueError) as e:
        raise ToolError(f"registry request failed: {e}") from None
