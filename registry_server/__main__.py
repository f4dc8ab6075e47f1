"""`python -m registry_server` runs the server (same options as `context-registry-server`)."""

from .cli import main

main()
