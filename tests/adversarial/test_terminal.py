"""Terminal control sequences in strangers' text (issue 32, item 10): package content, titles
and descriptions, and lockfile names, printed by the real CLI. Nothing a terminal would obey
(ESC, OSC 52 clipboard writes, screen clears, C1 controls) reaches its output; JSON output
keeps the text and escapes it, as JSON does.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from context_cli.store.store import Store

from . import hostile_packages as hp
from . import hostile_projects as hpj
from .runner import Outcome, assert_ok, run

CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
ESC = hpj.ESCAPES


def assert_no_controls(o: Outcome) -> None:
    for name, text in (("stdout", o.stdout), ("stderr", o.stderr)):
        found = sorted(set(CONTROLS.findall(text)))
        assert not found, f"{name} carries controls {found!r}: {o}"


@pytest.fixture
def escaping(home: Path, tmp_path: Path) -> Path:
    """An installed package whose titles, content and description carry escapes."""
    path = hp.base_package(tmp_path / "esc.db", name="escapes", sections=[
        ("esc.md", f"Title{ESC}", f"Streaming{ESC}", f"escapes streaming cancellation {ESC} words")])
    hp.set_meta(path, description=f"described{ESC}", source_url=f"https://example.com/{ESC}")
    Store(home / "packages").install(path)
    return home


@pytest.mark.parametrize("args", [
    ("search", "streaming cancellation", "--lib", "escapes"),
    ("query", "escapes", "streaming"),
    ("info", "escapes"),
    ("list",),
], ids=lambda a: a[0])
def test_package_text_is_shown_without_controls(args: tuple[str, ...], escaping: Path) -> None:
    o = run(list(args), escaping, timeout=30)
    assert_ok(o)
    assert_no_controls(o)


def test_json_output_keeps_the_text(escaping: Path) -> None:
    o = run(["search", "streaming cancellation", "--lib", "escapes", "--format", "json"], escaping, timeout=30)
    assert_ok(o)
    assert "\x1b" not in o.stdout  # JSON escapes it...
    content = o.json()["results"][0]["content"]  # type: ignore[index]
    assert "\x1b]52" in content and "\x9b" in content  # ...and keeps it


def test_lockfile_names_are_shown_without_controls(home: Path, tmp_path: Path) -> None:
    root = tmp_path / "project"
    root.mkdir()
    hpj.escapes_in_lockfile(root)
    url = "http://127.0.0.1:9"
    o = run(["sync", str(root), "--dry-run"], home, timeout=30,
            env={"CONTEXT_REGISTRY_URL": url, "CONTEXT_NPM_REGISTRY_URL": url})
    assert o.rc in (0, 1), o
    assert "evil" in o.stdout
    assert_no_controls(o)


def test_error_lines_are_shown_without_controls(home: Path) -> None:
    o = run(["info", f"nothing{ESC}"], home, timeout=20)
    assert o.rc != 0
    assert_no_controls(o)
