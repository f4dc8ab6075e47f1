"""`context install` and `context update`: thin commands over `context_cli.remote.client`.

A progress bar is drawn on a terminal (stderr) and nothing is drawn when piped; the
result is one line per package on stdout. Errors are `ContextError`s, which the CLI
group turns into one line and a non-zero exit.
"""

from __future__ import annotations

import click

from ..errors import RegistryError
from ..store.store import Installed, Spec
from .progress import progress_bar
from .render import echo


@click.command("install")
@click.argument("spec", metavar="REGISTRY/NAME[@VERSION]")
@click.option("--server", metavar="NAME", help="A server from config.json (default: the default one).")
def install(spec: str, server: str | None) -> None:
    """Download a package from a registry server and install it.

    Without @VERSION the newest version on the server is installed.

    \b
    Examples:
      context install npm/zod
      context install npm/@trpc/server@10.0.0 --server internal
    """
    from ..remote.client import download_and_install

    s = Spec.parse(spec)
    if not s.registry:
        raise click.ClickException(f"say which registry {s.name!r} comes from: `context install "
                                   f"pip/{s.name}` (PyPI) or `context install npm/{s.name}` (npm)")
    label = f"{s.registry}/{s.name}" + (f"@{s.version}" if s.version else "")
    with progress_bar() as bars:
        installed = download_and_install(s.registry, s.name, s.version, server=server,
                                         progress=bars.download(label) if bars else None)
    echo(f"Installed {describe(installed)}")


@click.command("update")
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--server", metavar="NAME", help="A server from config.json (default: the default one).")
def update(names: tuple[str, ...], server: str | None) -> None:
    """Install newer versions of installed packages (all of them, or the NAMEs given).

    Older versions stay installed; remove them with `context remove NAME@VERSION`.
    """
    from ..remote.client import update_all

    failures: list[str] = []

    def report(old: Installed, error: RegistryError) -> None:
        failures.append(f"{old.id.registry}/{old.id.name}: {error}")

    with progress_bar() as bars:
        pairs = update_all(names or None, server=server, on_error=report,
                           progress_for=(lambda pid: bars.download(pid.qualified)) if bars else None)
    for old, new in pairs:
        echo(f"Updated {old.id.registry}/{old.id.name} {old.id.version} -> {new.id.version}")
    if not pairs and not failures:
        click.echo("Everything is up to date.")
    for line in failures:
        echo(f"Error: {line}", err=True)
    if failures:
        raise SystemExit(1)


def describe(inst: Installed) -> str:
    size = inst.path.stat().st_size
    return f"{inst.id.qualified} ({size / 1_000_000:.1f} MB) at {inst.path}"
