"""A `symbols` row's signature stored without the entry's own name, which `name` holds
(docs/package-format.md).

A signature starts with the name it is called by, after keywords or decorators at most
(`Signer.sign(value)`, `class Signer(...)`, `@classmethod AppConfig.create(entry)`,
`async Signal.asend(...)`, `function useEffect(...)`): in Django 5.1.4 that is 0.18 MB of its
0.33 MB of signatures. Each line's first such name is stored as one control character:
LAST2 for the name's last two dotted parts (`Signer.sign`), LAST1 for its last part
(`sign`). Neither occurs in a signature a language writes; one that holds them has them
stored as U+FFFD. (A name found inside a longer one, `get` in `getter()`, reads back as well.)
"""

from __future__ import annotations

import re

LAST2, LAST1 = "\x1e", "\x1f"
_MARKS = re.compile(f"[{LAST2}{LAST1}]")
_LEAD = re.compile(r"(?:[@\w]+ )*")  # keywords and decorators before the name (`async`, `@classmethod`)


def packed_signature(name: str, signature: str) -> str:
    """The `signature` column's value for the entry `name`."""
    if LAST1 in signature or LAST2 in signature:
        signature = _MARKS.sub("\ufffd", signature)
    parts = name.rsplit(".", 2)
    last1 = parts[-1]
    last2 = f"{parts[-2]}.{last1}" if len(parts) > 1 else None
    if "\n" not in signature:
        return _packed_line(signature, last2, last1)
    return "\n".join(_packed_line(line, last2, last1) for line in signature.split("\n"))


def signature_text(name: str, stored: str) -> str:
    """The signature of the entry `name` from its `signature` column's value."""
    if LAST1 not in stored and LAST2 not in stored:
        return stored
    parts = name.rsplit(".", 2)
    return stored.replace(LAST2, ".".join(parts[-2:])).replace(LAST1, parts[-1])


def _packed_line(line: str, last2: str | None, last1: str) -> str:
    start, lead = 0, -1
    while True:
        if last2 is not None and line.startswith(last2, start):
            return f"{line[:start]}{LAST2}{line[start + len(last2):]}"
        if line.startswith(last1, start):
            return f"{line[:start]}{LAST1}{line[start + len(last1):]}"
        if lead < 0:
            lead = _LEAD.match(line).end()  # type: ignore[union-attr]  # (it matches the empty string)
        start = line.find(" ", start, lead) + 1
        if not start:
            return line
