"""`extract_api` for Python: an unpacked sdist or wheel read with `ast`, never imported.

Modules are found under `src/` or the root (packages with an `__init__`, top-level
modules), leaving out tests, examples, docs, benchmarks and vendored copies. A `.pyi` stub
wins over the `.py` beside it. Every module is summarised (pymodule.py), then each public
name is followed through its imports to where it is defined, so an entry is recorded once,
at its definition, with the public names it is re-exported as. Files that cannot be read
(Python 2, newer syntax, nesting too deep, too big) and cycles are skipped with a note; the
whole walk is bounded in files, bytes and time.
"""

from __future__ import annotations

import ast
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..symbol import Symbol
from .docstring import render
from .model import ApiReference
from .pymodule import Def, ModuleInfo, read_module

SKIP_DIRS = frozenset({"tests", "test", "testing", "examples", "example", "docs", "doc", "documentation",
                       "benchmarks", "bench", "scripts", "tools", "build", "dist", "_vendor", "vendor",
                       "vendored", "_vendored", "extern", "_extern", "third_party", "node_modules",
                       "site-packages", "__pycache__"})
SKIP_FILES = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "manage.py"})
MAX_FILE_BYTES = 5 * 1024 * 1024  # larger modules are generated tables, not API
MAX_FILES = 5000
MAX_TOTAL_BYTES = 200 * 1024 * 1024
MAX_SECONDS = 120.0
MAX_SYMBOLS = 100_000
MAX_HOPS = 32  # re-export chains longer than this are cycles in all but name


def extract_api(root: Path, *, registry: str, name: str, version: str,
                max_seconds: float = MAX_SECONDS) -> ApiReference:
    """Every public symbol of the release unpacked at `root`."""
    ref = ApiReference(registry=registry, name=name, version=version, language="python")
    deadline = time.monotonic() + max_seconds
    modules: dict[str, ModuleInfo] = {}
    total = 0
    for path, module, is_package in find_modules(Path(root), ref.notes):
        rel = path.relative_to(root).as_posix()
        if time.monotonic() > deadline:
            ref.notes.append(f"API: stopped after {max_seconds:.0f} s; {len(modules)} modules read")
            break
        if len(modules) >= MAX_FILES or total > MAX_TOTAL_BYTES:
            ref.notes.append(f"API: stopped at {len(modules)} modules ({total // 1_000_000} MB read)")
            break
        info = _read(path, rel, module, is_package, ref.notes)
        if info is not None:
            total += path.stat().st_size
            modules[module] = info
    ref.symbols = _Resolver(modules, ref.notes).symbols()
    return ref


def find_modules(root: Path, notes: list[str]) -> list[tuple[Path, str, bool]]:
    """(file, dotted module, is_package) for every importable module, stubs preferred: under
    `src/` or `lib/` (SQLAlchemy's layout) when either holds a package, else at the root."""
    for base in (root / "src", root / "lib", root):
        found = _modules_in(base) if base.is_dir() else []
        if any(is_package for _, _, is_package in found) or base == root:
            break
    if not found:
        notes.append("API: no importable Python modules found")
    return found


def _modules_in(base: Path) -> list[tuple[Path, str, bool]]:
    found: list[tuple[Path, str, bool]] = []
    for entry in sorted(base.iterdir()):
        if entry.is_symlink():  # (it may lead out of the tree: a repository's link is not its code)
            continue
        if entry.is_dir() and entry.name.isidentifier() and entry.name not in SKIP_DIRS and _init(entry):
            _walk_package(entry, entry.name, found)
        elif entry.is_file() and entry.suffix in (".py", ".pyi") and entry.stem.isidentifier() \
                and entry.name not in SKIP_FILES and not (entry.suffix == ".py" and entry.with_suffix(".pyi").exists()):
            found.append((entry, entry.stem, False))
    return found


def _init(folder: Path) -> Path | None:
    for name in ("__init__.pyi", "__init__.py"):
        if (folder / name).is_file() and not (folder / name).is_symlink():
            return folder / name
    return None


def _walk_package(folder: Path, dotted: str, found: list[tuple[Path, str, bool]]) -> None:
    init = _init(folder)
    if init is None or folder.is_symlink():
        return
    found.append((init, dotted, True))
    for entry in sorted(folder.iterdir()):
        if entry.is_dir():
            if entry.name.isidentifier() and entry.name not in SKIP_DIRS:
                _walk_package(entry, f"{dotted}.{entry.name}", found)
        elif entry.suffix in (".py", ".pyi") and entry.stem != "__init__" and entry.stem.isidentifier() \
                and not entry.is_symlink() and not (entry.suffix == ".py" and entry.with_suffix(".pyi").exists()):
            found.append((entry, f"{dotted}.{entry.stem}", False))


