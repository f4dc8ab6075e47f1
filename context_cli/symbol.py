"""One public API entry read from a release's code: the plain data the API reference hands on.

Extraction (context_cli/apiref) makes them, the package file stores them (`symbols` table),
search and `context api` read them back; so they sit with the other plain data, below every layer.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Symbol:
    """One public API entry.

    `name` is its qualified name where it is defined (`flask.helpers.send_file`), or, when it
    is defined in a private module, the shortest public name it is exported as. `aliases` are
    the other public names it is reachable by (`flask.send_file`). `signature` is written as
    the language writes it; `doc` is Markdown; `deprecated` is None or the message (empty
    when none was given); `since` is the version it was added in, where the docs say.
    `kind`: module, class, function, method, property or attribute (Python); interface,
    type, enum, namespace and variable too (TypeScript).
    """

    name: str
    kind: str
    signature: str = ""
    doc: str = ""
    deprecated: str | None = None
    since: str | None = None
    source: str = ""  # file relative to the release's root, POSIX separators
    line: int = 0
    aliases: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)
