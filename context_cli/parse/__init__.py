"""Documentation files to `Document`s: Markdown/MDX, rst, AsciiDoc, HTML, notebooks, text.

`parse_file` is what folder builds call; web and OpenAPI sources call `parse_html` and
`parse_markdown` on text they already hold. Parser libraries (markdown-it, docutils,
lxml) are imported inside the functions that need them: importing this package costs
nothing, so `context --help` stays fast.

Files above 1 MiB are parsed in pieces cut at headings (see `split.py`), so memory stays
bounded whatever the input.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, ParamSpec

from ..document import Block, Document
from .common import SPLIT_MARKER, Parsed, ParseError, ParserFailure, finish_document

if TYPE_CHECKING:
    from .includes import Includes
    from .split import Scanner

__all__ = [
    "SUFFIXES",
    "ParseError",
    "ParserFailure",
    "markup",
    "parse_asciidoc",
    "parse_file",
    "parse_html",
    "parse_markdown",
    "parse_notebook",
    "parse_rst",
    "parse_text",
]

_MARKDOWN = frozenset({".md", ".markdown", ".mdx"})
_RST = frozenset({".rst"})
_ASCIIDOC = frozenset({".adoc", ".asciidoc", ".asc"})
_HTML = frozenset({".html", ".htm"})
SUFFIXES = _MARKDOWN | _RST | _ASCIIDOC | _HTML | frozenset({".txt", ".ipynb"})
GALLERY_SUFFIX = ".py"  # a sphinx-gallery script, when folder discovery found one


def parse_file(rel_path: str, data: bytes, *, url: str | None = None, root: str | None = None) -> Document | None:
    """Parse one file by its suffix; None for suffixes not handled (and for Python files that
    are not sphinx-gallery scripts). Release notes come back with kind "changelog".

    `root` is the source root the file's `rel_path` is relative to (a plain path: this runs in
    worker processes); with it, the files a page includes are read from inside that root.
    Raises ParseError (naming the file) when it cannot be decoded or parsed.
    """
    from .decode import decode
    from .kind import mark_kind

    suffix = _suffix(rel_path)
    if suffix not in SUFFIXES and suffix != GALLERY_SUFFIX:
        return None
    if suffix == GALLERY_SUFFIX:
        from .gallery import gallery_rst, is_gallery_script

        if not is_gallery_script(data[:8192]):
            return None  # code, not a page
        text, suffix = gallery_rst(decode(data, rel_path)), ".rst"
    else:
        text = decode(data, rel_path, html=suffix in _HTML)
    includes = _includes(root, rel_path)
    if suffix == ".txt" and _looks_like_rst(text):
        suffix = ".rst"  # Django and other Sphinx projects keep reST in .txt files
    if suffix in _MARKDOWN:
        doc = parse_markdown(rel_path, text, url=url, mdx=suffix == ".mdx", includes=includes)
    elif suffix in _RST:
        doc = parse_rst(rel_path, text, url=url, includes=includes)
    elif suffix in _ASCIIDOC:
        doc = parse_asciidoc(rel_path, text, url=url)
    elif suffix in _HTML:
        doc = parse_html(rel_path, text, url=url)
    elif suffix == ".ipynb":
        doc = parse_notebook(rel_path, text, url=url)
    else:
        doc = parse_text(rel_path, text, url=url)
    return mark_kind(doc)


def _includes(root: str | None, rel_path: str) -> Includes | None:
    from .includes import Includes

    return Includes(root, rel_path) if root else None


_P = ParamSpec("_P")


def _guarded(func: Callable[_P, Document]) -> Callable[_P, Document]:
    """Every failure of a parse function becomes a ParseError naming the file.

    An unforeseen exception (a parser bug, a library's odd failure, deep recursion) becomes
    a ParserFailure: one bad page must cost that page, never the whole build or crawl.
    """

    @functools.wraps(func)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> Document:
        rel_path = str(args[0] if args else kwargs.get("rel_path", ""))
        try:
            return func(*args, **kwargs)
        except ParseError as exc:
            if str(exc).startswith(rel_path):
                raise
            raise type(exc)(f"{rel_path}: {exc}") from exc
        except Exception as exc:
            raise ParserFailure(f"{rel_path}: could not be parsed ({type(exc).__name__}: {exc})") from exc

    return wrapper


_RST_TITLE = re.compile(r"^(\S[^\n]{0,200})\n([=\-~^\"'*+#`:.])\2{2,}[ \t]*$", re.M)
_RST_DIRECTIVE = re.compile(r"^\.\. [a-zA-Z][\w:-]*::", re.M)


def _looks_like_rst(text: str) -> bool:
    """A `.txt` file that is really reStructuredText: an underlined title or a directive
    near the top (Django's whole documentation is written this way)."""
    head = text[:8192]
    if _RST_DIRECTIVE.search(head):
        return True
    return any(len(m.group(0).split("\n")[1].rstrip()) >= len(m.group(1).rstrip()) for m in _RST_TITLE.finditer(head))


def _suffix(rel_path: str) -> str:
    """The suffix that picks the parser. Some `.txt` files are known to hold markup:
    `llms.txt`/`llms-full.txt` are Markdown, Sphinx's `_sources/page.rst.txt` is rst."""
    stem, suffix = posixpath.splitext(rel_path.lower())
    if suffix == ".txt":
        if posixpath.basename(stem).startswith("llms"):
            return ".md"
        inner = posixpath.splitext(stem)[1]
        if inner in (".rst", ".md"):
            return inner
    return suffix


def markup(rel_path: str) -> str | None:
    """"rst" or "md": the markup a page's roles and code are written in, told by its suffix as
    the parser is picked (a `.txt` page taken for reST, as Sphinx projects write them); None
    for a page in another."""
    suffix = _suffix(rel_path)
    return "rst" if suffix in _RST or suffix == ".txt" else "md" if suffix in _MARKDOWN else None


@_guarded
def parse_markdown(rel_path: str, text: str, *, url: str | None = None, mdx: bool = False,
                   includes: Includes | None = None) -> Document:
    """A Markdown (or, with `mdx`, MDX) page; llms-full.txt and OpenAPI texts use this too.
    With `includes`, the files the page includes are read in (parse/md_include.py)."""
    from .markdown import parse_markdown_blocks
    from .split import markdown_boundaries

    if includes is not None:  # expanded whole, before a big page is cut into pieces
        from .md_include import expand

        text = expand(text, includes, rel_path)
    return _in_pieces(rel_path, text, url,
                      lambda piece, n: parse_markdown_blocks(piece, mdx=mdx, path=rel_path, includes=includes),
                      markdown_boundaries)


@_guarded
def parse_rst(rel_path: str, text: str, *, url: str | None = None, includes: Includes | None = None) -> Document:
    """A reStructuredText page, Sphinx directives and roles included; with `includes`, its
    `include` and `literalinclude` directives read the files they name."""
    from .markdown import render_markdown
    from .rst import parse_rst_blocks
    from .split import rst_boundaries, rst_style_prefix, rst_title_styles

    prefix: list[str] = []
    markdown = functools.partial(render_markdown, includes=includes)

    def piece(part: str, n: int) -> Parsed:
        if n and not prefix:
            prefix.append(rst_style_prefix(rst_title_styles(text)))
        return parse_rst_blocks(part, prefix=prefix[0] if n else "", includes=includes, markdown=markdown)

    return _in_pieces(rel_path, text, url, piece, rst_boundaries)


@_guarded
def parse_asciidoc(rel_path: str, text: str, *, url: str | None = None) -> Document:
    """An AsciiDoc page (see `asciidoc.py` for what is read and why not asciidoc3)."""
    from .asciidoc import parse_asciidoc_blocks
    from .split import asciidoc_boundaries

    return _in_pieces(rel_path, text, url, lambda piece, n: parse_asciidoc_blocks(piece), asciidoc_boundaries)


@_guarded
def parse_html(rel_path: str, html: str, *, url: str | None = None) -> Document:
    """An HTML page: chrome removed, main content as headed Markdown blocks."""
    from .html import parse_html_blocks

    return finish_document(rel_path, parse_html_blocks(html), url=url)


@_guarded
def parse_notebook(rel_path: str, text: str, *, url: str | None = None) -> Document:
    """A Jupyter notebook: Markdown cells and code cells, outputs dropped."""
    from .notebook import notebook_markdown

    return parse_markdown(rel_path, notebook_markdown(text), url=url)


@_guarded
def parse_text(rel_path: str, text: str, *, url: str | None = None) -> Document:
    """Plain text: one introduction block, title from the file name."""
    from .text import parse_text_blocks

    return finish_document(rel_path, parse_text_blocks(text), url=url)


def _in_pieces(
    rel_path: str,
    text: str,
    url: str | None,
    parse_piece: Callable[[str, int], Parsed],
    scanner: Scanner,
) -> Document:
    """Parse `text` whole, or piece by piece when it is big; only the first piece gives the title."""
    from . import split as splitting

    if len(text) <= splitting.BIG:
        return finish_document(rel_path, parse_piece(text, 0), url=url)
    parsed: Parsed | None = None
    for n, piece in enumerate(splitting.split(text, scanner)):
        part = parse_piece(piece, n)
        if parsed is None:
            parsed = part
        else:
            _append(parsed.blocks, part.blocks)
    assert parsed is not None
    return finish_document(rel_path, parsed, url=url)


def _append(blocks: list[Block], more: list[Block]) -> None:
    """Join a later piece's blocks: its leading headless text continues the previous block."""
    for block in more:
        headless = block.level == 0 or block.title.startswith(SPLIT_MARKER)
        if headless and blocks:
            if block.text:
                last = blocks[-1]
                last.text = "\n\n".join(t for t in (last.text, block.text) if t)
        elif not headless or block.text:
            blocks.append(Block(block.level, "" if headless else block.title, block.text))
