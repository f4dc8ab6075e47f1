"""Text for people: a search answer as Markdown (one heading per page, its sections below it
in the page's own order), and the one gate every line printed for humans goes through.

`terminal_safe` drops what a terminal would obey rather than show: C0 controls but tab and
newline, DEL, and C1 controls, ESC among them. Package content, titles, descriptions and
lockfile names are strangers' text, and an escape sequence in them could clear the screen,
retitle the window or write the clipboard (OSC 52). JSON output keeps the text: JSON escapes
every C0 control, ESC included, and `json_safe` escapes the C1 controls and DEL that JSON
written as UTF-8 would leave raw. `echo` (and `table_cell` for rich tables) also masks
credentials in URLs (`errors.redact`).
"""

from __future__ import annotations

import re

from ..errors import redact
from ..search.answer import Answer, Hit

_CONTROLS = r"[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # compiled (and cached) by `re` on first use
_RAW_IN_JSON = r"[\x7f-\x9f]"  # what `json.dumps(ensure_ascii=False)` leaves unescaped
SECTION_LEVEL = 3  # a result's heading (`###`); its content's own headings go below it
_ATX = r"( {0,3})(#{1,6})(?=[ \t]|$)"  # a heading line's indent and marks (CommonMark)
_FENCE = r" {0,3}(`{3,}|~{3,})"  # a code fence's opening or closing marks


def terminal_safe(text: str) -> str:
    """`text` without the controls a terminal would act on (tab and newline stay)."""
    return re.sub(_CONTROLS, "", text)


def json_safe(text: str) -> str:
    """JSON text with DEL and C1 controls written as `\\u` escapes: the same JSON value, and
    nothing in it a terminal would obey (they can only occur inside strings)."""
    return re.sub(_RAW_IN_JSON, lambda m: f"\\u{ord(m.group()):04x}", text)


def echo(message: str = "", *, err: bool = False, nl: bool = True, redacted: bool = True) -> None:
    """`click.echo` for human-readable text: controls stripped and, in messages (not in
    documentation, whose examples may show `?api_key=...` on purpose), credentials masked."""
    import click  # (not at the top: a plain `context query` prints without loading click)

    click.echo(terminal_safe(redact(message) if redacted else message), err=err, nl=nl)


def table_cell(text: str) -> str:
    """A value for a rich table: safe for the terminal and escaped as rich markup."""
    from rich.markup import escape

    return escape(terminal_safe(redact(text)))


def to_markdown(answer: Answer) -> str:
    head = (f"# {answer.query[:200]}\n\n"
            f"verdict **{answer.verdict}** · {answer.tokens} tokens of {answer.budget} · "
            f"{round(answer.saved_percent * 100)}% smaller than the pages it draws from")
    parts = [head]
    parts.extend(f"> {note}" for note in answer.notes)
    parts.extend(f"*not in {library}: {', '.join(words)}*" for library, words in missing_terms(answer).items())
    if not answer.results:
        parts.append("No matching sections. Try other words, or check `context list`.")
    page_key: tuple[str, str] | None = None
    for hit in answer.results:
        if (hit.library, hit.source) != page_key:
            page_key = (hit.library, hit.source)
            parts.append(_page_heading(hit))
        parts.append(f"### {section_title(hit)}\n\n*{hit.verdict} · {hit.tokens} tokens*\n\n"
                     f"{nest_headings(hit.content, below=SECTION_LEVEL)}")
    return "\n\n".join(parts) + "\n"


def missing_terms(answer: Answer) -> dict[str, list[str]]:
    """The words of the question that each library answering lacks altogether (every hit of a
    library carries its library's)."""
    out: dict[str, list[str]] = {}
    for hit in answer.results:
        words = hit.signals.get("missingTerms")
        if words and hit.library not in out:
            out[hit.library] = [str(w) for w in words]
    return out


def nest_headings(text: str, *, below: int) -> str:
    """`text` (Markdown) with its ATX headings moved under level `below`: the levels it uses
    become below+1, below+2, … (at most 6), so a merged section's own `##` does not outrank
    the `###` it sits under and the outline never skips a level. Lines inside code fences
    (a `# comment` in a shell example) are left alone."""
    if "#" not in text:
        return text
    lines = text.split("\n")
    found: list[tuple[int, re.Match[str]]] = []
    fence = ""
    for i, line in enumerate(lines):
        marks = re.match(_FENCE, line)
        if fence:
            if marks and marks.group(1)[0] == fence[0] and len(marks.group(1)) >= len(fence) \
                    and not line[marks.end():].strip():
                fence = ""
            continue
        if marks and not (marks.group(1)[0] == "`" and "`" in line[marks.end():]):
            fence = marks.group(1)
            continue
        heading = re.match(_ATX, line)
        if heading:
            found.append((i, heading))
    levels = sorted({len(h.group(2)) for _, h in found})
    level_of = {level: min(6, below + 1 + n) for n, level in enumerate(levels)}
    for i, h in found:
        lines[i] = h.group(1) + "#" * level_of[len(h.group(2))] + lines[i][h.end():]
    return "\n".join(lines)


def _page_heading(hit: Hit) -> str:
    rank = hit.page.rank if hit.page else hit.rank
    title = hit.page.title if hit.page else hit.title.split(" > ", 1)[0]
    where = (hit.page.url if hit.page else None) or hit.url or hit.source
    return f"## {rank}. {title}\n\n*{hit.library} · {where}*"


def section_title(hit: Hit) -> str:
    """The hit's title without its page's title in front (that is the heading above it)."""
    page_title = hit.page.title if hit.page else ""
    if page_title and hit.title.startswith(page_title + " > "):
        return hit.title[len(page_title) + 3:]
    return hit.title
