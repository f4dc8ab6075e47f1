"""sphinx-gallery example scripts as rst pages.

A gallery script is a Python file whose docstring is an rst page opening with its title, and
whose body alternates code with text blocks: a `# %%` line (or a line of 20 or more `#`)
followed by `#`-comment lines written in rst. sphinx-gallery renders each script as a page of
text and code; matplotlib's user guide is written this way. The script is rewritten as that
rst page (code in `code-block:: python` directives, sphinx-gallery's `# sphinx_gallery_`
settings dropped) and read by the rst reader.
"""

from __future__ import annotations

import re

_SEPARATOR = re.compile(r"^(?:# ?%%.*|#{20,}\s*)$")
_SETTING = re.compile(r"^\s*#\s*sphinx_gallery_\w+")
_DOCSTRING = re.compile(r'\A(?:#[^\n]*\n|[ \t]*\n)*[ \t]*[rRuU]?("""|\'\'\')(.*?)(?:\1|\Z)', re.S)
_TITLE_LINE = re.compile(r"^\S.*$")
_ADORNMENT = re.compile(r"^([=\-~^*#+`'\"])\1{2,}\s*$")
_PREAMBLE = re.compile(r"^(?:\s*$|\.\. |\s+\S|:\w+:)")  # blank, directive, its options, field


def is_gallery_script(text: str | bytes) -> bool:
    """Whether a Python source opens with a docstring whose first content is an rst title."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    m = _DOCSTRING.match(text)
    if m is None:
        return False
    lines = m.group(2).split("\n")
    i = 0
    while i < len(lines) and _PREAMBLE.match(lines[i]) and not _ADORNMENT.match(lines[i].strip()):
        i += 1
    if i < len(lines) and _ADORNMENT.match(lines[i]):  # an overline
        i += 1
    title = lines[i].strip() if i < len(lines) else ""
    under = lines[i + 1].strip() if i + 1 < len(lines) else ""
    return bool(title) and _ADORNMENT.match(under) is not None and len(under) >= len(title)


def gallery_rst(text: str) -> str:
    """The rst page a gallery script renders as (see the module docstring)."""
    import ast

    lines = text.split("\n")
    parts: list[str] = []
    start = 0
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        tree = None
    if tree is not None and tree.body and isinstance(tree.body[0], ast.Expr):
        doc = ast.get_docstring(tree, clean=True)
        if doc is not None:
            parts.append(doc)
            start = tree.body[0].end_lineno or 0
    code: list[str] = []
    i = start
    while i < len(lines):
        line = lines[i]
        i += 1
        if not _SEPARATOR.match(line):
            if not _SETTING.match(line):
                code.append(line)
            continue
        parts.append(_code_block(code))
        code = []
        prose = []
        while i < len(lines) and lines[i].startswith("#") and not _SEPARATOR.match(lines[i]):
            prose.append(lines[i][2:] if lines[i].startswith("# ") else lines[i][1:])
            i += 1
        parts.append("\n".join(prose))
    parts.append(_code_block(code))
    return "\n\n".join(p for p in parts if p.strip()) + "\n"


def _code_block(lines: list[str]) -> str:
    body = "\n".join(lines).strip("\n")
    if not body.strip():
        return ""
    return ".. code-block:: python\n\n" + "\n".join("   " + line if line.strip() else "" for line in body.split("\n"))
