"""Render a search answer as Markdown for people and agents: one heading per page, its
sections below it in the page's own order (the answer's reading order)."""

from __future__ import annotations

from ..search.answer import Answer, Hit


def to_markdown(answer: Answer) -> str:
    head = (f"# {answer.query[:200]}\n\n"
            f"verdict **{answer.verdict}** · {answer.tokens} tokens of {answer.budget} · "
            f"{round(answer.saved_percent * 100)}% smaller than the pages it draws from")
    parts = [head]
    parts.extend(f"> {note}" for note in answer.notes)
    if not answer.results:
        parts.append("No matching sections. Try other words, or check `context list`.")
    page_key: tuple[str, str] | None = None
    for hit in answer.results:
        if (hit.library, hit.source) != page_key:
            page_key = (hit.library, hit.source)
            parts.append(_page_heading(hit))
        parts.append(f"### {section_title(hit)}\n\n*{hit.verdict} · {hit.tokens} tokens*\n\n{hit.content}")
    return "\n\n".join(parts) + "\n"


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
