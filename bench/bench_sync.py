"""`context sync` speed: the no-op sync of a large project, and parsing big lockfiles.

    .venv/bin/python bench/bench_sync.py [--deps 200] [--entries 20000] [--repeat 5]

1. A project of N locked direct npm dependencies whose docs are all installed: the first
   sync (which hashes every package for docs.lock) and the steady-state sync after it.
   Every socket connect raises during the run, so "no network" is proven, not assumed.
   Target: steady state < 1 s for 200 dependencies.
2. Reading a generated package-lock.json (v3) and pnpm-lock.yaml (v9) of M packages with
   `--all`. Target: < 1 s each for 20,000 entries.

Times are the best of --repeat runs (this machine is shared: numbers are upper bounds).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from context_cli.document import Chunk  # noqa: E402
from context_cli.package.identity import PackageId  # noqa: E402
from context_cli.package.writer import write_package  # noqa: E402


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def no_network() -> None:
    def refuse(self: socket.socket, address: object) -> None:
        raise OSError(f"bench: network access attempted to {address}")

    socket.socket.connect = refuse  # type: ignore[method-assign,assignment]


def installed_project(root: Path, home: Path, n: int) -> Path:
    """N installed npm packages and a package-lock.json naming exactly them."""
    packages_dir = home / "packages"
    packages_dir.mkdir(parents=True)
    deps, entries = {}, {}
    for i in range(n):
        name, version = f"lib-{i:04d}", f"1.{i % 7}.{i % 13}"
        chunks = [Chunk("guide.md", name, "Usage", f"Call {name}.run() to start. " * 20, 120, False)]
        write_package(packages_dir / PackageId("npm", name, version).filename,
                      {"name": name, "version": version, "registry": "npm"}, chunks)
        deps[name] = f"^{version}"
        entries[f"node_modules/{name}"] = {"version": version,
                                           "resolved": f"https://registry.npmjs.org/{name}/-/{name}-{version}.tgz"}
    project = root / "project"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"name": "big", "dependencies": deps}))
    packages = {"": {"name": "big", "dependencies": deps}, **entries}
    (project / "package-lock.json").write_text(json.dumps({"lockfileVersion": 3, "packages": packages}))
    return project


def big_package_lock(path: Path, m: int) -> None:
    packages: dict[str, dict[str, object]] = {"": {"name": "big", "dependencies": {f"p{i}": "^1.0.0" for i in range(200)}}}
    for i in range(m):
        key = f"node_modules/p{i}" if i % 10 else f"node_modules/p{i - 1}/node_modules/p{i}"
        packages[key] = {"version": f"1.{i % 50}.{i % 9}", "resolved": f"https://registry.npmjs.org/p{i}/-/p{i}-1.0.0.tgz",
                         "integrity": "sha512-" + "A" * 86 + "==", "dependencies": {f"p{i + 1}": "^1.0.0"}}
    path.write_text(json.dumps({"name": "big", "lockfileVersion": 3, "requires": True, "packages": packages}, indent=2))


def big_pnpm_lock(path: Path, m: int) -> None:
    lines = ["lockfileVersion: '9.0'", "", "settings:", "  autoInstallPeers: true", "", "importers:", "", "  .:",
             "    dependencies:"]
    for i in range(200):
        lines += [f"      p{i}:", "        specifier: ^1.0.0", f"        version: 1.{i % 50}.{i % 9}"]
    lines += ["", "packages:", ""]
    for i in range(m):
        lines += [f"  p{i}@1.{i % 50}.{i % 9}:", "    resolution: {integrity: sha512-" + "A" * 86 + "==}", ""]
    lines += ["snapshots:", ""]
    for i in range(m):
        lines += [f"  p{i}@1.{i % 50}.{i % 9}:", "    dependencies:", f"      p{i + 1}: 1.0.0", ""]
    path.write_text("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deps", type=int, default=200)
    ap.add_argument("--entries", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-sync-") as tmp_name:
        tmp = Path(tmp_name)
        home = tmp / "home"
        os.environ["CONTEXT_HOME"] = str(home)
        os.environ["CONTEXT_REGISTRY_URL"] = "http://127.0.0.1:9"  # never asked: everything is installed
        project = installed_project(tmp, home, args.deps)
        no_network()
        from context_cli.sync.run import sync

        start = time.perf_counter()
        first = sync(project)
        first_s = time.perf_counter() - start
        assert first.exit_code == 0 and len(first.rows) == args.deps, [r.to_json() for r in first.rows[:3]]
        steady = best(lambda: sync(project), args.repeat)
        print(f"sync, {args.deps} locked direct deps all installed: first {first_s:.3f} s "
              f"(hashes them for docs.lock), then {steady:.3f} s  [target < 1 s]")

        from context_cli.sync.javascript import package_lock_deps, pnpm_lock_deps

        npm_lock, pnpm_lock = tmp / "package-lock.json", tmp / "pnpm-lock.yaml"
        big_package_lock(npm_lock, args.entries)
        big_pnpm_lock(pnpm_lock, args.entries)
        n_npm = len(package_lock_deps(npm_lock, "package-lock.json", {}))
        n_pnpm = len(pnpm_lock_deps(pnpm_lock, "pnpm-lock.yaml"))
        t_npm = best(lambda: package_lock_deps(npm_lock, "package-lock.json", {}), args.repeat)
        t_pnpm = best(lambda: pnpm_lock_deps(pnpm_lock, "pnpm-lock.yaml"), args.repeat)
        print(f"package-lock.json, {args.entries} entries ({npm_lock.stat().st_size / 1e6:.1f} MB, "
              f"{n_npm} deps read): {t_npm:.3f} s  [target < 1 s]")
        print(f"pnpm-lock.yaml, {args.entries} entries ({pnpm_lock.stat().st_size / 1e6:.1f} MB, "
              f"{n_pnpm} deps read): {t_pnpm:.3f} s  [target < 1 s]")


if __name__ == "__main__":
    main()
