"""The `context` console script.

A plain `context query LIBRARY TOPIC` is answered without click (`plain_query`); every other
command line goes to the click group in `cli.py`. Both run inside `process.run`.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Console entry point."""
    from . import plain_query
    from .process import run

    args = sys.argv[1:]
    if plain_query.is_plain(args):
        run(lambda: plain_query.run(args[1], args[2]))
    else:
        from .cli import main as click_main

        click_main()
