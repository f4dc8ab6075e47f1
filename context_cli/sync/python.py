"""Python dependency files: uv.lock, poetry.lock, pdm.lock, Pipfile.lock, requirements*.txt,
and pyproject.toml / Pipfile for which dependencies are direct (or, alone, their ranges).

Names are normalised as PyPI does (PEP 503), so `Flask_SQLAlchemy` and `flask-sqlalchemy`
are one dependency.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .formats import load_json, load_toml, strings, table
from .model import Dep, LockfileError, outside_project, read_text

REGISTRY = "pip"
_NORMALISE = re.compile(r"[-_.]+")
_COMMENT = re.compile(r"(^|\s+)#.*$")
_PIP_OPTIONS_WITH_VALUE = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links",
                           "--trusted-host", "--no-binary", "--only-binary", "--hash", "--config-settings")
MAX_INCLUDES = 100


def normalise(name: str) -> str:
    """PEP 503: runs of `-`, `_`, `.` become one `-`, lower case."""
    return _NORMALISE.sub("-", name).lower()


# -- pyproject.toml / Pipfile: which are direct -----------------------------------------------


def pyproject_deps(path: Path, label: str) -> list[Dep]:
    """Direct dependencies a pyproject.toml declares (PEP 621, PEP 735 groups, Poetry, PDM, uv),
    each with its range, or its skip reason for git, path and URL sources."""
    data = load_toml(path, label)
    project, tool = table(data.get("project")), table(data.get("tool"))
    poetry, uv = table(tool.get("poetry")), table(tool.get("uv"))
    own = {normalise(n) for n in (project.get("name"), poetry.get("name")) if isinstance(n, str)}
    uv_sources = {normalise(k): v for k, v in table(uv.get("sources")).items()}
    found: list[Dep] = []
    pep508 = strings(project.get("dependencies"))
    for group in table(project.get("optional-dependencies")).values():
        pep508 += strings(group)
    for group in table(data.get("dependency-groups")).values():
        pep508 += strings(group)  # {include-group = ...} entries name groups listed here anyway
    for group in table(table(tool.get("pdm")).get("dev-dependencies")).values():
        pep508 += strings(group)
    pep508 += strings(uv.get("dev-dependencies"))
    for text in pep508:
        dep = _requirement(text, label)
        if dep is not None:
            source = table(uv_sources.get(dep.name))
            skip = _source_skip(source) if source else None
            found.append(_with(dep, skip=skip) if skip else dep)
    tables = [table(poetry.get("dependencies")), table(poetry.get("dev-dependencies"))]
    tables += [table(table(g).get("dependencies")) for g in table(poetry.get("group")).values()]
    for deps in tables:
        for name, spec in deps.items():
            if name.lower() != "python":
                found.extend(_poetry_dep(name, spec, label))
    return [d for d in found if d.name not in own]


def _poetry_dep(name: str, spec: Any, label: str) -> list[Dep]:
    """`"^1.2"`, `{version = "^1.2", extras = [...]}`, `{git = ...}`, or a list of those."""
    specs = spec if isinstance(spec, list) else [spec]
    out = []
    for s in specs:
        s = {"version": s} if isinstance(s, str) else table(s)
        skip = _source_skip(s)
        version = str(s.get("version") or "*").strip()
        exact = version if re.fullmatch(r"=*\s*\d[\w.!+-]*", version) and not version.endswith("*") else None
        exact = exact.lstrip("= ") if exact else None
        out.append(Dep(REGISTRY, normalise(name), None if skip else exact, True, label,
                       wanted=None if exact or skip else version, skip=skip))
    return out


def _source_skip(source: dict[str, Any]) -> str | None:
    for key, reason in (("workspace", "workspace member"), ("git", "git"), ("path", "path"),
                        ("url", "url"), ("file", "path"), ("editable", "path")):
        value = source.get(key)
        if value:
            return reason if value is True or key == "workspace" else f"{reason}: {value}"
    return None


def pipfile_direct(path: Path, label: str) -> set[str]:
    data = load_toml(path, label)
    return {normalise(n) for key in ("packages", "dev-packages") for n in table(data.get(key))}


# -- requirements files -----------------------------------------------------------------------


def requirements_deps(path: Path, label: str, root: Path) -> list[Dep]:
    """Requirements with their `-r` includes; `-c` constraint pins fix the ranges they cover."""
    reqs: list[Dep] = []
    pins: dict[str, str] = {}
    _read_requirements(path, root, reqs, pins, set(), constraint=False)
    out = []
    for d in reqs:
        if d.version is None and d.skip is None and d.name in pins:
            d = _with(d, version=pins[d.name], wanted=None)
        out.append(d)
    return out


def _read_requirements(path: Path, root: Path, reqs: list[Dep], pins: dict[str, str],
                       seen: set[Path], *, constraint: bool) -> None:
    resolved = path.resolve()
    if resolved in seen:
        return
    if len(seen) >= MAX_INCLUDES:
        raise LockfileError(_label(path, root), f"includes more than {MAX_INCLUDES} files")
    seen.add(resolved)
    label = _label(path, root)
    if not resolved.is_relative_to(root.resolve()):
        raise outside_project(label)
    if not path.is_file():
        raise LockfileError(label, "is included but does not exist")
    for lineno, line in _logical_lines(read_text(path, label)):
        include = re.match(r"^(-r|--requirement|-c|--constraint)(?:\s+|=)(\S+)$", line)
        if include:
            target = path.parent / include.group(2)
            is_constraint = include.group(1) in ("-c", "--constraint")
            _read_requirements(target, root, reqs, pins, seen, constraint=constraint or is_constraint)
            continue
        editable = re.match(r"^(-e|--editable)(?:\s+|=)(\S+)", line)
        if editable:
            where = editable.group(2)
            name = _egg_name(where) or where
            reason = "git" if where.startswith(("git+", "hg+", "svn+", "bzr+")) else "path"
            reqs.append(Dep(REGISTRY, normalise(name), None, True, label, skip=f"{reason} (editable): {where}"))
            continue
        if line.startswith("-"):
            continue  # --index-url, --pre, --hash on a line of its own...: not a requirement
        line = _strip_options(line)
        if not line:
            continue
        if re.match(r"^(git\+|hg\+|svn\+|bzr\+|https?://|file:|\.|/)", line):
            reason = "git" if line.startswith(("git+", "hg+", "svn+", "bzr+")) else (
                "url" if line.startswith("http") else "path")
            name = _egg_name(line) or line.split("/")[-1].split("#")[0]
            reqs.append(Dep(REGISTRY, normalise(name), None, True, label, skip=f"{reason}: {line}"))
            continue
        dep = _requirement(line, label, lineno)
        if dep is None:
            continue
        if constraint:
            if dep.version:
                pins[dep.name] = dep.version
        else:
            reqs.append(dep)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Comment-free lines with `\\` continuations joined, each with its first line number."""
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not buf:
            start = number
        line = _COMMENT.sub("", raw)
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        if buf.strip():
            out.append((start, buf.strip()))
        buf = ""
    if buf.strip():
        out.append((start, buf.strip()))
    return out