def _read(path: Path, rel: str, module: str, is_package: bool, notes: list[str]) -> ModuleInfo | None:
    """The module's summary, or None with a note when it cannot be read safely."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            notes.append(f"API: skipped {rel} ({size // 1_000_000} MB; larger than {MAX_FILE_BYTES // 1_000_000} MB)")
            return None
        tree = ast.parse(path.read_bytes(), filename=rel)
        return read_module(tree, module, rel, is_package=is_package)
    except SyntaxError as e:
        notes.append(f"API: skipped {rel} (not Python 3.{_minor()} syntax: {e.msg}, line {e.lineno})")
    except (RecursionError, MemoryError):
        notes.append(f"API: skipped {rel} (nested too deeply to read)")
    except (OSError, ValueError) as e:
        notes.append(f"API: skipped {rel} ({e})")
    return None


def _minor() -> int:
    import sys

    return sys.version_info.minor


@dataclass
class _Found:
    """A definition reached from public names."""

    module: ModuleInfo
    node: Def
    names: list[str] = field(default_factory=list)  # public qualified names, in order found


def _private(module: str) -> bool:
    return any(p.startswith("_") and not (p.startswith("__") and p.endswith("__")) for p in module.split("."))


class _Resolver:
    """Public names followed to their definitions across modules."""

    def __init__(self, modules: dict[str, ModuleInfo], notes: list[str]) -> None:
        self.modules = modules
        self.notes = notes
        self.exports_of: dict[str, list[str]] = {}
        self.cycles: set[str] = set()

    def exports(self, module: str, seen: frozenset[str] = frozenset()) -> list[str]:
        """The public names of a module: `__all__`, else what it defines or re-exports."""
        if module in self.exports_of:
            return self.exports_of[module]
        info = self.modules[module]
        if info.all is not None:
            names = list(dict.fromkeys(info.all))
        else:
            names = [n for n, d in info.defs.items() if not n.startswith("_") and not d.plain]
            names += [n for n, (src, attr) in info.imports.items()
                      if not n.startswith("_") and attr is not None and self._reexported(info, n, src, attr)]
            for star in info.stars:
                if star in self.modules and star not in seen:
                    names += self.exports(star, seen | {module})
            names = list(dict.fromkeys(names))
        self.exports_of[module] = names
        return names

    def _reexported(self, info: ModuleInfo, local: str, src: str, attr: str) -> bool:
        """Without `__all__`, an import is an export when it is `import x as x` (PEP 484) or a
        package pulls a name up from inside itself (`from .helpers import send_file`)."""
        return local == attr and src in self.modules and (info.is_package and src.startswith(info.name + "."))

    def resolve(self, module: str, name: str) -> tuple[ModuleInfo, Def] | None:
        """Follow `module.name` through imports to its definition (None: outside the release or a cycle)."""
        seen: set[tuple[str, str]] = set()
        while (module, name) not in seen and len(seen) < MAX_HOPS:
            seen.add((module, name))
            info = self.modules.get(module)
            if info is None:  # outside the release (or a submodule, which has its own entry)
                return None
            if name in info.defs:
                return info, info.defs[name]
            if name in info.imports:
                here = module
                module, attr = info.imports[name]
                if attr is None or module == here or f"{module}.{attr}" in self.modules:
                    return None  # a submodule (`from pkg import sub`): an entry of its own, or not read
                name = attr
                continue
            star = next((s for s in info.stars if s in self.modules and name in self.exports(s)), None)
            if star is None:
                return None
            module = star
        self.cycles.add(f"{module}.{name}")
        return None

    def symbols(self) -> list[Symbol]:
        found: dict[tuple[str, str], _Found] = {}
        out: list[Symbol] = []
        public = sorted((m for m in self.modules if not _private(m)), key=lambda m: (m.count("."), m))
        for module in public:
            info = self.modules[module]
            out.append(Symbol(module, "module", "", render(info.doc).markdown if info.doc else "",
                              source=info.source, line=1))
            for name in self.exports(module):
                hit = self.resolve(module, name)
                if hit is None:
                    continue
                where, node = hit
                entry = found.setdefault((where.name, node.name), _Found(where, node))
                entry.names.append(f"{module}.{name}")
        for cycle in sorted(self.cycles)[:20]:
            self.notes.append(f"API: skipped {cycle} (its re-exports form a cycle)")
        for entry in found.values():
            out.extend(self._entries(entry))
            if len(out) > MAX_SYMBOLS:
                self.notes.append(f"API: stopped at {MAX_SYMBOLS} symbols")
                break
        return out[:MAX_SYMBOLS]

    def _entries(self, entry: _Found) -> list[Symbol]:
        """The symbol for a definition and, for a class, its members, named where it is defined
        (when that module is public) with the other public names as aliases."""
        home = f"{entry.module.name}.{entry.node.name}"
        names = list(dict.fromkeys(entry.names))
        if home not in names and not _private(entry.module.name) and _defines_publicly(entry.module, entry.node.name):
            names.insert(0, home)
        names.sort(key=lambda n: (n != home, n.count("."), n))
        return list(_symbols(entry.node, names[0], tuple(names[1:]), entry.module.source))


def _defines_publicly(info: ModuleInfo, name: str) -> bool:
    return not name.startswith("_") and (info.all is None or name in info.all)


def _symbols(node: Def, name: str, aliases: tuple[str, ...], source: str) -> Iterator[Symbol]:
    rendered = render(node.doc) if node.doc else None
    deprecated = node.deprecated if node.deprecated is not None else (rendered.deprecated if rendered else None)
    yield Symbol(name=name, kind=node.kind, signature=node.signature, doc=rendered.markdown if rendered else "",
                 deprecated=deprecated, since=rendered.since if rendered else None, source=source,
                 line=node.line, aliases=aliases)
    for member in node.members.values():
        tail = member.name.rsplit(".", 1)[-1]
        yield from _symbols(member, f"{name}.{tail}", tuple(f"{a}.{tail}" for a in aliases), source)
