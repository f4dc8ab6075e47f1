"""Loading JSON, JSONC, TOML and YAML dependency files; every failure is one `LockfileError`
naming the file and, where the format has lines, the line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .model import LockfileError, read_text

# A JSON string, or a comment, or a comma before a closing bracket (JSONC: bun.lock).
_JSONC = re.compile(r'("(?:[^"\\\n]|\\.)*")|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def load_json(path: Path, label: str, *, jsonc: bool = False) -> Any:
    text = read_text(path, label)
    if jsonc:
        text = _JSONC.sub(lambda m: m.group(1) or _blank(m.group(0)), text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise LockfileError(label, f"invalid JSON ({e.msg})", e.lineno) from None
    except RecursionError:
        raise LockfileError(label, "is nested too deeply to be a dependency file") from None


def _blank(comment: str) -> str:
    """Comments and dropped commas keep their newlines, so JSON errors report true lines."""
    return "\n" * comment.count("\n")


def load_toml(path: Path, label: str) -> dict[str, Any]:
    import tomllib

    text = read_text(path, label)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+)", str(e))
        line = int(m.group(1)) if m else (text.rstrip("\n").count("\n") + 1 if "end of document" in str(e) else None)
        msg = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", str(e)) or "syntax error"
        raise LockfileError(label, f"invalid TOML ({msg})", line) from None
    except RecursionError:
        raise LockfileError(label, "is nested too deeply to be a dependency file") from None


# A YAML anchor (`&name` after a line start, space, bracket, comma, colon or dash), or text
# that looks like one: only then are the parser's events checked for aliases.
_ANCHOR = re.compile(r"(?:^|[\s\[{,:-])&[^\s\[\]{},]", re.MULTILINE)


def load_yaml(path: Path, label: str) -> Any:
    """A YAML dependency file, aliases refused (as in registry definitions): no lockfile
    writer emits them, and nested ones (a "billion laughs" file) make 1 KB stand for
    gigabytes of lists once anything walks the result."""
    import yaml

    text = read_text(path, label)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        if _ANCHOR.search(text):
            _refuse_aliases(text, label, loader)
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as e:
        line = e.problem_mark.line + 1 if e.problem_mark else None
        raise LockfileError(label, f"invalid YAML ({e.problem or 'syntax error'})", line) from None
    except yaml.YAMLError as e:
        raise LockfileError(label, f"invalid YAML ({' '.join(str(e).split())[:120]})") from None
    except RecursionError:
        raise LockfileError(label, "is nested too deeply to be a dependency file") from None


def _refuse_aliases(text: str, label: str, loader: Any) -> None:
    import yaml

    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, yaml.AliasEvent):
            raise LockfileError(label, "uses a YAML alias (*name), which no lockfile needs; refusing it",
                                event.start_mark.line + 1 if event.start_mark else None)


def table(value: Any) -> dict[str, Any]:
    """`value` if it is a mapping, else empty: lockfiles from other tools vary in what they omit."""
    return value if isinstance(value, dict) else {}


def strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
