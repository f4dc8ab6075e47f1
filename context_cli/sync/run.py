"""`sync` as one library call: read the project, plan, act, record. The CLI is a thin layer on it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import actions
from .accept import is_accepted, read_accepted
from .docslock import lock_path, read_lock, write_lock
from .plan import BUILT, INSTALLED, Context, Row, execute, finish, make_plan
from .project import Project, read_project


@dataclass
class Outcome:
    project: Project
    rows: list[Row]
    lock: Path
    lock_written: bool = False
    problems: list[str] = field(default_factory=list)  # --check: docs.lock out of step
    server_note: str | None = None  # the registry server could not be asked: said once
    accepted: frozenset[str] = frozenset()  # deps the project accepts without docs (sync/accept.py)

    @property
    def exit_code(self) -> int:
        """0: everything synced; 1: something not available, missing or out of step."""
        return 1 if self.problems or self.failed else 0

    @property
    def failed(self) -> list[Row]:
        """Rows without docs that the project's accept list does not name."""
        return [r for r in self.rows if r.failed and not is_accepted(self.accepted, r.registry, r.name)]

    def to_json(self) -> dict[str, Any]:
        return {"project": str(self.project.root), "files": self.project.files, "notes": self.project.notes,
                "docs_lock": str(self.lock), "docs_lock_written": self.lock_written,
                "registry_server": self.server_note,
                "rows": [r.to_json() for r in self.rows], "problems": self.problems,
                "accepted": sorted(self.accepted), "summary": self.summary(),
                "exit_code": self.exit_code}


    def summary(self) -> dict[str, int]:
        """How many rows end in each action; README-only builds counted apart, as their own."""
        counts: dict[str, int] = {}
        for r in self.rows:
            counts[r.action] = counts.get(r.action, 0) + 1
            if r.docs in ("readme", "api") and r.action in (BUILT, INSTALLED):
                key = "readme only" if r.docs == "readme" else "API reference and README only"
                counts[key] = counts.get(key, 0) + 1
            if r.failed and is_accepted(self.accepted, r.registry, r.name):
                counts["accepted without docs"] = counts.get("accepted without docs", 0) + 1
        return counts


def sync(path: Path, *, transitive: bool = False, build: bool = True, check: bool = False,
         dry_run: bool = False, store_root: Path | None = None, rebuild: frozenset[str] = frozenset(),
         include: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
         on_plan: Callable[[list[Row]], None] | None = None,
         on_done: Callable[[Row], None] | None = None) -> Outcome:
    """Sync the docs of a project's dependencies; `check` and `dry_run` change nothing.

    A dependency file that cannot be read raises `LockfileError` before anything is
    downloaded, installed or written.
    """
    project = read_project(path, transitive=transitive, include=include, exclude=exclude)
    accepted = read_accepted(project.root)
    lock = lock_path(project.root)
    previous = {(e.registry, e.name, e.version): e for e in read_lock(lock)}
    ctx = Context(actions.open_store(store_root), previous, build=build, offline=check, rebuild=rebuild)
    rows = make_plan(project.deps, ctx)
    outcome = Outcome(project, rows, lock, server_note=ctx.server_down, accepted=accepted)
    if check:
        outcome.problems = _out_of_step(rows, previous)
        return outcome
    if dry_run:
        return outcome
    if on_plan:
        on_plan(rows)
    outcome.rows = execute(rows, ctx, on_done)
    outcome.lock_written = write_lock(lock, finish(outcome.rows))
    return outcome


def _out_of_step(rows: list[Row], previous: dict[tuple[str, str, str], Any]) -> list[str]:
    """docs.lock entries the dependency files no longer name, and installed docs it lacks."""
    wanted = {(r.registry, r.name, r.version) for r in rows if r.version}
    problems = [f"docs.lock lists {r}/{n}@{v}, which the dependency files do not name"
                for (r, n, v) in sorted(previous) if (r, n, v) not in wanted]
    problems += [f"{r.label} is installed but not in docs.lock (run `context sync`)"
                 for r in rows if r.action == INSTALLED and (r.registry, r.name, r.version) not in previous]
    return problems
