"""The plain data of an API reference: one `Symbol` per public entry, gathered in an `ApiReference`."""

from __future__ import annotations

from dataclasses import dataclass, field

# What an entry is. Python: module, class, function, method, property, attribute;
# TypeScript adds interface, type, enum, namespace, variable.
KINDS = ("module", "class", "function", "method", "property", "attribute",
         "interface", "type", "enum", "namespace", "variable")


@dataclass(frozen=True)
class Symbol:
    """One public API entry.

    `name` is its qualified name where it is defined (`flask.helpers.send_file`), or, when it
    is defined in a private module, the shortest public name it is exported as. `aliases` are
    the other public names it is reachable by (`flask.send_file`). `signature` is written as
    the language writes it; `doc` is Markdown; `deprecated` is None or the message (empty
    when none was given); `since` is the version it was added in, where the docs say.
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


@dataclass
class ApiReference:
    """Every public symbol of one release, with notes on what could not be read."""

    registry: str
    name: str
    version: str
    language: str = "python"
    symbols: list[Symbol] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # skipped files and entries, for the build summary
    origin: str = ""  # where the entries came from when not the package itself ("@types/react@18.3.1")