def _strip_options(line: str) -> str:
    """Drop per-requirement options (`--hash=sha256:...`) that pip allows after the spec."""
    parts = re.split(r"\s+(?=--?[a-z])", line)
    return parts[0].strip()


def _egg_name(target: str) -> str | None:
    m = re.search(r"[#&]egg=([A-Za-z0-9._-]+)", target)
    return m.group(1) if m else None


def _label(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return str(path)


def _requirement(text: str, label: str, line: int | None = None) -> Dep | None:
    """A PEP 508 requirement as a Dep: exact for `==`, a range otherwise; URLs are skipped."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement as e:
        raise LockfileError(label, f"not a requirement: {text[:80]!r} ({str(e).splitlines()[0][:80]})",
                            line) from None
    name = normalise(req.name)
    if req.url:
        reason = "git" if req.url.startswith("git+") else ("path" if req.url.startswith("file:") else "url")
        return Dep(REGISTRY, name, None, True, label, skip=f"{reason}: {req.url}")
    specs = list(req.specifier)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return Dep(REGISTRY, name, specs[0].version, True, label)
    return Dep(REGISTRY, name, None, True, label, wanted=str(req.specifier) or "*")


# -- lockfiles --------------------------------------------------------------------------------


def uv_lock_deps(path: Path, label: str) -> list[Dep]:
    """uv.lock: the workspace members (editable or virtual sources) say which are direct."""
    data = load_toml(path, label)
    if data.get("version") != 1:
        raise LockfileError(label, f"lockfile version {data.get('version')!r} is not supported "
                            "(uv.lock version 1 is); update context or run `uv lock` with a matching uv")
    packages = [table(p) for p in data.get("package", []) if isinstance(p, dict)]
    members = {normalise(str(p.get("name"))) for p in packages if _uv_member(p)}
    by_name: dict[str, list[dict[str, Any]]] = {}
    for p in packages:
        if isinstance(p.get("name"), str) and isinstance(p.get("version"), str | None):
            by_name.setdefault(normalise(p["name"]), []).append(p)
    direct: set[tuple[str, str | None]] = set()
    for p in packages:
        if not _uv_member(p):
            continue
        refs = list(p.get("dependencies") or [])
        for group in ("optional-dependencies", "dev-dependencies"):
            for items in table(p.get(group)).values():
                refs += items if isinstance(items, list) else []
        for ref in refs:
            if isinstance(ref, dict) and isinstance(ref.get("name"), str):
                direct.add((normalise(ref["name"]), ref.get("version")))
    out = []
    for name, entries in by_name.items():
        if name in members:
            continue
        for p in entries:
            version = p.get("version")
            is_direct = (name, version) in direct or (name, None) in direct
            skip = _uv_skip(table(p.get("source")))
            out.append(Dep(REGISTRY, name, None if skip else version, is_direct, label, skip=skip))
    for name, _ in direct:
        if name in members:
            out.append(Dep(REGISTRY, name, None, True, label, skip="workspace member"))
    return out


def _uv_member(p: dict[str, Any]) -> bool:
    source = table(p.get("source"))
    return "editable" in source or "virtual" in source


def _uv_skip(source: dict[str, Any]) -> str | None:
    for key, reason in (("git", "git"), ("path", "path"), ("directory", "path"), ("url", "url")):
        if key in source:
            return f"{reason}: {source[key]}"
    return None


def poetry_lock_deps(path: Path, label: str, direct: set[str] | None) -> list[Dep]:
    data = load_toml(path, label)
    lock_version = str(table(data.get("metadata")).get("lock-version", ""))
    if lock_version.split(".")[0] not in ("1", "2"):
        raise LockfileError(label, f"lock-version {lock_version or '(none)'!r} is not supported "
                            "(1.x and 2.x are)")
    out = []
    for p in data.get("package", []):
        p = table(p)
        if not isinstance(p.get("name"), str) or not isinstance(p.get("version"), str):
            raise LockfileError(label, "a [[package]] entry has no name or version")
        source = table(p.get("source"))
        kind = source.get("type")
        skip = f"{kind}: {source.get('url')}" if kind in ("git", "directory", "file", "url") else None
        name = normalise(p["name"])
        out.append(Dep(REGISTRY, name, None if skip else p["version"],
                       direct is None or name in direct, label, skip=skip))
    return out


def pdm_lock_deps(path: Path, label: str, direct: set[str] | None) -> list[Dep]:
    data = load_toml(path, label)
    lock_version = str(table(data.get("metadata")).get("lock_version", ""))
    if lock_version.split(".")[0] != "4":
        raise LockfileError(label, f"lock_version {lock_version or '(none)'!r} is not supported (4.x is)")
    out = []
    for p in data.get("package", []):
        p = table(p)
        if not isinstance(p.get("name"), str):
            raise LockfileError(label, "a [[package]] entry has no name")
        skip = next((f"{k}: {p[k]}" for k in ("git", "path", "url") if p.get(k)), None)
        name = normalise(p["name"])
        out.append(Dep(REGISTRY, name, None if skip else p.get("version"),
                       direct is None or name in direct, label, skip=skip))
    return out


def pipfile_lock_deps(path: Path, label: str, direct: set[str] | None) -> list[Dep]:
    data = load_json(path, label)
    if not isinstance(data, dict):
        raise LockfileError(label, "is not a Pipfile.lock (expected a JSON object)")
    spec_version = table(data.get("_meta")).get("pipfile-spec")
    if spec_version not in (5, 6):
        raise LockfileError(label, f"pipfile-spec {spec_version!r} is not supported (5 and 6 are)")
    out = []
    for section in ("default", "develop"):
        for name, entry in table(data.get(section)).items():
            entry = table(entry)
            n = normalise(name)
            skip = next((f"{k}: {entry[k]}" for k in ("git", "path", "file") if entry.get(k)), None)
            version = str(entry.get("version", ""))
            exact = version[2:] if version.startswith("==") else None
            if not skip and not exact:
                skip = f"no pinned version ({version or 'none'})"
            out.append(Dep(REGISTRY, n, None if skip else exact, direct is None or n in direct,
                           label, skip=skip))
    return out


def _with(dep: Dep, **changes: Any) -> Dep:
    from dataclasses import replace

    return replace(dep, **changes)
