"""`python -m context_cli` runs the command line."""

from .surfaces.cli import main

main()
