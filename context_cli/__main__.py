"""`python -m context_cli` runs the command line."""

from .surfaces.entry import main

main()
