"""The `context` command line: a thin layer over library functions.

Each command lives in a small module that is imported only when that command runs, so
`context --help` and `context list` never load parsers, numpy or the MCP SDK.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from ..environment import DEBUG
from ..version import __version__

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
ERROR_CHARS = 400  # an error is one line of at most this much (names and specs are clipped)
# Commands that only read packages and print: once their output is out, the process ends
# without the interpreter's teardown (see `_quick_exit`).
QUICK_EXIT = frozenset({"query", "search", "api"})


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
    """Console entry point: errors are one line and a non-zero exit, never a traceback."""
    import os

    # Query-time matrix products are tiny; BLAS threads only add wake-up latency (measured:
    # 2000x256 cosine 12 ms with 2 threads on a busy 2-core machine, 0.15 ms with one).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if sys.argv[1:2] == ["query"]:
        # One question, then `_quick_exit`: the few reference cycles it makes die with the
        # process, so the collector's passes over every object imported are saved (2 % of a
        # cold query's instructions). `search` may be a batch of thousands and collects.
        import gc

        gc.disable()
    _exit_cleanly_on_sigterm()
    try:
        cli.main(standalone_mode=True)
    except SystemExit as e:
        if sys.argv[1:2] and sys.argv[1] in QUICK_EXIT:
            _quick_exit(e.code)
        raise
    except Exception as e:  # noqa: BLE001 - a bug still gets one line, unless debugging
        if DEBUG.value():
            raise
        from ..errors import clip
        from .render import echo

        echo(f"Error: internal error: {type(e).__name__}: {clip(str(e), ERROR_CHARS)} "
             "(set CONTEXT_DEBUG=1 for details)", err=True)
        sys.exit(2)


def _quick_exit(code: object) -> None:
    """End the process now, as a normal exit would but without freeing every module's objects
    one by one: that teardown costs a cold query 25-50 ms once numpy is loaded (measured on a
    2-core machine), for nothing. atexit hooks run and output is flushed first. A process
    with a non-daemon thread still running, an exit status that is not a number, or a
    profiler or tracer attached (cProfile, coverage, a debugger: they report at exit) exits
    normally (returns here)."""
    import atexit
    import os
    import threading

    if not (code is None or isinstance(code, int)) or sys.getprofile() or sys.gettrace():
        return
    if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    atexit._run_exitfuncs()  # (they run once: a normal exit after this finds none left)
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: started with that stream closed
                stream.flush()
    except (OSError, ValueError):  # a closed or broken stream: the normal exit reports it as it always has
        return
    os._exit(code or 0)


def _exit_cleanly_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C: `finally` blocks remove temp files, nothing half-installed stays.

    Python's default for SIGTERM ends the process on the spot, leaving a download or build's
    temp file behind.
    """
    import signal

    from ..atomic import TERMINATING

    def stop(signum: int, frame: object) -> None:
        TERMINATING.set()  # in case the exit below is swallowed by a C callback: no commit after this
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


if __name__ == "__main__":
    main()
