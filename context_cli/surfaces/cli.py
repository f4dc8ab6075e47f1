"""The `context` command line: a thin layer over library functions.

Each command lives in a small module that is imported only when that command runs, so
`context --help` and `context list` never load parsers, numpy or the MCP SDK.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from ..version import __version__
from .process import ERROR_CHARS, run

# command name -> "module:function" (modules under context_cli.surfaces); a new command is one
# line here and one in SHORT_HELP.
COMMANDS = {
    "add": "cmd_add:add",
    "list": "cmd_manage:list_cmd",
    "info": "cmd_manage:info",
    "remove": "cmd_manage:remove",
    "query": "cmd_search:query",
    "search": "cmd_search:search",
    "install": "cmd_remote:install",
    "update": "cmd_remote:update",
    "serve": "cmd_serve:serve",
    "auth": "cmd_auth:auth",
    "server": "cmd_server:server",
    "sync": "cmd_sync:sync_cmd",
    "skill": "cmd_skill:skill",
    "doctor": "cmd_doctor:doctor",
    "api": "cmd_api:api",
    "changes": "cmd_api:changes",
}

SHORT_HELP = {
    "add": "Build a package from docs (folder, git, URL, OpenAPI, pypi:/npm:) or install a .db.",
    "list": "List installed packages.",
    "info": "Show a package's details.",
    "remove": "Remove an installed package.",
    "query": "Search one library (Neuledge Context compatible).",
    "search": "Search installed packages and print a context pack.",
    "install": "Download a package from a registry server.",
    "update": "Install newer versions available on the registry server.",
    "serve": "Run the MCP server (stdio, or Streamable HTTP with --http).",
    "auth": "Manage cookies and headers for private docs sites.",
    "server": "Manage the registry servers (config.json): add, list, remove.",
    "sync": "Get docs for exactly the versions in the project's lockfiles.",
    "skill": "Write an agent's skill or rules file: check installed docs first, get_api, ask before adding.",
    "doctor": "Check packages, models, servers, project scope and temp files; print fixes.",
    "api": "Show a symbol's signature, docs and deprecation, read from the released code.",
    "changes": "What changed in a library's API between two versions, with the release notes.",
}


# What Ctrl-C leaves behind, per command (every install is atomic: a package is whole or absent).
INTERRUPTED = {
    "add": "nothing was installed",
    "install": "nothing was installed",
    "update": "packages updated before this stay installed; nothing half-written was kept",
    "sync": "packages finished before this stay installed; docs.lock was not changed",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = COMMANDS.get(name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        command: click.Command = getattr(importlib.import_module(f"{__package__}.{module_name}"), attr)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        from ..errors import ContextError, clip
        from .render import terminal_safe

        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo(f"Interrupted: {INTERRUPTED.get(ctx.invoked_subcommand or '', 'stopped')}.", err=True)
            raise SystemExit(130) from None
        except ContextError as e:
            raise click.ClickException(terminal_safe(clip(str(e), ERROR_CHARS))) from None
        except click.UsageError as e:  # it quotes the user's arguments: shown safely, usage kept
            raise click.UsageError(terminal_safe(e.format_message()), e.ctx) from None
        except click.ClickException as e:  # a hostile name or spec must not flood the terminal
            raise click.ClickException(terminal_safe(clip(e.format_message(), ERROR_CHARS))) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, SHORT_HELP.get(name, "")) for name in COMMANDS])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="context")
def cli() -> None:
    """Version-specific library docs for coding agents, searched locally.

    Build or install documentation packages, then search them from the command line
    or serve them to an agent over MCP.
    """


def main() -> None:
    """The command line through click (`entry.main` sends every command here but a plain
    `query`); also the console script of an install made before `entry.py` existed."""
    run(lambda: cli.main(standalone_mode=True))


if __name__ == "__main__":
    main()
