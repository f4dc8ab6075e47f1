"""`context serve`: the MCP server, over stdio (default) or Streamable HTTP (`--http PORT`).

The MCP SDK is imported only inside the command, so `context --help` stays fast.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..environment import MCP_TOKEN
from .project import project_options, project_scope


@click.command("serve")
@click.option("--http", "http_port", type=click.IntRange(0, 65535), metavar="PORT",
              help="Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (0 picks a free port).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on with --http.")
@click.option("--libs", "libs", multiple=True, metavar="SPEC...",
              help="Pin the session to these packages (name or name@version; several after one --libs, "
                   "comma-separated or repeated) and hide the registry tools.")
@click.option("--token", envvar=MCP_TOKEN.name, metavar="TOKEN",
              help="With --http: every request must send 'Authorization: Bearer TOKEN' (env CONTEXT_MCP_TOKEN).")
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="With --http: another Host name clients may use (the bound address, and localhost names "
                   "on loopback, are always allowed); repeatable.")
@click.option("--header-timeout", default=10.0, show_default=True, type=click.FloatRange(0.1, 600),
              help="With --http: seconds a client has to send a request head (and, plus its bytes at "
                   "16 KiB/s, a body); one that leaves its answers unread 3 times as long is dropped.")
@click.option("--max-connections", default=256, show_default=True, type=click.IntRange(8, 1 << 16),
              help="With --http: connections held at once (fewer if the descriptor limit is lower); "
                   "more are answered 503.")
@click.option("--max-sessions", default=100, show_default=True, type=click.IntRange(1, 1 << 20),
              help="With --http: sessions kept; opening another closes the one idle longest.")
@click.option("--session-idle", default=1800.0, show_default=True, type=click.FloatRange(1, 7 * 86400),
              help="With --http: seconds of no request after which a session ends.")
@project_options
@click.argument("more_libs", nargs=-1, metavar="", required=False)
def serve(http_port: int | None, host: str, libs: tuple[str, ...], token: str | None,
          allow_hosts: tuple[str, ...], header_timeout: float, max_connections: int, max_sessions: int,
          session_idle: float, project: Path | None, no_project: bool, more_libs: tuple[str, ...]) -> None:
    """Run the MCP server that gives agents get_docs, search_packages and download_package.

    \b
    context serve                       stdio, for one agent
    context serve --http 8765           http://127.0.0.1:8765/mcp, many sessions
    context serve --libs react next@15  only these packages, no registry tools

    Over HTTP, requests whose Host or Origin is not allowed are refused (DNS rebinding);
    binding beyond loopback prints a warning: set --token. Slow, idle and flooding clients
    are held to the limits below (docs/security.md).

    Inside a project synced with `context sync`, the session sees exactly the packages its
    .context/docs.lock lists (a bare library name means the project's version), plus --libs.
    SIGTERM or Ctrl-C stops the server gracefully (exit 0).
    """
    if more_libs and not libs:
        raise click.UsageError(f"unexpected argument {more_libs[0]!r} (did you mean --libs {more_libs[0]}?)")
    specs = [s.strip() for item in (*libs, *more_libs) for s in item.split(",") if s.strip()]

    from ..mcp_server.server import run_stdio, say
    from ..mcp_server.tools import Catalog
    from ..store.store import Store

    store = Store()
    in_project = project_scope(store, project, no_project)
    catalog = Catalog(store, specs=specs, scope=in_project.specs)
    catalog.check_specs()
    if in_project.lock is not None:
        say(f"context MCP server: {in_project.describe()}")
    visible = catalog.choices()
    scope = f" (limited by --libs to {len(visible)})" if catalog.locked else ""
    count = f"{len(visible)} package{'' if len(visible) == 1 else 's'}"
    say(f"context MCP server: {count}{scope}"
        + (f": {', '.join(visible[:10])}{' …' if len(visible) > 10 else ''}" if visible
           else "; none installed yet (agents can use search_packages, or run `context add`)"))
    if http_port is None:
        run_stdio(catalog)
    else:
        from ..mcp_server.http import HttpLimits, run_http

        limits = HttpLimits(header_timeout=header_timeout, max_connections=max_connections,
                            max_sessions=max_sessions, session_idle=session_idle)
        run_http(catalog, host, http_port, ready=lambda url: say(f"Listening on {url}"),
                 token=token or None, allowed_hosts=allow_hosts, limits=limits)
