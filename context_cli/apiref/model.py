"""All public symbols of one release, with notes on what could not be read."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..symbol import Symbol


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
    skipped: bool = False  # the code could not be read (the notes say why): no `symbols` table, not an empty one
