"""JavaScript/TypeScript dependency files: package-lock.json (v1-v3), npm-shrinkwrap.json,
pnpm-lock.yaml (v6-v9), yarn.lock (classic and berry), bun.lock, and package.json for which
dependencies are direct (or, alone, their ranges).

npm names are kept as the registry spells them, scope included (`@tanstack/react-query`);
an alias (`"x": "npm:real@1.2.3"`) becomes the real package.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .formats import load_json, load_yaml, strings, table
from .model import MAX_DEPTH, Dep, LockfileError, read_text

REGISTRY = "npm"
DEP_FIELDS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
_EXACT = re.compile(r"^v?=?\s*(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)\Z")
_GIT_HOSTS = ("github:", "gitlab:", "bitbucket:", "gist:", "git+", "git:", "git@")

Manifests = dict[str, dict[str, Any]]
"""Workspace member folder ("" for the root) -> its package.json."""


def split_name(descriptor: str) -> tuple[str, str]:
    """`@scope/name@range` -> (`@scope/name`, `range`); no `@` after the name -> (it, "")."""
    at = descriptor.find("@", 1)
    return (descriptor[:at], descriptor[at + 1:]) if at > 0 else (descriptor, "")


def classify(spec: str) -> tuple[str | None, str | None, str]:
    """A package.json value -> (skip reason or None, aliased real name or None, range)."""
    spec = spec.strip()
    if spec.startswith("npm:"):
        real, rng = split_name(spec[4:])
        return None, real, rng or "*"
    for prefix, reason in (("workspace:", "workspace"), ("file:", "path"), ("link:", "path"),
                           ("portal:", "path"), ("patch:", "patch")):
        if spec.startswith(prefix):
            return f"{reason}: {spec}", None, spec
    if spec.startswith(_GIT_HOSTS) or re.match(r"^[\w.-]+/[\w.-]+(#.*)?$", spec):
        return f"git: {spec}", None, spec
    if re.match(r"^https?://", spec):
        return f"url: {spec}", None, spec
    if spec.startswith((".", "/", "~/")):
        return f"path: {spec}", None, spec
    return None, None, spec or "*"


def direct_specs(manifest: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(name, spec) for every dependency a package.json declares, in field order."""
    for field in DEP_FIELDS:
        for name, spec in table(manifest.get(field)).items():
            if isinstance(spec, str):
                yield name, spec


def workspace_globs(manifest: dict[str, Any]) -> list[str]:
    ws = manifest.get("workspaces")
    return strings(table(ws).get("packages") if isinstance(ws, dict) else ws)


def manifest_deps(manifest: dict[str, Any], label: str, members: set[str]) -> list[Dep]:
    """package.json alone: exact versions where the spec is one, ranges otherwise."""
    out = []
    for name, spec in direct_specs(manifest):
        skip, real, rng = classify(spec)
        if name in members and not skip:
            skip = "workspace member"
        exact = _EXACT.match(rng)
        out.append(Dep(REGISTRY, real or name, exact.group(1) if exact and not skip else None, True,
                       label, wanted=None if exact or skip else rng, skip=skip))
    return out


def _origin(label: str, member: str) -> str:
    return f"{label} ({member})" if member else label


# -- package-lock.json / npm-shrinkwrap.json ---------------------------------------------------


def package_lock_deps(path: Path, label: str, manifests: Manifests) -> list[Dep]:
    data = load_json(path, label)
    if not isinstance(data, dict):
        raise LockfileError(label, "is not an npm lockfile (expected a JSON object)")
    version = data.get("lockfileVersion")
    if version in (2, 3) and isinstance(data.get("packages"), dict):
        return _npm_packages(data["packages"], label)
    if version in (1, 2):
        return _npm_v1(table(data.get("dependencies")), label, manifests.get("", {}))
    raise LockfileError(label, f"lockfileVersion {version!r} is not supported (1, 2 and 3 are)")


