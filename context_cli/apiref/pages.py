"""API entries as searchable reference pages: one page per source file, one section per entry.

A class is a level-2 section and its members level-3 sections inside it, so a small class
stays one section (the chunker splits a big one at its members). An entry without a
docstring (nor a deprecation, nor documented members) gets no section of its own: it is one
line, its signature, in a list at the end of its class's section (else its module's), which
keeps a big release's thousands of bare attributes and methods from multiplying the
sections; a release with docs of its own lists none (they stay in the `symbols` table).
Entries the docs already show (`shown`, from apiref/autodoc.py) get no section either, and
docs that show most of the documented API get no reference pages.
`section_ids` then maps each entry to the section that shows it, for the `symbols` table's
`chunk_id`. docs/api-reference.md has the figures behind these rules.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence

from ..document import Block, Chunk, Document
from ..symbol import Symbol
from .model import ApiReference

_PART = re.compile(r" \(part \d+\)$")
MAX_BRIEF_CHARS = 160  # a listed entry's signature line is clipped here
MEMBER_KINDS = ("method", "property", "attribute")  # named with their class (`Signer.sign`)
GROUP_CHARS = 1200  # small sibling entries share a section up to this much text
DOCS_PAGES = 3  # pages of docs beyond which a release counts as documented (not a README and a changelog)


def api_documents(ref: ApiReference, shown: Collection[str] = (), *, docs_pages: int = 0) -> list[Document]:
    """The reference pages of `ref`, in the order their files were first met, for the entries
    the docs do not already show. When the release has docs of its own (`docs_pages` of
    them, at least DOCS_PAGES), entries without a section are not listed either: they stay
    in the `symbols` table only; and when those docs show at least half of the documented
    entries (SQLAlchemy's autodoc pages do), there are no reference pages at all."""
    documented = [s for s in ref.symbols if s.doc and s.kind != "module"]
    if docs_pages >= DOCS_PAGES and sum(s.name in shown for s in documented) * 2 >= len(documented) > 0:
        return []  # the docs show most of the documented API: what they leave out, they left out on purpose
    listed = docs_pages < DOCS_PAGES
    by_file: dict[str, list[Symbol]] = {}
    for s in ref.symbols:
        if s.name not in shown or s.kind == "module":
            by_file.setdefault(s.source, []).append(s)
    pages = [_page(source, symbols, ref, listed) for source, symbols in by_file.items() if source]
    return [p for p in pages if p.blocks]


def _page(source: str, symbols: list[Symbol], ref: ApiReference, listed: bool) -> Document:
    module = next((s for s in symbols if s.kind == "module"), None)
    title = module.name if module else source
    entries = [s for s in symbols if s.kind != "module"]
    own = _own_sections(entries)
    bare: dict[str, list[str]] = {}  # entry name ("" for the module) -> its members without a section
    blocks: list[tuple[str, Block]] = []
    depth: dict[str, int] = {}
    for s in entries:
        parent = s.name.rsplit(".", 1)[0]
        if s.name not in own:
            if listed:
                bare.setdefault(parent if parent in depth else "", []).append(_brief(s))
            continue
        level = min(depth.get(parent, 1) + 1, 6)
        depth[s.name] = level
        blocks.append((s.name, Block(level, heading(s, title), entry_text(s))))
    intro = "\n\n".join(filter(None, [module.doc if module else "", _listing("Names", bare.get(""))]))
    out = _grouped([Block(b.level, b.title, "\n\n".join(filter(None, [b.text, _listing("Members", bare.get(name))])))
                    for name, b in blocks])
    if intro and out and len(intro) + len(out[0].text) <= GROUP_CHARS:  # a short module docstring opens its first entry
        out[0] = Block(out[0].level, out[0].title, f"{intro}\n\n{out[0].text}")
    elif intro:
        out.insert(0, Block(0, "", intro))
    origin = f" (from {ref.origin})" if ref.origin else ""
    return Document(path=source, title=title, blocks=out, kind="reference",
                    description=f"API reference of {title}{origin}")


def _own_sections(entries: list[Symbol]) -> set[str]:
    """The entries that get a section: documented or deprecated ones, and those holding one."""
    own: set[str] = set()
    for s in reversed(entries):  # members follow their class
        if s.doc or s.deprecated is not None or s.name in own:
            own.add(s.name)
            own.add(s.name.rsplit(".", 1)[0])
    return own & {s.name for s in entries}


def _grouped(blocks: list[Block]) -> list[Block]:
    """Runs of small sibling entries without members of their own joined into one section
    of up to GROUP_CHARS, titled by their names: a section per one-line docstring costs
    more in the index than its text."""
    out: list[Block] = []
    joinable = False  # the last block out has no subsections, so a sibling may join it
    for i, b in enumerate(blocks):
        leaf = i + 1 == len(blocks) or blocks[i + 1].level <= b.level
        last = out[-1] if out else None
        if leaf and joinable and last is not None and last.level == b.level \
                and len(last.text) + len(b.text) <= GROUP_CHARS:
            out[-1] = Block(b.level, f"{last.title}, {b.title}", f"{last.text}\n\n{b.text}")
        else:
            out.append(b)
        joinable = leaf
    return out


def _brief(s: Symbol) -> str:
    line = s.signature.split("\n", 1)[0] or s.name
    return line if len(line) <= MAX_BRIEF_CHARS else line[:MAX_BRIEF_CHARS] + " ..."


def _listing(what: str, lines: list[str] | None) -> str:
    """Entries without a section, their signatures as one code block (a list of names would
    read as a table of contents to the chunker)."""
    return f"{what} without docstrings:\n\n```\n" + "\n".join(lines) + "\n```" if lines else ""


def heading(symbol: Symbol, page_title: str) -> str:
    """The entry's name below its page's module (`Signer.sign` on page `itsdangerous.signer`)."""
    prefix = page_title + "."
    return symbol.name[len(prefix):] if symbol.name.startswith(prefix) else symbol.name


def entry_text(s: Symbol) -> str:
    """Signature, deprecation, version, other names and the docstring, as Markdown."""
    typescript = s.source.endswith((".ts", ".mts", ".cts")) or s.kind in ("interface", "type", "enum", "namespace",
                                                                          "variable")
    parts = [f"```{'ts' if typescript else 'python'}\n{s.signature}\n```"] if s.signature else []
    if deprecated := deprecation_note(s):
        parts.append(deprecated)
    if since := since_note(s):
        parts.append(since)
    if s.aliases and s.kind not in MEMBER_KINDS:  # (a member's other names are its class's, plus its own)
        parts.append("Also available as " + ", ".join(f"`{a}`" for a in s.aliases[:5]) + ".")
    if s.doc:
        parts.append(s.doc)
    return "\n\n".join(parts) or f"`{s.name}` ({s.kind})."


def deprecation_note(s: Symbol) -> str:
    """"**Deprecated:** MESSAGE" when the entry is deprecated and its docstring does not say
    the message already (a JSDoc `@deprecated` or a `.. deprecated::` does)."""
    if s.deprecated is None or s.deprecated in s.doc:
        return ""
    return f"**Deprecated:** {s.deprecated}" if s.deprecated else "**Deprecated.**"


def since_note(s: Symbol) -> str:
    """"*Added in version V.*" when the entry has a `since` its docstring does not say already."""
    return f"*Added in version {s.since}.*" if s.since and f"version {s.since}" not in s.doc else ""


def section_ids(symbols: Sequence[Symbol], chunks: Iterable[tuple[int, Chunk]], pages: dict[str, str],
                shown: Mapping[str, str] | None = None) -> list[int | None]:
    """For each symbol, the id of the section that shows it, or None. On its reference page:
    its own heading, else a section listing it, else its class's heading, else (a module)
    the page's first section. For an entry the docs show (`shown`: name -> docs page): that
    page's first section defining it in code, else naming it, else the page's first.
    `pages` maps a reference page's path to its title."""
    shown = shown or {}
    homes = set(pages) | set(shown.values())
    where: dict[tuple[str, str], int] = {}
    by_page: dict[str, list[tuple[int, Chunk]]] = {}
    for cid, chunk in chunks:
        if chunk.doc_path in homes:
            by_page.setdefault(chunk.doc_path, []).append((cid, chunk))
            for part in chunk.section_title.split(" > "):
                for name in _PART.sub("", part).split(", "):  # (a group of entries is titled by all their names)
                    where.setdefault((chunk.doc_path, name), cid)
    names: dict[str, _PageNames] = {}
    out: list[int | None] = []
    for s in symbols:
        docs_page = shown.get(s.name) if s.kind != "module" else None
        path = docs_page or s.source
        title = pages.get(s.source)
        found = where.get((s.source, heading(s, title))) if title is not None and not docs_page else None
        if found is None and s.kind != "module" and (docs_page or title is not None):
            if path not in names:
                names[path] = _PageNames(by_page.get(path, []))
            found = names[path].find(s)
        if found is None and title is not None and not docs_page:
            name = heading(s, title).rpartition(".")[0]
            while found is None and name:
                found = where.get((s.source, name))
                name = name.rpartition(".")[0]
        if found is None and (docs_page or s.kind == "module") and by_page.get(path):
            found = by_page[path][0][0]
        out.append(found)
    return out


# A name defined in code: a code span of a signature (`get_object_or_404(`, `Signer.secret_key:`),
# or the name a line of a code block declares (`class Signer(`, `async def run(`, `readonly x: T`;
# searched from a newline put before the text: a pattern that starts with `^` is tried at every
# character, one that starts with `\n` only at line starts).
_SIGNATURE = re.compile(r"`([\w.]+)[(:]")
_DECLARES = re.compile(r"\n(?:[\w@]+ )*([\w.]+)(?=[(\s:=<]|$)", re.MULTILINE)
_MENTIONS = re.compile(r"`([\w.]+)[`\s=<]")  # a name in a code span


class _PageNames:
    """The first section of one page that defines, and that names, each name in code: by its
    last part (`sign`) and its last two (`Signer.sign`, so that `s.sign(` in an example is
    not Signer.sign)."""

    def __init__(self, chunks: list[tuple[int, Chunk]]) -> None:
        self.chunks = chunks
        self.defined: dict[str, int] = {}
        self.named: dict[str, int] = {}
        for cid, chunk in chunks:
            for name in (*_SIGNATURE.findall(chunk.content), *_DECLARES.findall("\n" + chunk.content)):
                _note(self.defined, name, cid)
            for name in _MENTIONS.findall(chunk.content):
                _note(self.named, name, cid)

    def find(self, s: Symbol) -> int | None:
        """Where `s` (a member by its class and name) is defined, else named, else (a member
        a `:members:` fill passed over: no docstring) where its class is defined, else titled."""
        parts = s.name.split(".")
        member = s.kind in MEMBER_KINDS and len(parts) > 1
        key = ".".join(parts[-2:]) if member else parts[-1]
        found = self.defined.get(key) or self.named.get(key) or (self.defined.get(parts[-2]) if member else None)
        return found or next((cid for cid, c in self.chunks if parts[-1] in c.section_title), None)


def _note(table: dict[str, int], dotted: str, cid: int) -> None:
    parts = dotted.strip(".").split(".")
    table.setdefault(parts[-1], cid)
    table.setdefault(".".join(parts[-2:]), cid)
