"""A project's dependency files, found and read: lockfiles win over manifests.

Every folder under the project (a few levels deep, skipping installed-package and build
folders, test, fixture and example trees, and what the project's `.gitignore` ignores; `include`
and `exclude` globs change that) that holds a lockfile is a project of its own; workspace
members (npm/yarn/pnpm/bun workspaces, uv workspaces, Elixir umbrella apps) are read through
their root's lockfile. Manifests alone (package.json, pyproject.toml) give version ranges. A
sub-project whose files cannot be read is a note, not the end: only the root's are fatal.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from ..errors import ContextError
from . import elixir, javascript, python
from .formats import load_json, load_toml, load_yaml, strings, table
from .model import Dep, LockfileError, dedupe, outside_project

MAX_DEPTH = 4
SKIP_DIRS = {"node_modules", ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__",
             "dist", "build", "_build", "deps", ".context", "target", ".next", ".nuxt", ".turbo",
             ".yarn", ".pnpm-store", "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache",
             "bower_components", "coverage"}
# Trees of sample projects, not the project: poetry's own tests/fixtures/*/poetry.lock are not its deps.
SAMPLE_DIRS = {"test", "tests", "__tests__", "testing", "fixtures", "__fixtures__", "testdata", "test-data",
               "examples", "example", "samples", "e2e"}
JS_LOCKS = ("pnpm-lock.yaml", "yarn.lock", "bun.lock", "npm-shrinkwrap.json", "package-lock.json")
PY_LOCKS = ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock")
LOOKED_FOR = (*PY_LOCKS, "requirements*.txt", "requirements/*.txt", "pyproject.toml", *JS_LOCKS, "package.json", "mix.lock")
_MANAGER_LOCK = {"pnpm": "pnpm-lock.yaml", "yarn": "yarn.lock", "bun": "bun.lock", "npm": "package-lock.json"}


class NoDependencyFiles(ContextError):
    """A folder with nothing that names dependencies."""


@dataclass
class Project:
    root: Path
    deps: list[Dep]
    files: list[str] = field(default_factory=list)  # the dependency files read, relative
    notes: list[str] = field(default_factory=list)  # what could not be used, and what was instead


def read_project(root: Path, *, transitive: bool = False, include: tuple[str, ...] = (),
                 exclude: tuple[str, ...] = ()) -> Project:
    """Every dependency the project's files name; direct ones only unless `transitive`.

    `include` globs (relative folder paths) bring back folders skipped by default (`tests/*`);
    `exclude` globs leave more out.
    """
    root = root.resolve()
    if not root.is_dir():
        raise NoDependencyFiles(f"{root} is not a folder")
    reader = _Reader(root)
    for folder in _project_folders(root, include, exclude):
        if folder == root:
            reader.read_folder(folder)
            continue
        mark = (len(reader.deps), set(reader.files))
        try:
            reader.read_folder(folder)
        except LockfileError as e:
            del reader.deps[mark[0]:]
            reader.files = mark[1]
            reader.notes.append(f"{folder.relative_to(root).as_posix()}/ left out: {e}")
    if not reader.files:
        raise NoDependencyFiles(f"no dependency files in {root} (looked for {', '.join(LOOKED_FOR)})")
    deps = dedupe([d for d in reader.deps if transitive or d.direct])
    return Project(root, deps, sorted(reader.files), reader.notes)


def _project_folders(root: Path, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()) -> list[Path]:
    """The root, and every folder below it holding a lockfile, shallowest first."""
    found = [root]
    locks = {*JS_LOCKS, *PY_LOCKS, "mix.lock"}
    ignored = _gitignore(root)
    for current, dirs, files in os.walk(root):
        here = Path(current)
        depth = len(here.relative_to(root).parts)
        kept = []
        for d in sorted(dirs) if depth < MAX_DEPTH else []:
            rel = (here / d).relative_to(root).as_posix()
            if d in SKIP_DIRS or d.startswith("."):
                continue
            wanted = any(fnmatch(rel, g.strip("/")) or rel.startswith(g.strip("/") + "/") or g.strip("/").startswith(rel + "/")
                         for g in include)
            if not wanted and (d.lower() in SAMPLE_DIRS or _ignored(rel, d, ignored)
                               or any(fnmatch(rel, g.strip("/")) for g in exclude)):
                continue
            kept.append(d)
        dirs[:] = kept
        if depth and locks.intersection(files):
            found.append(here)
    return found


def _gitignore(root: Path) -> list[str]:
    """The root `.gitignore`'s folder patterns (negations and comments left out)."""
    try:
        text = (root / ".gitignore").read_text("utf-8", errors="replace")[:256_000]
    except OSError:
        return []
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith(("#", "!"))]