def _npm_packages(packages: dict[str, Any], label: str) -> list[Dep]:
    """Lockfile v2/v3: `packages` keyed by install path; members are the non-node_modules keys."""
    members = {k: table(v) for k, v in packages.items() if "node_modules/" not in f"/{k}"}
    member_names = {str(v.get("name")) for v in members.values() if v.get("name")}
    out: list[Dep] = []
    seen_direct: set[str] = set()
    for folder, entry in members.items():
        for name, spec in direct_specs(entry):
            skip, _, _ = classify(spec)
            where = _npm_locate(packages, folder, name)
            seen_direct.add(where or "")
            out.append(_npm_entry(name, table(packages.get(where)) if where else None, skip, True,
                                  _origin(label, folder), member_names))
    for key, entry in packages.items():
        if "node_modules/" in f"/{key}" and key not in seen_direct:
            entry = table(entry)
            name = key.rsplit("node_modules/", 1)[1]
            if not entry.get("link"):
                out.append(_npm_entry(name, entry, None, False, label, member_names))
    return out


def _npm_locate(packages: dict[str, Any], folder: str, name: str) -> str | None:
    """Node's resolution: the nearest `node_modules/<name>` from the member folder upward."""
    parts = folder.split("/") if folder else []
    while True:
        key = "/".join([*parts, "node_modules", name])
        if key in packages:
            return key
        if not parts:
            return None
        parts.pop()


def _npm_entry(name: str, entry: dict[str, Any] | None, skip: str | None, direct: bool,
               origin: str, members: set[str]) -> Dep:
    if entry is None:
        return Dep(REGISTRY, name, None, direct, origin, skip=skip or "not installed by the lockfile")
    real = str(entry["name"]) if isinstance(entry.get("name"), str) else name
    resolved = str(entry.get("resolved") or "")
    if entry.get("link") or name in members and not skip:
        skip = skip or "workspace member"
    elif not skip and resolved.startswith(("git+", "git:", "github:")):
        skip = f"git: {resolved}"
    elif not skip and resolved.startswith("file:"):
        skip = f"path: {resolved}"
    version = entry.get("version") if isinstance(entry.get("version"), str) else None
    return Dep(REGISTRY, real, None if skip else version, direct, origin, skip=skip)


def _npm_v1(deps: dict[str, Any], label: str, root: dict[str, Any]) -> list[Dep]:
    """Lockfile v1: a tree of `dependencies`; the top level is what `node_modules/` holds."""
    direct = dict(direct_specs(root)) if root else None
    out: list[Dep] = []
    stack: list[tuple[dict[str, Any], int]] = [(deps, 0)]
    while stack:
        level, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise LockfileError(label, "is nested too deeply to be a dependency file")
        for name, entry in level.items():
            entry = table(entry)
            is_direct = depth == 0 and (direct is None or name in direct)
            skip = classify(direct[name])[0] if is_direct and direct else None
            version = str(entry.get("version") or "")
            real = name
            if version.startswith("npm:"):
                real, version = split_name(version[4:])
            elif not skip:
                kind, _, _ = classify(version)
                skip = kind if kind and not _EXACT.match(version) else None
            out.append(Dep(REGISTRY, real, None if skip else version or None, is_direct, label,
                           skip=skip if skip or version else "no version in the lockfile"))
            if isinstance(entry.get("dependencies"), dict):
                stack.append((entry["dependencies"], depth + 1))
    if direct:
        found = set(deps)
        out += [Dep(REGISTRY, n, None, True, label, skip=classify(s)[0] or "not installed by the lockfile")
                for n, s in direct.items() if n not in found]
    return out


# -- pnpm-lock.yaml ----------------------------------------------------------------------------


def pnpm_lock_deps(path: Path, label: str) -> list[Dep]:
    from .pnpm_scan import scan

    data = scan(read_text(path, label))
    if data is None:  # outside pnpm's own layout: the YAML parser reads it, or says where it breaks
        data = load_yaml(path, label)
    if not isinstance(data, dict):
        raise LockfileError(label, "is not a pnpm lockfile (expected a YAML mapping)")
    version = str(data.get("lockfileVersion", ""))
    if version.split(".")[0] not in ("6", "7", "9"):
        raise LockfileError(label, f"lockfileVersion {version or '(none)'!r} is not supported "
                            "(6.0 to 9.0 are); run `pnpm install` with pnpm 8 or newer")
    importers = table(data.get("importers")) or {".": data}
    out: list[Dep] = []
    direct: set[tuple[str, str]] = set()
    for folder, importer in importers.items():
        origin = _origin(label, "" if folder == "." else str(folder))
        for field in DEP_FIELDS:
            for name, ref in table(table(importer).get(field)).items():
                ref = table(ref) if isinstance(ref, dict) else {"version": ref, "specifier": ref}
                dep = _pnpm_ref(str(name), str(ref.get("version") or ""), str(ref.get("specifier") or ""),
                                origin)
                out.append(dep)
                direct.add((dep.name, dep.version or ""))
    for key in table(data.get("packages")):
        name, version = split_name(_pnpm_key(str(key)))
        if version and (name, version) not in direct:
            skip = None if re.match(r"^\d", version) else f"url: {version}"
            out.append(Dep(REGISTRY, name, None if skip else version, False, label, skip=skip))
    return out


