"""`context server add/list/remove`: the registry servers in `$CONTEXT_HOME/config.json`."""

from __future__ import annotations

import json

import click

from ..environment import REGISTRY_URL
from ..remote.config import URL_ENV, add_server, load_servers, remove_server


@click.group("server")
def server() -> None:
    """Manage the registry servers that install, update, sync and the MCP tools use.

    They live in $CONTEXT_HOME/config.json, in the format Neuledge Context's client reads,
    so both tools see the same servers. CONTEXT_REGISTRY_URL overrides the default
    server's URL for one run.
    """


@server.command("add")
@click.argument("name")
@click.argument("url")
@click.option("--default", "make_default", is_flag=True, help="Use this server unless --server says otherwise.")
def add(name: str, url: str, make_default: bool) -> None:
    """Add (or re-point) the server NAME at URL, e.g. `context server add team https://docs.example.com`."""
    added = add_server(name, url, default=make_default)
    click.echo(f"Saved server {added.name}: {added.url}" + (" (default)" if added.default else ""))


@server.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_cmd(as_json: bool) -> None:
    """List the configured servers; the default one is marked."""
    servers = load_servers()
    override = (REGISTRY_URL.value() or "").strip()
    if as_json:
        click.echo(json.dumps({"servers": [s.as_json() for s in servers],
                               "override": override or None}, indent=2))
        return
    for s in servers:
        click.echo(f"{s.name}\t{s.url}" + ("\t(default)" if s.default else ""))
    if override:
        click.echo(f"{URL_ENV}={override} replaces the default server's URL in this shell.")


@server.command("remove")
@click.argument("name")
def remove(name: str) -> None:
    """Forget the server NAME (when it was the default, the first one left takes over)."""
    gone = remove_server(name)
    left = load_servers()
    default = next(s for s in left if s.default)
    click.echo(f"Removed server {gone.name}; the default is now {default.name} ({default.url})")
