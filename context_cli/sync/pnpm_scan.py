"""A fast reader for the parts of pnpm-lock.yaml that sync uses.

pnpm writes its lockfile in one fixed block layout; a general YAML parser spends seconds on
a 20,000-package file (measured: 12 s with libyaml on the shared 2-core machine). This scanner
reads the same layout line by line and returns what `yaml.safe_load` would for
`lockfileVersion`, `importers` (or v6's top-level dependency maps) and the keys of
`packages`. Anything outside that layout returns None, and the caller uses the YAML parser,
which also gives the line of a real syntax error.
"""

from __future__ import annotations

import re
from typing import Any

_ENTRY = re.compile(r"""^('(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|[^'"\s\-\[{#&*!|>%@`][^\s]*?|@[^\s]*?)\s*:(?:\s+(.*?))?\s*$""")
_DEP_FIELDS = {"dependencies", "devDependencies", "optionalDependencies"}
_SKIPPED = {"settings", "snapshots", "overrides", "catalogs", "patchedDependencies", "time",
            "packageExtensionsChecksum", "pnpmfileChecksum", "onlyBuiltDependencies", "ignoredOptionalDependencies"}


def scan(text: str) -> dict[str, Any] | None:
    """The lockfile's data, or None when the text leaves pnpm's layout."""
    data: dict[str, Any] = {}
    importers: dict[str, Any] = {}
    packages: dict[str, Any] = {}
    section = ""
    importer: dict[str, Any] = {}
    field: dict[str, Any] = {}
    dep: dict[str, Any] = {}
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        if indent > 2 and section in ("packages", *_SKIPPED):
            continue  # the details of a package: not needed
        if section in _SKIPPED and indent:
            continue
        m = _ENTRY.match(stripped.rstrip("\r"))
        if m is None or indent % 2 or "\t" in line[:indent + 1]:
            return None
        key, value = _scalar(m.group(1)), m.group(2)
        if indent == 0:
            section = key
            if value is not None and value != "{}":
                if key in ("importers", "packages", *_DEP_FIELDS):
                    return None
                if key == "lockfileVersion":
                    data[key] = _scalar(value)
                section = ""
            elif key == "importers":
                data["importers"] = importers
            elif key == "packages":
                data["packages"] = packages
            elif key in _DEP_FIELDS:
                field = data[key] = {}
            elif key not in _SKIPPED:
                return None
        elif section == "packages" and indent == 2:
            if value not in (None, "{}"):
                return None
            packages[key] = {}
        elif section == "importers":
            if indent in (2, 4) and value not in (None, "{}"):
                return None  # a flow mapping (or a mistake): the YAML parser reads it
            if indent == 2:
                importer = importers[key] = {}
            elif indent == 4:
                field = importer[key] = {}
            elif indent == 6:
                if value is not None and value.startswith(("{", "[")):
                    return None
                dep = field[key] = {} if value is None else {"version": _scalar(value)}
            elif indent == 8 and value is not None and not value.startswith(("{", "[")):
                dep[key] = _scalar(value)
            else:
                return None
        elif section in _DEP_FIELDS:
            if indent == 2:
                if value is not None and value.startswith(("{", "[")):
                    return None
                dep = field[key] = {} if value is None else {"version": _scalar(value)}
            elif indent == 4 and value is not None and not value.startswith(("{", "[")):
                dep[key] = _scalar(value)
            else:
                return None
        else:
            return None
    return data if "lockfileVersion" in data else None


def _scalar(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    return text
