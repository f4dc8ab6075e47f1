"""Generated CLI reference pages filled from the code they name (parse/cli_docs.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from context_cli.parse import parse_file
from context_cli.parse.cli_docs import Modules, argparse_command, click_command
from context_cli.parse.includes import Includes

FIXTURES = Path(__file__).parent / "fixtures" / "cli_docs"
BUILD = FIXTURES / "build"
TOWNCRIER = FIXTURES / "towncrier"


def _page(root: Path, rel: str) -> dict[str, str]:
    doc = parse_file(rel, (root / rel).read_bytes(), root=str(root))
    assert doc is not None
    return {b.title: b.text for b in doc.blocks}


def test_sphinx_click_page_gets_the_group_and_its_commands() -> None:
    """towncrier's group is in `_shell.py`; its commands come from sibling modules
    through `cli.add_command`, and a help text from a constant another module defines."""
    blocks = _page(TOWNCRIER, "docs/cli.rst")
    assert {"towncrier build", "towncrier check", "towncrier create"} <= set(blocks)
    build = blocks["towncrier build"]
    assert "towncrier build [OPTIONS]" in build
    assert "`--draft`" in build and "Render the news fragments to standard output" in build
    assert "`--config FILE_PATH`" in build and "Pass a custom config file" in build
    assert "`--version TEXT`" in build  # a value option: click shows its type
    assert "\b" not in blocks["towncrier create"]  # click's no-rewrap marks are not text


def test_mkdocs_click_block_becomes_headings_one_level_down() -> None:
    doc = parse_file("docs/cli.md", (TOWNCRIER / "docs/cli.md").read_bytes(), root=str(TOWNCRIER))
    assert doc is not None
    levels = {b.title: b.level for b in doc.blocks}
    assert levels["towncrier"] == 2 and levels["towncrier check"] == 3  # `:depth: 1`
    text = {b.title: b.text for b in doc.blocks}
    assert "`--compare-with BRANCH`" in text["towncrier check"]
    assert any("After." in b.text for b in doc.blocks)  # the page goes on after the block


def test_sphinx_argparse_cli_page_gets_the_parser() -> None:
    """build's real page: `main_parser` makes its parser through `functools.partial`,
    with argument groups and a mutually exclusive group inside one."""
    blocks = _page(BUILD, "docs/reference/cli.rst")
    ref = blocks["python -m build"]
    assert "python -m build [OPTIONS] srcdir" in ref
    assert "Global options" in ref and "Build options" in ref
    assert "`--outdir, -o PATH`" in ref and "output directory" in ref
    assert "`--verbose, -v`" in ref and "increase verbosity" in ref
    assert "Isolation Behavior" in blocks  # the page's own sections stay


def test_without_a_source_root_the_page_keeps_the_generic_text() -> None:
    doc = parse_file("docs/cli.rst", (TOWNCRIER / "docs/cli.rst").read_bytes())
    assert doc is not None
    assert not any("towncrier build" in b.title for b in doc.blocks)


def test_a_missing_module_or_command_is_none() -> None:
    modules = Modules(Includes(str(TOWNCRIER), "docs/cli.rst"))
    assert click_command(modules, "towncrier._shell", "nope") is None
    assert click_command(modules, "towncrier.absent", "cli") is None
    assert argparse_command(modules, "towncrier._shell", "cli", "x") is None  # no parser there


def test_click_forms_in_one_module(tmp_path: Path) -> None:
    (tmp_path / "tool").mkdir()
    (tmp_path / "tool" / "cli.py").write_text('''
import click
from click import option

verbose = click.option("-v", "--verbose", count=True, help="More output.")

@click.group()
@verbose
def main_group():
    """The tool.\\f internal notes"""

@main_group.command()
@click.argument("src", nargs=-1)
@option("--mode", type=click.Choice(["fast", "safe"]), default="safe", show_default=True, help="How.")
@click.option("--token", envvar="TOOL_TOKEN", required=True, help="Secret.")
@click.option("--debug", hidden=True)
def sync_cmd(src, mode, token):
    """Copy things."""
''')
    (tmp_path / "docs").mkdir()
    modules = Modules(Includes(str(tmp_path), "docs/cli.rst"))
    cmd = click_command(modules, "tool.cli", "main_group")
    assert cmd is not None and cmd.name == "main" and cmd.help == "The tool."
    assert [p.names for p in cmd.params] == [("-v", "--verbose")]
    (sync,) = cmd.commands
    assert sync.name == "sync" and sync.help == "Copy things."
    assert [p.names[0] for p in sync.params] == ["src", "--mode", "--token"]  # hidden left out
    assert sync.params[0].metavar == "SRC..."
    assert sync.params[1].metavar == "[fast|safe]" and sync.params[1].default == "safe"
    assert sync.params[2].required and "TOOL_TOKEN" in sync.params[2].help
    assert sync.usage("tool sync") == "tool sync [OPTIONS] SRC..."


def test_argparse_subcommands(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text('''
import argparse

def get_parser():
    p = argparse.ArgumentParser(prog="app", description="An app.")
    p.add_argument("--level", choices=["a", "b"], help="Level.")
    sub = p.add_subparsers(dest="cmd")
    run = sub.add_parser("run", help="Run it.")
    run.add_argument("target", help="What to run.")
    run.add_argument("--dry-run", action="store_true", help="Pretend.")
    run.add_argument("--secret", help=argparse.SUPPRESS)
    return p
''')
    ast.parse((tmp_path / "app.py").read_text())
    cmd = argparse_command(Modules(Includes(str(tmp_path), "index.rst")), "app", "get_parser", "ignored")
    assert cmd is not None and cmd.name == "app" and cmd.help == "An app."
    assert cmd.params[0].metavar == "{a,b}"
    (run,) = cmd.commands
    assert run.help == "Run it." and [p.names[0] for p in run.params] == ["target", "--dry-run"]
    assert run.params[1].metavar == ""