def _ignored(rel: str, name: str, patterns: list[str]) -> bool:
    for p in patterns:
        anchored = p.startswith("/") or "/" in p.rstrip("/")
        p = p.strip("/")
        if anchored and fnmatch(rel, p) or not anchored and fnmatch(name, p):
            return True
    return False


class _Reader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.deps: list[Dep] = []
        self.files: set[str] = set()
        self.covered: set[tuple[str, Path]] = set()  # (ecosystem, folder) already read
        self.notes: list[str] = []

    def label(self, path: Path) -> str:
        label = path.relative_to(self.root).as_posix()
        if not path.resolve().is_relative_to(self.root):  # a link, or a link to a folder on the way
            raise outside_project(label)
        return label

    def use(self, path: Path) -> str:
        label = self.label(path)
        self.files.add(label)
        return label

    def read_folder(self, folder: Path) -> None:
        if ("js", folder) not in self.covered:
            self.read_js(folder)
        if ("py", folder) not in self.covered:
            self.read_python(folder)
        if ("ex", folder) not in self.covered and (folder / "mix.lock").is_file():
            self.read_elixir(folder)

    # -- JavaScript --------------------------------------------------------------------------

    def read_js(self, folder: Path) -> None:
        manifest_path = folder / "package.json"
        manifest = self.json(manifest_path) if manifest_path.is_file() else {}
        members = self.js_members(folder, manifest)
        manifests = {"": manifest, **{self.rel(m, folder): self.json(m / "package.json") for m in members}}
        for m in [folder, *members]:
            self.covered.add(("js", m))
        lock = self.js_lock(folder, manifest)
        if lock is None and (folder / "bun.lockb").is_file():
            self.notes.append(f"{self.label(folder / 'bun.lockb')} is binary and not read; package.json's "
                              "ranges were used (`bun install --save-text-lockfile` writes bun.lock)")
        if lock is None:
            names = {str(d.get("name")) for d in manifests.values() if d.get("name")}
            for rel, data in manifests.items():
                if data:
                    path = folder / rel / "package.json" if rel else manifest_path
                    self.deps += javascript.manifest_deps(data, self.use(path), names)
            return
        label = self.use(lock)
        parsers: dict[str, Callable[[], list[Dep]]] = {
            "pnpm-lock.yaml": lambda: javascript.pnpm_lock_deps(lock, label),
            "yarn.lock": lambda: javascript.yarn_lock_deps(lock, label, manifests),
            "bun.lock": lambda: javascript.bun_lock_deps(lock, label),
        }
        read = parsers.get(lock.name, lambda: javascript.package_lock_deps(lock, label, manifests))
        self.deps += read()

    def js_lock(self, folder: Path, manifest: dict[str, Any]) -> Path | None:
        """The lockfile of the package manager the project names, else the first present."""
        manager = str(manifest.get("packageManager") or "").split("@")[0]
        order = [_MANAGER_LOCK[manager]] if manager in _MANAGER_LOCK else []
        if manager == "npm":
            order.insert(0, "npm-shrinkwrap.json")
        for name in [*order, *JS_LOCKS]:
            if (folder / name).is_file():
                return folder / name
        return None

    def js_members(self, folder: Path, manifest: dict[str, Any]) -> list[Path]:
        globs = javascript.workspace_globs(manifest)
        pnpm_ws = folder / "pnpm-workspace.yaml"
        if pnpm_ws.is_file():
            globs += strings(table(load_yaml(pnpm_ws, self.use(pnpm_ws))).get("packages"))
        return self.expand(folder, globs, "package.json")

    # -- Python ------------------------------------------------------------------------------

    def read_python(self, folder: Path) -> None:
        self.covered.add(("py", folder))
        pyproject = folder / "pyproject.toml"
        has_pyproject = pyproject.is_file()
        if (folder / "uv.lock").is_file():
            data = load_toml(pyproject, self.label(pyproject)) if has_pyproject else {}
            workspace = table(table(table(data.get("tool")).get("uv")).get("workspace"))
            for member in self.expand(folder, strings(workspace.get("members")), "pyproject.toml"):
                self.covered.add(("py", member))
            lock = folder / "uv.lock"
            self.deps += python.uv_lock_deps(lock, self.use(lock))
            return
        direct = None
        if has_pyproject:
            direct = {d.name for d in python.pyproject_deps(pyproject, self.label(pyproject))}
        for name, parse in (("poetry.lock", python.poetry_lock_deps), ("pdm.lock", python.pdm_lock_deps)):
            lock = folder / name
            if lock.is_file():
                if has_pyproject:
                    self.use(pyproject)
                self.deps += parse(lock, self.use(lock), direct)
                return
        if (folder / "Pipfile.lock").is_file():
            pipfile = folder / "Pipfile"
            names = python.pipfile_direct(pipfile, self.use(pipfile)) if pipfile.is_file() else None
            lock = folder / "Pipfile.lock"
            self.deps += python.pipfile_lock_deps(lock, self.use(lock), names)
            return
        requirements = sorted(folder.glob("requirements*.txt")) + sorted(folder.glob("requirements/*.txt"))
        for path in requirements:
            self.deps += python.requirements_deps(path, self.use(path), self.root)
        if not requirements and has_pyproject:
            self.deps += python.pyproject_deps(pyproject, self.use(pyproject))

    # -- Elixir ------------------------------------------------------------------------------

    def read_elixir(self, folder: Path) -> None:
        self.covered.add(("ex", folder))
        direct: dict[str, str | None] | None = None
        for exs in [folder / "mix.exs", *sorted(folder.glob("apps/*/mix.exs"))]:
            if exs.is_file():
                self.use(exs)
                direct = {**(direct or {}), **elixir.mix_exs_direct(exs)}
        direct = {k: v for k, v in (direct or {}).items() if v != "umbrella app"} or None
        lock = folder / "mix.lock"
        self.deps += elixir.mix_lock_deps(lock, self.use(lock), direct)

    # -- helpers -----------------------------------------------------------------------------

    def json(self, path: Path) -> dict[str, Any]:
        return table(load_json(path, self.label(path)))

    def rel(self, member: Path, folder: Path) -> str:
        return member.relative_to(folder).as_posix()

    def expand(self, folder: Path, globs: list[str], marker: str) -> list[Path]:
        """Workspace globs (`packages/*`, `!packages/legacy`) -> member folders holding `marker`."""
        excluded = {p.resolve() for g in globs if g.startswith("!") for p in folder.glob(g[1:].rstrip("/"))}
        found: list[Path] = []
        for pattern in globs:
            if pattern.startswith("!") or ".." in Path(pattern).parts or Path(pattern).is_absolute():
                continue
            for p in sorted(folder.glob(pattern.rstrip("/"))):
                if (p / marker).is_file() and p.resolve() not in excluded and p != folder and p not in found:
                    if not SKIP_DIRS.intersection(p.relative_to(folder).parts):
                        found.append(p)
        return found
