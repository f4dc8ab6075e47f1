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
import gc
import os
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..symbol import Symbol
from .docstring import render
from .model import ApiReference
from .outline import outline
from .pymodule import Def, ModuleInfo, read_module

SKIP_DIRS = frozenset({"tests", "test", "testing", "examples", "example", "docs", "doc", "documentation",
                       "benchmarks", "bench", "scripts", "tools", "build", "dist", "_vendor", "vendor",
                       "vendored", "_vendored", "extern", "_extern", "third_party", "node_modules",
                       "site-packages", "__pycache__"})
SKIP_FILES = frozenset({"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "manage.py"})
TEST_MODULES = frozenset({"test", "tests", "conftest"})
TEST_DIRS = frozenset({"test", "tests", "testing"})  # a test suite, unless a package holds one of API (`_api_package`)
RUN_BY_THE_FRAMEWORK = ("conf.locale", "management.commands")  # dotted tails of packages that are data or commands, not API
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
    prefix = len(str(root).rstrip("/")) + 1
    with _collector_paused():
        for path, module, is_package in find_modules(Path(root), ref.notes):
            if time.monotonic() > deadline:
                ref.notes.append(f"API: stopped after {max_seconds:.0f} s; {len(modules)} modules read")
                break
            if len(modules) >= MAX_FILES or total > MAX_TOTAL_BYTES:
                ref.notes.append(f"API: stopped at {len(modules)} modules ({total // 1_000_000} MB read)")
                break
            read = _read(path, Path(str(path)[prefix:]).as_posix(), module, is_package, ref.notes)
            if read is not None:
                modules[module], size = read
                total += size
    ref.symbols = _Resolver(modules, ref.notes).symbols()
    return ref


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Syntax trees hold no reference cycles, so counting frees them; the cyclic collector's
    passes over their nodes were a tenth of reading a big release (Django: 1.31 -> 1.16 s)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def find_modules(root: Path, notes: list[str]) -> list[tuple[Path, str, bool]]:
    """(file, dotted module, is_package) for every importable module, stubs preferred: under
    `src/` or `lib/` (SQLAlchemy's layout) when either holds a package, else at the root."""
    for base in (root / "src", root / "lib", root):
        left: list[str] = []
        found = _modules_in(base, left) if base.is_dir() else []
        if any(is_package for _, _, is_package in found) or base == root:
            break
    if not found:
        notes.append("API: no importable Python modules found")
    if left:
        notes.append(f"API: {len(left)} package{'s' * (len(left) != 1)} of translations, migrations or management "
                     f"commands not read ({', '.join(left[:3])}{', ...' if len(left) > 3 else ''})")
    return found


def _modules_in(base: Path, left: list[str]) -> list[tuple[Path, str, bool]]:
    found: list[tuple[Path, str, bool]] = []
    _walk(base, "", found, left)
    return found


def _walk(folder: Path, dotted: str, found: list[tuple[Path, str, bool]], left: list[str]) -> None:
    """The modules of `folder` (a package named `dotted`, or the top level when ""): one
    directory listing each, no link followed (it may lead out of the tree). Packages the
    framework runs rather than its users import (`_run_by_the_framework`) go to `left`."""
    try:
        entries = {e.name: e for e in os.scandir(folder) if not e.is_symlink()}
    except OSError:
        return
    init = next((n for n in ("__init__.pyi", "__init__.py") if n in entries and entries[n].is_file()), None)
    if dotted:
        if init is None:
            return
        if _run_by_the_framework(dotted, entries):
            left.append(dotted)
            return
        found.append((folder / init, dotted, True))
    for name in sorted(entries):
        entry, stem, suffix = entries[name], *os.path.splitext(name)
        if entry.is_dir():
            if name.isidentifier() and (name not in SKIP_DIRS or (dotted and name in TEST_DIRS
                                                                  and _api_package(folder / name))):
                _walk(folder / name, f"{dotted}.{name}" if dotted else name, found, left)
        elif suffix in (".py", ".pyi") and stem != "__init__" and stem.isidentifier() and entry.is_file() \
                and not (suffix == ".py" and f"{stem}.pyi" in entries) and (dotted or name not in SKIP_FILES) \
                and not _is_test_module(stem):
            found.append((folder / name, f"{dotted}.{stem}" if dotted else stem, False))


def _run_by_the_framework(dotted: str, entries: Iterable[str]) -> bool:
    """Django's `conf/locale` (per-language format constants), an app's `management/commands`
    (run by `manage.py NAME`) and `migrations` of numbered modules (`0001_initial.py`, run by
    `migrate`): 215 of the 853 modules Django's API read had, none of them imported by its users."""
    if dotted.endswith(".migrations"):
        return any(name[:1].isdigit() for name in entries)
    return any(dotted == tail or dotted.endswith("." + tail) for tail in RUN_BY_THE_FRAMEWORK)


def _api_package(folder: Path) -> bool:
    """Is this `test`/`tests`/`testing` folder inside a package a subpackage of its API
    (`django.test`, `numpy.testing`: helpers for the user's own tests) rather than the
    project's test suite? A package (`__init__.py[i]` and a module) with no test module (`test_x.py`,
    `x_test.py`, `tests.py`, `conftest.py`) anywhere below it, but in its own test folders
    (numpy.testing's `tests/`); a tree of over MAX_FILES files is taken for a test suite."""
    try:
        top = {os.path.splitext(e.name) for e in os.scandir(folder) if not e.is_symlink()}
        if not top & {("__init__", ".py"), ("__init__", ".pyi")} or not any(
                suffix in (".py", ".pyi") and stem != "__init__" for stem, suffix in top):
            return False
        seen = 0
        for _, dirs, files in os.walk(folder, onerror=_raise):  # (symlinked folders are not followed)
            dirs[:] = [d for d in dirs if d not in TEST_DIRS]
            seen += len(files)
            if seen > MAX_FILES or any(_is_test_module(stem) for stem, suffix in map(os.path.splitext, files)
                                       if suffix in (".py", ".pyi")):
                return False
    except OSError:
        return False
    return True


def _raise(error: OSError) -> None:
    raise error


def _is_test_module(stem: str) -> bool:
    """`test.py`, `test_x.py`, `x_test.py`, `conftest.py` inside a package are its tests (a wheel
    ships them where an sdist keeps a `tests/` folder), not its API."""
    return stem in TEST_MODULES or stem.startswith("test_") or stem.endswith("_test")


def _read(path: Path, rel: str, module: str, is_package: bool, notes: list[str]) -> tuple[ModuleInfo, int] | None:
    """The module's summary and size, or None with a note when it cannot be read safely."""
    try:
        data = path.read_bytes() if path.stat().st_size <= MAX_FILE_BYTES else None
        if data is None:
            size = path.stat().st_size
            notes.append(f"API: skipped {rel} ({size // 1_000_000} MB; larger than {MAX_FILE_BYTES // 1_000_000} MB)")
            return None
        return read_module(_parse(data, rel), module, rel, is_package=is_package), len(data)
    except SyntaxError as e:
        notes.append(f"API: skipped {rel} (not Python 3.{_minor()} syntax: {e.msg}, line {e.lineno})")
    except (RecursionError, MemoryError):
        notes.append(f"API: skipped {rel} (nested too deeply to read)")
    except (OSError, ValueError) as e:
        notes.append(f"API: skipped {rel} ({e})")
    return None


def _parse(data: bytes, rel: str) -> ast.Module:
    """The module's tree with its function bodies cut after their first statements (outline.py),
    or the whole source's when the scanner is in doubt or the cut source does not parse."""
    cut = outline(data)
    if cut is not None and cut is not data:
        try:
            return ast.parse(cut, filename=rel)
        except SyntaxError:
            pass
    return ast.parse(data, filename=rel)


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
