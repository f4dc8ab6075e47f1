"""Jupyter notebooks: Markdown cells as Markdown, code cells as fenced code, outputs dropped.

The cells are joined into one Markdown text and handed to the Markdown parser, so a
notebook's headings split it exactly as a page's would. Outputs are dropped: they are
large, often binary, and describe one run rather than the library.
"""

from __future__ import annotations

import json
from typing import Any

from .common import ParseError, fence


def notebook_markdown(text: str) -> str:
    """The notebook as one Markdown text; ParseError when it is not notebook JSON."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"not a valid notebook (invalid JSON: {exc})") from exc
    if not isinstance(data, dict):
        raise ParseError("not a valid notebook (the JSON is not an object)")
    cells = data.get("cells")
    if cells is None:  # nbformat 3 kept cells in worksheets
        cells = [c for ws in data.get("worksheets") or [] if isinstance(ws, dict) for c in ws.get("cells") or []]
    if not isinstance(cells, list):
        raise ParseError("not a valid notebook (no list of cells)")
    language = _language(data.get("metadata"))
    parts = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        kind = cell.get("cell_type")
        source = _source(cell.get("source", cell.get("input", "")))
        if not source.strip():
            continue
        if kind == "markdown":
            parts.append(source.strip("\n"))
        elif kind == "heading":  # nbformat 3
            parts.append("#" * int(cell.get("level") or 1) + " " + source.strip())
        elif kind == "code":
            parts.append(fence(source, language))
    return "\n\n".join(parts) + "\n"


def _source(value: Any) -> str:
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


def _language(metadata: Any) -> str:
    if not isinstance(metadata, dict):
        return "python"
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        value = section.get(field) if isinstance(section, dict) else None
        if isinstance(value, str) and value.strip():
            return value.strip().lower()
    return "python"