def _pnpm_key(key: str) -> str:
    """`/name@1.0.0(peer@2)` (v6) or `name@1.0.0(peer@2)` (v9) -> `name@1.0.0`."""
    return key.lstrip("/").split("(", 1)[0]


def _pnpm_ref(name: str, version: str, specifier: str, origin: str) -> Dep:
    version = version.split("(", 1)[0]
    skip = None
    if version.startswith("link:"):
        skip = "workspace member" if specifier.startswith("workspace:") else f"path: {version}"
    elif version.startswith("file:"):
        skip = f"path: {version}"
    elif "://" in version or version.startswith(("github.com/", "gitlab.com/", "bitbucket.org/")):
        skip = f"git: {version}" if "git" in version else f"url: {version}"
    elif version.startswith("/") or "@" in version:
        name, version = split_name(version.lstrip("/"))
    return Dep(REGISTRY, name, None if skip else version or None, True, origin,
               skip=skip or (None if version else "no version in the lockfile"))


# -- yarn.lock ---------------------------------------------------------------------------------


def yarn_lock_deps(path: Path, label: str, manifests: Manifests) -> list[Dep]:
    """yarn.lock: classic (v1, its own format) or berry (YAML with `__metadata`)."""
    text = read_text(path, label)
    if re.search(r"^__metadata:", text, re.MULTILINE):
        entries = _berry_entries(path, label)
        berry = True
    else:
        entries = _classic_entries(text, label)
        berry = False
    members = {str(m.get("name")) for m in manifests.values() if m.get("name")}
    out: list[Dep] = []
    used: set[int] = set()
    for folder, manifest in manifests.items():
        origin = _origin(label, folder)
        for name, spec in direct_specs(manifest):
            skip, _, rng = classify(spec)
            if name in members and (not skip or skip.startswith("workspace")):
                out.append(Dep(REGISTRY, name, None, True, origin, skip="workspace member"))
                continue
            wanted = f"{name}@{spec if not berry or ':' in spec else 'npm:' + spec}"
            entry = entries.get(wanted)
            if entry is None:
                out.append(Dep(REGISTRY, name, None, True, origin,
                               skip=skip or f"{spec!r} is not in {label} (run the package manager's install)"))
                continue
            used.add(id(entry))
            out.append(_yarn_dep(name, entry, skip, True, origin))
    for descriptor, entry in entries.items():
        if id(entry) not in used:
            used.add(id(entry))
            dep = _yarn_dep(split_name(descriptor)[0], entry, None, False, label)
            if not (dep.skip or "").startswith(("workspace", "patch")):
                out.append(dep)
    return out


def _yarn_dep(name: str, entry: dict[str, str], skip: str | None, direct: bool, origin: str) -> Dep:
    resolution = entry.get("resolution")
    version = entry.get("version")
    if resolution:  # berry: `real@npm:1.2.3`, `app@workspace:.`, `x@https://github.com/...#commit=`
        real, rest = split_name(resolution)
        protocol, _, value = rest.partition(":")
        if protocol == "npm":
            name, version = real, value.split("::", 1)[0]
        elif protocol == "workspace":
            skip = skip or "workspace member"
        elif protocol in ("patch", "file", "link", "portal"):
            skip = skip or f"{'patch' if protocol == 'patch' else 'path'}: {rest}"
        else:
            skip = skip or f"{'git' if 'git' in rest else 'url'}: {rest}"
    else:  # classic: the descriptor's range tells an alias or a git/file source
        name = entry.get("_real") or name
        resolved = entry.get("resolved", "")
        if not skip and resolved and not re.search(r"/-/[^/]+\.tgz", resolved) and "registry" not in resolved:
            skip = f"{'git' if 'git' in resolved or 'codeload' in resolved else 'url'}: {resolved}"
    return Dep(REGISTRY, name, None if skip else version, direct, origin,
               skip=skip if skip or version else "no version in the lockfile")


