"""Render a search answer as Markdown for people and agents."""

from __future__ import annotations

from ..search.answer import Answer


def to_markdown(answer: Answer) -> str:
    head = (f"# {answer.query[:200]}\n\n"
            f"verdict **{answer.verdict}** · {answer.tokens} tokens of {answer.budget} · "
            f"{round(answer.saved_percent * 100)}% smaller than the pages it draws from")
    parts = [head]
    parts.extend(f"> {note}" for note in answer.notes)
    if not answer.results:
        parts.append("No matching sections. Try other words, or check `context list`.")
    for hit in answer.results:
        parts.append(f"## {hit.rank}. {hit.title}\n\n"
                     f"*{hit.library} · {hit.url or hit.source} · {hit.verdict}*\n\n{hit.content}")
    return "\n\n".join(parts) + "\n"
