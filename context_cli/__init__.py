"""context: version-specific library docs for coding agents, searched locally.

Kept near-empty on purpose: the CLI's cold start imports only what a command needs.
"""

__version__ = "0.1.0"
