"""Render a search answer (DESIGN §4 JSON) as Markdown for people and agents."""

from __future__ import annotations


def to_markdown(answer: dict) -> str:
    head = (f"# {answer['query'][:200]}\n\n"
            f"verdict **{answer['verdict']}** · {answer['tokens']} tokens of {answer['budget']} · "
            f"{round(answer['savedPercent'] * 100)}% smaller than the pages it draws from")
    parts = [head]
    for note in answer.get("notes", []):
        parts.append(f"> {note}")
    if not answer["results"]:
        parts.append("No matching sections. Try other words, or check `context list`.")
    for r in answer["results"]:
        where = r["url"] or r["source"]
        parts.append(f"## {r['rank']}. {r['title']}\n\n"
                     f"*{r['library']} · {where} · {r['verdict']}*\n\n{r['content']}")
    return "\n\n".join(parts) + "\n"