def _berry_entries(path: Path, label: str) -> dict[str, dict[str, str]]:
    data = load_yaml(path, label)
    if not isinstance(data, dict):
        raise LockfileError(label, "is not a yarn lockfile")
    version = table(data.get("__metadata")).get("version")
    if not isinstance(version, int) or not 4 <= version <= 8:
        raise LockfileError(label, f"yarn berry lockfile version {version!r} is not supported (4 to 8 are)")
    entries: dict[str, dict[str, str]] = {}
    for key, value in data.items():
        if key == "__metadata" or not isinstance(value, dict):
            continue
        entry = {k: str(v) for k, v in value.items() if k in ("version", "resolution")}
        for descriptor in str(key).split(", "):
            entries[descriptor.strip()] = entry
    return entries


_CLASSIC_FIELD = re.compile(r'^  ("?)([^\s"]+)\1\s+"?([^"]*)"?$')


def _classic_entries(text: str, label: str) -> dict[str, dict[str, str]]:
    """yarn v1's own format: unindented `"a@^1", a@^1.1:` headers, two-space indented fields."""
    entries: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        if not line.startswith(" "):
            if not line.endswith(":"):
                raise LockfileError(label, "not a yarn.lock entry header (truncated or edited?)", number)
            current = {}
            for descriptor in line[:-1].split(","):
                descriptor = descriptor.strip().strip('"')
                if not descriptor or "@" not in descriptor[1:]:
                    raise LockfileError(label, f"bad package descriptor {descriptor!r}", number)
                entries[descriptor] = current
                _, rng = split_name(descriptor)
                if rng.startswith("npm:"):
                    current["_real"] = split_name(rng[4:])[0]
            continue
        if current is None:
            raise LockfileError(label, "an indented line before any entry", number)
        if line.startswith("    "):
            continue  # the entries of `dependencies:` and friends
        m = _CLASSIC_FIELD.match(line)
        if m:
            current[m.group(2)] = m.group(3)
        elif not line.rstrip().endswith(":"):
            raise LockfileError(label, f"cannot read {line.strip()[:60]!r}", number)
    return entries


# -- bun.lock ----------------------------------------------------------------------------------


def bun_lock_deps(path: Path, label: str) -> list[Dep]:
    data = load_json(path, label, jsonc=True)
    if not isinstance(data, dict):
        raise LockfileError(label, "is not a bun lockfile (expected a JSON object)")
    if data.get("lockfileVersion") not in (0, 1):
        raise LockfileError(label, f"lockfileVersion {data.get('lockfileVersion')!r} is not supported "
                            "(0 and 1 are)")
    packages = table(data.get("packages"))
    out: list[Dep] = []
    used: set[str] = set()
    for folder, ws in table(data.get("workspaces")).items():
        ws = table(ws)
        origin = _origin(label, str(folder))
        for name, spec in direct_specs(ws):
            key = f"{ws.get('name')}/{name}" if f"{ws.get('name')}/{name}" in packages else name
            used.add(key)
            skip, _, _ = classify(spec)
            out.append(_bun_dep(name, packages.get(key), skip, True, origin))
    for key, entry in packages.items():
        if key not in used:
            dep = _bun_dep(key, entry, None, False, label)
            if not (dep.skip or "").startswith("workspace"):
                out.append(dep)
    return out


def _bun_dep(name: str, entry: Any, skip: str | None, direct: bool, origin: str) -> Dep:
    ident = entry[0] if isinstance(entry, list) and entry and isinstance(entry[0], str) else None
    if ident is None:
        return Dep(REGISTRY, name, None, direct, origin, skip=skip or "not installed by the lockfile")
    real, rest = split_name(ident)
    protocol = rest.split(":", 1)[0] if ":" in rest else ""
    if protocol == "workspace":
        skip = skip or "workspace member"
    elif protocol in ("file", "link"):
        skip = skip or f"path: {rest}"
    elif protocol in ("github", "git+https", "git+ssh", "git", "gitlab", "bitbucket"):
        skip = skip or f"git: {rest}"
    elif protocol in ("http", "https"):
        skip = skip or f"url: {rest}"
    return Dep(REGISTRY, real, None if skip else rest, direct, origin, skip=skip)
