"""The part of an included file a `literalinclude` shows, chosen the way Sphinx chooses it.

Sphinx's `literalinclude` (and MyST's, and FastAPI's `{* file ln[1:9] *}`) rarely shows a whole
file: `:pyobject:` picks one class or function, `:lines:`, `:start-after:`, `:end-before:` and
friends a stretch, `:dedent:` strips indentation. Options are applied in Sphinx's order
(pyobject, start, end, lines, dedent, prepend, append); one that does not match leaves nothing,
as a Sphinx build would fail rather than show the wrong lines.
"""

from __future__ import annotations

import posixpath
import textwrap
from collections.abc import Mapping

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "jsx", ".ts": "typescript", ".tsx": "tsx", ".json": "json", ".toml": "toml", ".yaml": "yaml",
    ".yml": "yaml", ".ini": "ini", ".cfg": "ini", ".sh": "bash", ".bash": "bash", ".ps1": "powershell",
    ".html": "html", ".htm": "html", ".xml": "xml", ".css": "css", ".scss": "scss", ".sql": "sql",
    ".rs": "rust", ".go": "go", ".java": "java", ".kt": "kotlin", ".c": "c", ".h": "c", ".cpp": "cpp",
    ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php", ".md": "markdown", ".rst": "rst",
    ".dockerfile": "dockerfile", ".graphql": "graphql", ".proto": "protobuf", ".svelte": "svelte", ".vue": "vue",
}


def language_of(path: str) -> str:
    """The highlight language a file's name suggests ("" when it says none)."""
    name = posixpath.basename(path).lower()
    if name == "dockerfile":
        return "dockerfile"
    return LANGUAGES.get(posixpath.splitext(name)[1], "")


def select(text: str, options: Mapping[str, str]) -> str | None:
    """The lines of `text` that `options` (Sphinx's names) select; None when one does not match."""
    lines = text.split("\n")
    if options.get("pyobject"):
        found = _pyobject(text, options["pyobject"].strip())
        if found is None:
            return None
        lines = lines[found[0] - 1:found[1]]
    for key, inclusive in (("start-at", True), ("start-after", False)):
        if options.get(key):
            at = next((i for i, line in enumerate(lines) if options[key] in line), None)
            if at is None:
                return None
            lines = lines[at if inclusive else at + 1:]
    for key, inclusive in (("end-at", True), ("end-before", False)):
        if options.get(key):
            at = next((i for i, line in enumerate(lines) if options[key] in line), None)
            if at is None:
                return None
            lines = lines[:at + 1 if inclusive else at]
    if options.get("lines"):
        picked = line_numbers(options["lines"], len(lines))
        if not picked:
            return None
        lines = [lines[n] for n in picked]
    out = "\n".join(lines)
    if "dedent" in options:
        amount = options["dedent"].strip()
        out = textwrap.dedent(out) if not amount.isdigit() else "\n".join(line[int(amount):] for line in lines)
    prepend, append = options.get("prepend"), options.get("append")
    return "\n".join(p for p in (prepend, out, append) if p is not None)


def line_numbers(spec: str, count: int) -> list[int]:
    """0-based indexes for a Sphinx line spec (`1,3,5-10,20-`) over `count` lines; [] if it is bad."""
    out: list[int] = []
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        first, dash, last = part.partition("-")
        try:
            lo = int(first) if first else 1
            hi = (int(last) if last else count) if dash else lo
        except ValueError:
            return []
        out.extend(n - 1 for n in range(max(lo, 1), min(hi, count) + 1))
    return out


def _pyobject(text: str, name: str) -> tuple[int, int] | None:
    """(first, last) 1-based lines of the class or function `name` (`Class.method`), decorators
    included; None when the source does not parse or has no such object."""
    import ast

    try:
        tree: ast.AST = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for part in name.split("."):
        node = next((n for n in ast.iter_child_nodes(tree)
                     if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == part), None)
        if node is None:
            return None
        tree = node
    assert isinstance(tree, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    first = min([tree.lineno, *(d.lineno for d in tree.decorator_list)])
    return first, tree.end_lineno or tree.lineno
