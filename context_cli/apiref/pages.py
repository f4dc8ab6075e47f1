"""API entries as searchable reference pages: one page per source file, one section per entry.

A class is a level-2 section and its members level-3 sections inside it, so a small class
stays one section (the chunker splits a big one at its members). `section_ids` then maps
each entry to the section that shows it, for the `symbols` table's `chunk_id`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..document import Block, Chunk, Document
from ..symbol import Symbol
from .model import ApiReference

_PART = re.compile(r" \(part \d+\)$")


def api_documents(ref: ApiReference) -> list[Document]:
    """The reference pages of `ref`, in the order their files were first met."""
    by_file: dict[str, list[Symbol]] = {}
    for s in ref.symbols:
        by_file.setdefault(s.source, []).append(s)
    return [_page(source, symbols, ref) for source, symbols in by_file.items() if source]


def _page(source: str, symbols: list[Symbol], ref: ApiReference) -> Document:
    module = next((s for s in symbols if s.kind == "module"), None)
    title = module.name if module else source
    blocks = [Block(0, "", module.doc)] if module and module.doc else []
    depth = {s.name: 2 for s in symbols if s.kind != "module"}
    for s in symbols:
        if s.kind == "module":
            continue
        parent = s.name.rsplit(".", 1)[0]
        level = min(depth.get(parent, 1) + 1, 6)
        depth[s.name] = level
        blocks.append(Block(level, heading(s, title), entry_text(s)))
    origin = f" (from {ref.origin})" if ref.origin else ""
    return Document(path=source, title=title, blocks=blocks, kind="reference",
                    description=f"API reference of {title}{origin}")


def heading(symbol: Symbol, page_title: str) -> str:
    """The entry's name below its page's module (`Signer.sign` on page `itsdangerous.signer`)."""
    prefix = page_title + "."
    return symbol.name[len(prefix):] if symbol.name.startswith(prefix) else symbol.name


def entry_text(s: Symbol) -> str:
    """Signature, deprecation, version, other names and the docstring, as Markdown."""
    lang = "ts" if s.kind in ("interface", "type", "enum", "namespace", "variable") else "python"
    parts = [f"```{lang}\n{s.signature}\n```"] if s.signature else []
    if s.deprecated is not None and s.deprecated not in s.doc:
        parts.append(f"**Deprecated:** {s.deprecated}" if s.deprecated else "**Deprecated.**")
    if s.aliases:
        parts.append("Also available as " + ", ".join(f"`{a}`" for a in s.aliases[:5]) + ".")
    if s.doc:
        parts.append(s.doc)
    return "\n\n".join(parts) or f"`{s.name}` ({s.kind})."


def section_ids(symbols: Sequence[Symbol], chunks: Iterable[tuple[int, Chunk]], pages: dict[str, str]) -> list[int | None]:
    """For each symbol, the id of the section on its page that shows it (its own heading,
    else its class's), or None. `pages` maps a reference page's path to its title."""
    where: dict[tuple[str, str], int] = {}
    for cid, chunk in chunks:
        if chunk.doc_path in pages:
            for part in chunk.section_title.split(" > "):
                where.setdefault((chunk.doc_path, _PART.sub("", part)), cid)
    out: list[int | None] = []
    for s in symbols:
        title = pages.get(s.source)
        found = None
        if title is not None:
            name = heading(s, title)
            while found is None and name:
                found = where.get((s.source, name))
                name = name.rpartition(".")[0] if "." in name else ""
            if found is None and s.kind == "module":
                found = next((cid for (path, _), cid in where.items() if path == s.source), None)
        out.append(found)
    return out
