"""Project scope for `context search`, `query` and `serve`: the packages `.context/docs.lock` lists.

An agent working in a project should see the docs of the versions the project runs, nothing
else: with a docs.lock found (from the working folder upward, or `--project PATH`), a search
covers exactly the packages it lists, and a bare library name means the project's version.
`--no-project` turns this off.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ContextError, NotInstalled
from ..store.store import Installed, Spec, Store

F = TypeVar("F", bound=Callable[..., Any])


class ProjectScope:
    """The packages one project's docs.lock lists (`lock` None: no project scope), and the
    entries it lists that are `missing` (not installed: run `context sync`)."""

    __slots__ = ("lock", "packages", "missing")

    def __init__(self, lock: Path | None = None) -> None:
        self.lock = lock
        self.packages: list[Installed] = []
        self.missing: list[str] = []

    @property
    def specs(self) -> list[str]:
        return [p.id.qualified for p in self.packages]

    def describe(self) -> str:
        """One line for stderr: which scope is in force."""
        if self.lock is None:
            return "no project scope (no .context/docs.lock found)"
        n = len(self.packages)
        text = f"project scope: {n} package{'s' if n != 1 else ''} from {self.lock}"
        if self.missing:
            text += f"; not installed: {', '.join(self.missing[:5])}{' …' if len(self.missing) > 5 else ''}" \
                    " (run `context sync`)"
        return text


def project_options(func: F) -> F:
    """`--project PATH` and `--no-project`, shared by the commands that honour the scope."""
    import click  # (not at the top: a plain `context query` resolves its library without click)

    func = click.option("--no-project", is_flag=True,
                        help="Ignore the project's .context/docs.lock: see every installed package.")(func)
    return click.option("--project", "project", type=click.Path(exists=True, path_type=Path), metavar="PATH",
                        help="Use this project's .context/docs.lock (default: the nearest one from the "
                             "working folder upward).")(func)


def project_scope(store: Store, project: Path | None, no_project: bool) -> ProjectScope:
    """The scope the options ask for; a damaged docs.lock is an error, never a wider scope."""
    from ..sync.scope import find_docs_lock, project_specs

    if no_project:
        return ProjectScope()
    if project is not None:
        lock = project if project.is_file() else find_docs_lock(project)
        if lock is None:
            raise ContextError(f"{project}: no .context/docs.lock here or above (run `context sync` there)")
    else:
        lock = find_docs_lock(Path.cwd())
        if lock is None:
            return ProjectScope()
    installed = store.installed()
    scope = ProjectScope(lock=lock)
    for spec in project_specs(lock):
        found = store.find(spec, among=installed)
        if found:
            scope.packages.append(found[0])
        else:
            scope.missing.append(spec)
    return scope


def resolve_in_scope(store: Store, spec: str, scope: ProjectScope) -> Installed:
    """What `spec` means here: within the project's packages first (a bare name is the
    project's version), else among everything installed."""
    if scope.lock is not None and store.find(Spec.parse(spec), among=scope.packages):
        return store.resolve(spec, among=scope.packages)
    locked = _locked_missing(spec, scope)
    if locked:
        raise NotInstalled(f"{locked} is what {scope.lock} locks, and its docs are not installed; "
                           "run `context sync` (another installed version is not used in this project; "
                           "--no-project searches everything)")
    try:
        return store.resolve(spec)
    except NotInstalled:
        raise NotInstalled(f"{spec} is not installed (see `context list`"
                           + (", or run `context sync`)" if scope.lock is not None else ")")) from None


def _locked_missing(spec: str, scope: ProjectScope) -> str | None:
    """The docs.lock entry `spec` names when that entry's package is not installed (any
    version asked for but the project's means the project's)."""
    wanted = Spec.parse(spec)
    for entry in scope.missing:
        registry, _, rest = entry.partition("/")
        at = rest.rfind("@")
        name, version = rest[:at], rest[at + 1:]
        if name == wanted.name and wanted.registry in (None, registry) and wanted.version in (None, version):
            return entry
    return None
