"""The import graph of context_cli and of the registry packages: no cycles between modules, no
layer importing one above it, and the client never importing the registry server.

The pipeline is layered sources -> parse -> chunk -> package -> search -> surfaces; a module
may import its own layer and those below, never one above. Every import counts, also the
ones inside functions or under TYPE_CHECKING: hiding an import in a function hides the
dependency, it does not remove it.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
ROOT = CHECKOUT / "context_cli"
# The registry's packages sit beside context_cli: they may use it, never the other way round.
PACKAGES = [ROOT, CHECKOUT / "registry", CHECKOUT / "registry_server"]

# Lowest first. Top-level modules not named here (a new one) count as "orchestrate", as does
# the package itself (`context_cli/__init__.py`, where a public API would live).
LAYERS = [
    ("base", {"version", "versions", "errors", "environment", "home", "document", "atomic", "digest", "retry", "symbol"}),
    # A website's pages (llms-full.txt) are split while they are fetched, so sources use parse.
    ("parse", {"parse"}),
    ("sources", {"sources"}),
    ("chunk", {"chunk", "embed"}),
    ("package", {"package"}),
    ("store", {"store"}),
    ("search", {"search"}),
    ("orchestrate", {"context_cli", "build", "adding", "remote", "api"}),
    ("serve", {"mcp_server"}),
    ("surfaces", {"surfaces", "__main__"}),
]
RANK = {part: i for i, (_, parts) in enumerate(LAYERS) for part in parts}
ORCHESTRATE = next(i for i, (name, _) in enumerate(LAYERS) if name == "orchestrate")



def _modules() -> dict[str, Path]:
    found = {}
    for path in (p for root in PACKAGES for p in root.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """Modules of ours (context_cli, the registry's) that `module` imports anywhere in its file."""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        else:
            continue
        out.update(n for n in names if n in modules and n != module)
    return out


@functools.cache
def _graph() -> dict[str, set[str]]:
    """The import graph, read in a fresh interpreter: CPython 3.11's `ast` can be left in a
    broken state ("AST constructor recursion depth mismatch") by an earlier test's deep input."""
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_layers as t; "
            "print(json.dumps({m: sorted(v) for m, v in t._read_graph().items()}))")
    out = subprocess.run([sys.executable, "-c", code, str(Path(__file__).parent)], capture_output=True,
                         text=True, check=True, timeout=120).stdout
    return {m: set(v) for m, v in json.loads(out).items()}


def _read_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {m: _imports(m, p, modules) for m, p in modules.items()}


def _rank(module: str) -> int:
    parts = module.split(".")
    if parts[0] != "context_cli":
        return len(LAYERS)  # (the registry's packages: above every layer of the client)
    return RANK.get(parts[1] if len(parts) > 1 else parts[0], ORCHESTRATE)


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles():
    cycles = [sorted(c) for c in _cycles(_graph())]
    assert cycles == []


# The one way in from the client: the docs-source ladder reads the publisher's definitions and
# fetches what they name (registry/definitions.py, registry/fetch.py, neither importing the
# server or the build), so that `sync` and the registry's CI build a package from one recipe.
RECIPES = {"registry", "registry.definitions", "registry.fetch"}


def _recipe(module: str, target: str) -> bool:
    return module.startswith("context_cli.sources.docsources.") and target in RECIPES


def test_no_layer_imports_a_layer_above_it():
    upward = sorted(
        (m, t) for m, targets in _graph().items() for t in targets
        if _rank(t) > _rank(m) and not _recipe(m, t)
    )
    assert upward == []


def test_the_registry_packages_are_in_the_graph_and_the_client_never_imports_them():
    graph = _graph()
    assert "registry_server.app" in graph and "registry_server.pages" in graph["registry_server.app"]
    assert not [(m, t) for m in graph if m.startswith("context_cli") for t in graph[m]
                if not t.startswith("context_cli") and not _recipe(m, t)]
    assert not [(m, t) for m in RECIPES for t in graph[m] if t.startswith(("registry_server", "registry.build"))]


def test_package_never_imports_search():
    graph = _graph()
    assert not [(m, t) for m in graph if m.startswith("context_cli.package")
                for t in graph[m] if t.startswith("context_cli.search")]


def test_the_checker_sees_hidden_imports(tmp_path):
    """A function-level relative import is found (the way the package/search cycle hid)."""
    pkg = tmp_path / "context_cli" / "package"
    pkg.mkdir(parents=True)
    (pkg / "x.py").write_text("def f():\n    from ..search import bm25, fts\n")
    modules = {"context_cli": Path("i"), "context_cli.package.x": pkg / "x.py", "context_cli.search": Path("s"),
               "context_cli.search.bm25": Path("b")}
    assert _imports("context_cli.package.x", pkg / "x.py", modules) == {"context_cli.search", "context_cli.search.bm25"}
