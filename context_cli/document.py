"""The plain data every layer hands to the next: a parsed page and the chunks cut from it.

Parsers produce a `Document` (a title plus a flat list of headed blocks in reading order);
the chunker turns it into `Chunk`s; the package writer stores them. Keeping the page flat
(heading level + body) lets every parser stay simple and the chunker own all tree logic.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Block:
    """A heading and the body text that follows it up to the next heading of any level.

    `level` is 1-6 for a heading; 0 marks text that stands before the first heading.
    `text` is Markdown: paragraphs separated by blank lines, code kept in ``` fences.
    """

    level: int
    title: str
    text: str


@dataclass
class Document:
    """One parsed page.

    `path` is relative to the root that was added (POSIX separators) and is what search
    results show as `source`. `title` comes from front matter, else the first H1, else the
    file name. The H1 used as the title is not repeated in `blocks`.
    """

    path: str
    title: str
    blocks: list[Block] = field(default_factory=list)
    description: str = ""
    url: str | None = None
    # Free-form text the dense embedder may prefer to the body (e.g. a flattened API operation).
    embed_hint: str | None = None
    # What the page is, for ranking: one of PAGE_KINDS.
    kind: str = "guide"


# A page is a guide (prose written to teach), a reference (API entries, often generated from
# code) or a changelog (release notes, what's new); search weighs them by the question.
PAGE_KINDS = ("guide", "reference", "changelog")


@dataclass
class Chunk:
    """One searchable section as stored in a package."""

    doc_path: str
    doc_title: str
    section_title: str  # heading path below the page title, e.g. "Install > From source (part 2)"
    content: str
    tokens: int
    has_code: bool
    url: str | None = None
    embed_text: str | None = None  # what the dense model embeds; None means derive from content

    @property
    def breadcrumb(self) -> str:
        """`Page > Section > Subsection`, the title path shown to users."""
        if not self.section_title or self.section_title == self.doc_title:
            return self.doc_title
        return f"{self.doc_title} > {self.section_title}"


def estimate_tokens(text: str) -> int:
    """ceil(chars / 4): the estimate Neuledge Context uses, so budgets mean the same thing."""
    return (len(text) + 3) // 4
