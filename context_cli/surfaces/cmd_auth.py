"""`context auth add/list/remove`: cookies and headers for private documentation sites."""

from __future__ import annotations

import json

import click

from ..sources.auth import AuthStore, mask


@click.group("auth")
def auth() -> None:
    """Manage cookies and headers sent to private docs sites.

    Credentials for a domain are sent to that host and its direct subdomains only, never
    across a redirect to another domain, and never stored in a package. They live in
    $CONTEXT_HOME/auth.json (mode 0600).
    """


@auth.command("add")
@click.argument("domain")
@click.option("--cookies", help='Cookies as copied from a browser: "name=value; other=value".')
@click.option("--header", "headers", multiple=True, help='A header "Name: value" (repeatable).')
def add(domain: str, cookies: str | None, headers: tuple[str, ...]) -> None:
    """Store cookies and/or headers for DOMAIN (e.g. docs.example.com)."""
    store = AuthStore.load()
    host = store.add(domain, cookies=cookies, headers=headers)
    store.save()
    entry = store.entries[host]
    click.echo(f"Saved credentials for {host}: {len(entry.cookies)} cookie(s), {len(entry.headers)} header(s)")


@auth.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (values masked).")
def list_cmd(as_json: bool) -> None:
    """List domains with stored credentials (values masked)."""
    store = AuthStore.load()
    rows = {d: {"headers": {k: mask(v) for k, v in c.headers.items()},
                "cookies": {k: mask(v) for k, v in c.cookies.items()}}
            for d, c in sorted(store.entries.items())}
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        click.echo("No credentials stored. Add some with: context auth add DOMAIN --cookies 'a=b'")
        return
    for domain, entry in rows.items():
        click.echo(domain)
        for k, v in entry["headers"].items():
            click.echo(f"  header {k}: {v}")
        for k, v in entry["cookies"].items():
            click.echo(f"  cookie {k}={v}")


@auth.command("remove")
@click.argument("domain")
def remove(domain: str) -> None:
    """Forget the credentials stored for DOMAIN."""
    store = AuthStore.load()
    if not store.remove(domain):
        raise click.ClickException(f"no credentials stored for {domain}; see `context auth list`")
    store.save()
    click.echo(f"Removed credentials for {domain}")
