"""`context doctor`: a health check with the command that fixes each problem."""

from __future__ import annotations

import click

from .render import echo


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
@click.option("--timeout", type=click.FloatRange(min=0.1, max=60), default=3.0, show_default=True,
              help="Seconds to wait for each registry server.")
def doctor(as_json: bool, timeout: float) -> None:
    """Check installed packages, their embedding models, registry servers, the project scope,
    leftover temp files and the browser for JavaScript pages. Exits 1 when something is broken."""
    import json

    from ..doctor import FAIL, WARN, diagnose

    report = diagnose(ping_seconds=timeout)
    if as_json:
        click.echo(json.dumps(report.as_json(), indent=2))
    else:
        for c in report.checks:
            mark = {FAIL: "FAIL", WARN: "warn"}.get(c.status, "ok  ")
            echo(f"{mark} {c.check}: {c.detail}")
            if c.fix and c.status != "ok":
                echo(f"     fix: {c.fix}")
        broken = sum(c.status == FAIL for c in report.checks)
        warned = sum(c.status == WARN for c in report.checks)
        tail = f" ({warned} warning{'s' if warned != 1 else ''})" if warned else ""
        echo((f"{broken} problem{'s' if broken != 1 else ''} to fix" if broken else "Nothing broken") + tail + ".")
    if not report.ok:
        raise SystemExit(1)
