"""Every `CONTEXT_*` variable is read in one module (`context_cli/environment.py`) and listed in
docs/configuration.md with its default."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from context_cli import environment

CHECKOUT = Path(__file__).resolve().parent.parent
SOURCES = [p for root in ("context_cli", "registry", "registry_server") for p in (CHECKOUT / root).rglob("*.py")]
NAME = re.compile(r"CONTEXT_[A-Z0-9_]*[A-Z0-9]")


def test_only_the_environment_module_names_a_variable() -> None:
    """A string that is a variable's name (what `os.environ` or click's `envvar` would be given)
    appears in no other module: they read `environment.X.value()` or `environment.X.name`."""
    found = []
    for path in SOURCES:
        if path.name == "environment.py" and path.parent.name == "context_cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and NAME.fullmatch(node.value):
                found.append(f"{path.relative_to(CHECKOUT)}:{node.lineno} {node.value}")
    assert found == []


def test_every_variable_the_code_mentions_is_one_of_them() -> None:
    known = {v.name for v in environment.VARIABLES}
    mentioned = {m for path in SOURCES for m in NAME.findall(path.read_text(encoding="utf-8"))}
    assert mentioned - known == set()
    assert len(known) == len(environment.VARIABLES)


def test_every_variable_is_in_the_docs_with_its_default() -> None:
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(CONTEXT_[A-Z0-9_]+)` \| ([^|]+) \|",
                                                          (CHECKOUT / "docs" / "configuration.md").read_text("utf-8"),
                                                          re.MULTILINE)}
    assert {v.name: v.default for v in environment.VARIABLES} == {k: v.strip() for k, v in rows.items()}


def test_a_variable_is_read_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(environment.HOME.name, raising=False)
    assert environment.HOME.value() is None
    monkeypatch.setenv(environment.HOME.name, "")
    assert environment.HOME.value() is None  # (empty: unset)
    monkeypatch.setenv(environment.HOME.name, "/tmp/elsewhere")
    assert environment.HOME.value() == "/tmp/elsewhere"
