"""context: version-specific library docs for coding agents, searched locally.

    import context_cli as cx
    pkg = cx.build("docs/", "mylib.db", name="mylib", version="1.2.0")
    answer = cx.search("how do I stop a stream?", [pkg], budget=1500)

The public names (docs/python.md) load on first use (PEP 562), so importing the package, and
the CLI's cold start, pull in nothing heavy. `build` and `search` are also the names of a
module and a subpackage; as attributes of this package they always mean the functions
(reach the modules with `from context_cli.search import engine`).
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from .version import __version__

# public name -> the module that defines it
_EXPORTS = {
    "build": "context_cli.api",
    "open": "context_cli.api",
    "search": "context_cli.api",
    "Store": "context_cli.api",
    "Installed": "context_cli.store.store",
    "Answer": "context_cli.search.answer",
    "Hit": "context_cli.search.answer",
    "ContextError": "context_cli.errors",
}
__all__ = ["Answer", "ContextError", "Hit", "Installed", "Store", "__version__", "build", "open", "search"]

if TYPE_CHECKING:
    from .api import Store as Store
    from .api import build as build
    from .api import open as open  # noqa: A004
    from .api import search as search
    from .errors import ContextError as ContextError
    from .search.answer import Answer as Answer
    from .search.answer import Hit as Hit
    from .store.store import Installed as Installed


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    types.ModuleType.__setattr__(sys.modules[__name__], name, value)
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(types.ModuleType):
    """Keeps `cx.build` and `cx.search` the functions: importing the `build` module or the
    `search` subpackage would otherwise bind that module over the public name."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
