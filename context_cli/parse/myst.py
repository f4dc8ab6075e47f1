"""MyST, Sphinx's Markdown: directive fences (```` ```{note} ````), `{role}` text, targets.

Many Sphinx projects now write Markdown with MyST (Click, for one). markdown-it sees a
directive as a code fence whose info string is `{name} argument`; this module turns it
into what the directive means for text, using the same name tables as the rst reader:
code directives stay code, `eval-rst` bodies go through the rst reader, admonitions and
version notes become labelled text, navigation (`toctree`, `contents`) disappears and
anything else keeps its argument and Markdown body.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .common import Sink, TextSink, code_span, fence
from .includes import Includes
from .sphinx import ADMONITIONS, CODE, CODE_LANG, HIDE_ARGUMENT, LABELS, MYST_DROP, SIGNATURE, VERSION, looks_like_code

_INFO = re.compile(r"^\{([\w:.+-]+)\}\s*(.*)$", re.S)
_OPTION = re.compile(r"^:([\w-]+):(?:\s+(.*))?$")

RenderMarkdown = Callable[[str, Sink], None]


def directive_of(info: str) -> tuple[str, str] | None:
    """(name, argument) when a fence's info string names a MyST directive."""
    m = _INFO.match(info.strip())
    return (m.group(1).lower(), m.group(2).strip()) if m else None


def split_options(content: str) -> tuple[dict[str, str], str]:
    """Leading `:key: value` lines (or a `---` YAML block) and the body after them."""
    lines = content.split("\n")
    options: dict[str, str] = {}
    i = 0
    if lines and lines[0].strip() == "---":
        end = next((j for j in range(1, len(lines)) if lines[j].strip() == "---"), None)
        if end is not None:
            for line in lines[1:end]:
                key, _, value = line.partition(":")
                options[key.strip()] = value.strip()
            i = end + 1
    else:
        while i < len(lines):
            m = _OPTION.match(lines[i].strip())
            if not m:
                break
            options[m.group(1)] = (m.group(2) or "").strip()
            i += 1
    return options, "\n".join(lines[i:]).strip("\n")


def render_directive(name: str, argument: str, content: str, sink: Sink, markdown: RenderMarkdown, *,
                     includes: Includes | None = None) -> None:
    """Write one MyST directive into `sink`; `markdown` renders a Markdown body; `includes`
    serves the files an `eval-rst` body includes."""
    base = name.rsplit(":", 1)[-1]
    options, body = split_options(content)
    if name in MYST_DROP or base in MYST_DROP:
        return
    if name == "eval-rst":
        from .rst import render_rst

        render_rst(body, sink, includes=includes, markdown=markdown)
    elif name in CODE or base in CODE:
        language = argument.split()[0] if argument else options.get("language", "") or CODE_LANG.get(base, "")
        sink.add(fence(body, language))
    elif name == "math":
        sink.add(fence(body, "math"))
    elif name in VERSION:
        version, rest = (argument.split(None, 1) + ["", ""])[:2]
        _labelled(f"{VERSION[name]} {version}".strip(), rest, body, sink, markdown)
    elif name in ADMONITIONS:
        label = argument if name == "admonition" and argument else LABELS.get(name, name.capitalize())
        _labelled(label, "" if name == "admonition" else argument, body, sink, markdown)
    elif name.startswith("auto") or (argument and (":" in name or base in SIGNATURE)):
        for line in argument.split("\n"):
            sink.add(code_span(line.strip()))
        markdown(body, sink)
    else:
        if argument and name not in HIDE_ARGUMENT:
            sink.add(argument)
        code, language = looks_like_code(body.split("\n"))
        if code and not argument:
            sink.add(fence(body, language))
        else:
            markdown(body, sink)


def _labelled(label: str, text: str, body: str, sink: Sink, markdown: RenderMarkdown) -> None:
    inner = TextSink()
    markdown(body, inner)
    head = f"{label}: {text}" if text else label
    rest = inner.text()
    sink.add(f"{head}: {rest}" if rest and not text else "\n\n".join(p for p in (head, rest) if p))


_ROLE_SUFFIX = re.compile(r"\{([\w:.+-]+)\}$")


def role_before(text: str) -> tuple[str, str] | None:
    """If `text` ends with a MyST role marker (`{func}`), return (text without it, role name)."""
    m = _ROLE_SUFFIX.search(text)
    return (text[: m.start()], m.group(1)) if m else None
