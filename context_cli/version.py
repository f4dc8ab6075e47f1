"""The package version, in a module of its own: every layer may import it without pulling in
the package's lazy public API (context_cli/__init__.py), which would close an import cycle."""

__version__ = "0.1.0"
