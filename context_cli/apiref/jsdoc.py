"""JSDoc/TSDoc comments (`/** ... */`) rendered to Markdown, with `@deprecated` and `@since`."""

from __future__ import annotations

import re

from .docstring import MAX_DOC_CHARS, Rendered

_TAG = re.compile(r"^@(\w+)\s*(.*)$")
_LINK = re.compile(r"\{@(?:link|linkcode|linkplain)\s+([^}|\s]+)(?:[\s|]+([^}]*))?\}")


def render_jsdoc(comment: str) -> Rendered:
    """Markdown of one doc comment; `@param` and friends become lists, `@example` code."""
    body = comment[:MAX_DOC_CHARS].strip()
    body = body.removeprefix("/**").removesuffix("*/")
    lines = [re.sub(r"^\s*\* ?", "", line) if line.lstrip().startswith("*") else line.strip()
             for line in body.split("\n")]
    text: list[str] = []
    tags: list[tuple[str, list[str]]] = []
    fenced = False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        m = _TAG.match(line.strip()) if not fenced else None
        if m:
            tags.append((m.group(1).lower(), [m.group(2)]))
        elif tags:
            tags[-1][1].append(line)
        else:
            text.append(line)
    out = ["\n".join(text).strip()]
    since = deprecated = None
    params: list[str] = []
    for tag, value in tags:
        joined = "\n".join(value).strip()
        flat = " ".join(joined.split())
        if tag in ("param", "arg", "argument", "property", "prop"):
            name, _, desc = re.sub(r"^\{[^}]*\}\s*", "", flat).partition(" ")
            params.append(f"- `{name.strip('[]')}`" + (f": {desc.lstrip('- ')}" if desc else ""))
        elif tag in ("returns", "return"):
            out.append(f"**Returns:** {flat}")
        elif tag in ("throws", "throw"):
            out.append(f"**Throws:** {flat}")
        elif tag == "example":
            code = joined if "```" in joined else f"```ts\n{joined}\n```"
            out.append(f"**Example:**\n\n{code}")
        elif tag == "deprecated":
            deprecated = flat
            out.append(f"**Deprecated:** {flat}" if flat else "**Deprecated.**")
        elif tag == "since":
            since = flat.split()[0] if flat else None
        elif tag in ("see", "remarks", "note"):
            out.append(f"**{tag.title()}:** {flat}")
    if params:
        out.insert(1, "**Parameters:**\n\n" + "\n".join(params))
    markdown = _LINK.sub(lambda m: f"`{m.group(2) or m.group(1)}`", "\n\n".join(p for p in out if p))
    return Rendered(markdown, since, deprecated)
