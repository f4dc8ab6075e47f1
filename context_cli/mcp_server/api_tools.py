"""The API-reference MCP tools: `get_api` (one symbol's entry) and `get_changes` (the API
difference between two versions), as plain functions over `apiref` like tools.py's.

Both read the `symbols` table of packages built from a release's code (docs/api-reference.md).
A bare `library` means its highest visible version: inside a synced project, the project's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..apiref.changes import DEFAULT_TOKENS as CHANGES_TOKENS
from ..errors import ContextError
from ..search.engine import check_text
from .tools import MAX_LIBRARY_CHARS, MAX_TOKENS, MIN_TOKENS, Catalog, ToolError, token_budget

GET_API_DESCRIPTION = (
    "Look up a function, class, method or attribute in the API of the exact installed version of a library, read "
    "from its released code: signature, docstring, deprecation, the version it was added in, and where it is "
    "defined. Call it before writing code against an API you are not sure exists in the project's version, or "
    "to check arguments (e.g. name 'send_file', 'flask.send_file' or 'Session.request'). If the name is not "
    "found it suggests close names; an empty answer means that version has no such symbol."
)
GET_CHANGES_DESCRIPTION = (
    "What changed in a library's API between two versions: symbols added, removed, changed (old and new "
    "signature) and newly deprecated, plus the release notes in between. Call it when the user upgrades or "
    "downgrades a dependency, or when code written for one version fails on another. 'to' defaults to the "
    "installed (project's) version."
)
CHANGES_TOKENS_DESCRIPTION = (f"Most tokens the answer may use ({MIN_TOKENS}-{MAX_TOKENS}, default {CHANGES_TOKENS}): "
                              "removed entries first, then changed parameters, deprecations, additions, annotation "
                              "changes and release notes; `leftOut` counts what did not fit.")
NAME_DESCRIPTION = "Symbol name, qualified or not: send_file, flask.send_file, Session.request, ZodString.email."
MAX_NAME_CHARS = 300


def specs(catalog: Catalog) -> list[dict[str, Any]]:
    """The two tools' specs (name, description, inputSchema)."""
    library = {"type": "string", "description": "Library as name or name@version (a bare name means the installed "
                                                "version; the project's inside a synced project)."}
    return [
        {"name": "get_api", "description": GET_API_DESCRIPTION, "inputSchema": {
            "type": "object", "required": ["name"],
            "properties": {"library": {**library, "description": library["description"] + " Omit to look in "
                                       "every library."}, "name": {"type": "string", "description": NAME_DESCRIPTION}},
        }},
        {"name": "get_changes", "description": GET_CHANGES_DESCRIPTION, "inputSchema": {
            "type": "object", "required": ["library", "from"],
            "properties": {"library": library,
                           "from": {"type": "string", "description": "The older version, e.g. 2.3.3"},
                           "to": {"type": "string", "description": "The newer version (default: the installed one)"},
                           "tokens": {"type": "integer", "minimum": MIN_TOKENS, "maximum": MAX_TOKENS,
                                      "default": CHANGES_TOKENS, "description": CHANGES_TOKENS_DESCRIPTION}},
        }},
    ]


def get_api(catalog: Catalog, args: Mapping[str, Any]) -> dict[str, Any]:
    """`context api NAME --lib LIBRARY --format json`'s answer."""
    from ..apiref.lookup import find_api

    name = _text(args, "name", MAX_NAME_CHARS)
    library = _text(args, "library", MAX_LIBRARY_CHARS, required=False)
    packages = [catalog.resolve(library)] if library else catalog.visible()
    if not packages:
        raise ToolError("No libraries are installed; call search_packages and download_package first")
    try:
        found = find_api(name or "", packages)
    except ContextError as e:
        raise ToolError(str(e)) from None
    answer = found.to_dict()
    if not found.symbols:
        hint = f" Did you mean: {', '.join(found.suggestions)}?" if found.suggestions else ""
        answer["message"] = f"No symbol {found.query!r} in {', '.join(found.libraries)}.{hint}"
    return answer


def get_changes(catalog: Catalog, args: Mapping[str, Any]) -> dict[str, Any]:
    """`context changes LIBRARY FROM TO --format json`'s answer. A session limited by --libs
    compares only versions it may see; others may also fetch a version (registry, release)."""
    from ..apiref.changes import changes
    from ..apiref.obtain import obtain
    from ..store.store import Spec

    library = _text(args, "library", MAX_LIBRARY_CHARS) or ""
    tokens = token_budget(args.get("tokens"), CHANGES_TOKENS)
    old = _text(args, "from", 100) or ""
    new = _text(args, "to", 100, required=False)
    current = catalog.resolve(library if new is None else Spec.parse(library).name)
    spec = Spec.parse(library)
    try:
        if catalog.locked:
            before, after = (catalog.resolve(f"{spec.name}@{v}") for v in (old, new or current.id.version))
        else:
            registry = spec.registry or current.id.registry
            before = obtain(catalog.store, registry, spec.name, old)
            after = obtain(catalog.store, registry, spec.name, new or current.id.version)
        return changes(before, after).within(tokens).to_dict()
    except ContextError as e:
        raise ToolError(str(e)) from None


def _text(args: Mapping[str, Any], key: str, limit: int, *, required: bool = True) -> str | None:
    value = args.get(key)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and key in ("from", "to"):
        value = str(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ToolError(f"{key} is required")
        return None
    if not isinstance(value, str):
        raise ToolError(f"{key} must be a string")
    if len(value) > limit:
        raise ToolError(f"{key} is too long ({len(value)} characters)")
    check_text(value, key)
    return value.strip()


TOOLS: dict[str, Callable[[Catalog, Mapping[str, Any]], dict[str, Any]]] = {
    "get_api": get_api, "get_changes": get_changes}
