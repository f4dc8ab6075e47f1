"""Issue 28's coverage bench: where each dependency's docs come from, before and after the
docs-source ladder, and whether the gold page answers in the top three.

    .venv/bin/python bench/coverage.py [--only NAME] [--apps] [--out bench/results/coverage.json]

`before` is what `context add pypi:/npm:` built until now: the released artefact's docs folder,
else its README. `after` is the ladder (`context_cli/sources/docsources`). GitHub is not
reachable from the bench machine: repositories come from `fetch` snapshots under
/work/.mirror, served to git by a global config of `url.<folder>.insteadOf` lines; Neuledge's
definitions come from the snapshot of neuledge/context. Builds are lexical (no vectors), each
package in its own process with a time limit. `--apps` reads the four applications' lockfiles
and resolves (fetches, builds nothing) each direct dependency's docs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIRRORS = Path("/work/.mirror")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from coverage_set import APPS, PACKAGES  # noqa: E402

PER_PACKAGE_S = 420


def environment(work: Path) -> dict[str, str]:
    """CONTEXT_HOME, definitions and the git config that serves the snapshots."""
    lines = []
    for folder in sorted(MIRRORS.glob("*+*")):
        owner, name = folder.name.split("+", 1)
        repo = folder / "repo"
        if repo.is_dir():
            lines.append(f'[url "{repo.as_uri()}"]')
            lines += [f"\tinsteadOf = https://github.com/{owner}/{name}{tail}" for tail in (".git", "")]
    config = work / "gitconfig"
    config.write_text("\n".join(lines) + "\n")
    defs = [str(ROOT / "registry" / "packages.yaml")]
    neuledge = MIRRORS / "neuledge+context" / "repo"
    if neuledge.is_dir():
        tree = work / "neuledge"
        tree.mkdir(exist_ok=True)
        archive = subprocess.run(["git", "--git-dir", str(neuledge), "archive", "HEAD", "registry"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        defs.append(str(tree / "registry"))
    return {**os.environ, "CONTEXT_HOME": str(work / "home"), "GIT_CONFIG_GLOBAL": str(config),
            "CONTEXT_GIT_ALLOW_PROTOCOL": "file", "CONTEXT_DEFINITIONS": os.pathsep.join(defs)}


def one(registry: str, name: str, version: str, mode: str, out: Path) -> dict[str, object]:
    """Fetch and build one package one way; answer its two questions."""
    from context_cli.api import open as open_package
    from context_cli.api import search
    from context_cli.build import BuildOptions, build
    from context_cli.sources.docsources.ladder import _is_readme, resolve

    questions = next(q for r, n, v, q in PACKAGES if (r, n, v) == (registry, name, version))
    start = time.perf_counter()
    row: dict[str, object] = {"registry": registry, "name": name, "version": version, "mode": mode}
    try:
        if mode == "before":
            from context_cli.sources.artefact import fetch_npm, fetch_pypi

            fetched = (fetch_pypi if registry == "pip" else fetch_npm)(name, version)
            step, readme, tried = "artefact", _is_readme(fetched), ""
        else:
            resolved = resolve(registry, name, version)
            fetched, step, readme, tried = resolved.fetched, resolved.step, resolved.readme_only, resolved.tried()
        try:
            result = build(fetched, out, BuildOptions(name=name, version=version, registry=registry, embed=False))
        finally:
            fetched.cleanup()
        pkg = open_package(out)
        hits = []
        for question, gold in questions:
            import re

            sources = [r.source for r in search(question, [pkg], limit=3).results]
            # `hit`: the pattern as written; `hit_i`: case-insensitive (npm's `Readme.md`,
            # jest's `MockFunctions.md`: the page meant, spelled otherwise)
            hits.append({"question": question, "gold": gold, "top3": sources,
                         "hit": any(re.search(gold, s or "") for s in sources),
                         "hit_i": any(re.search(gold, s or "", re.I) for s in sources)})
        row.update(step=step, docs="readme" if readme else "docs", pages=result.pages, sections=result.chunks,
                   tried=tried, meta=dict(fetched.meta), questions=hits)
    except Exception as e:  # noqa: BLE001 - a bench row, not a crash
        row.update(step="failed", docs="none", error=f"{type(e).__name__}: {e}"[:300], questions=[])
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def run_packages(env: dict[str, str], work: Path, only: str | None) -> list[dict[str, object]]:
    rows = []
    for registry, name, version, _ in PACKAGES:
        if only and name not in only.split(","):
            continue
        for mode in ("before", "after"):
            out = work / f"{registry}-{name.replace('/', '_')}-{mode}.db"
            cmd = [sys.executable, __file__, "--one", registry, name, version, mode, str(out)]
            try:
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=PER_PACKAGE_S)
                row = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {
                    "registry": registry, "name": name, "version": version, "mode": mode, "step": "failed",
                    "docs": "none", "error": proc.stderr[-300:], "questions": []}
            except subprocess.TimeoutExpired:
                row = {"registry": registry, "name": name, "version": version, "mode": mode, "step": "failed",
                       "docs": "none", "error": f"over {PER_PACKAGE_S}s", "questions": []}
            out.unlink(missing_ok=True)
            rows.append(row)
            hits = sum(q["hit"] for q in row["questions"])  # type: ignore[index,union-attr]
            print(f"{mode:6} {registry}/{name}@{version}: {row['step']:10} {row['docs']:6} "
                  f"gold {hits}/2 {row.get('seconds', '')}s {str(row.get('error', ''))[:100]}", flush=True)
    return rows


def run_apps(env: dict[str, str], work: Path) -> list[dict[str, object]]:
    """Each app's direct dependencies (with exact versions), resolved through the ladder."""
    os.environ.update(env)
    from context_cli.sources.docsources.ladder import resolve
    from context_cli.sync.project import read_project

    out = []
    for label, mirror, files in APPS:
        checkout = work / "apps" / label
        checkout.mkdir(parents=True, exist_ok=True)
        git_dir = MIRRORS / mirror / "repo"
        present = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", "HEAD", "--", *files],
                                 capture_output=True, text=True).stdout.split()
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "HEAD", *present],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(checkout)], input=archive, check=True)
        deps = [d for d in read_project(checkout).deps if d.version and not d.skip]

        def one_dep(dep: object) -> dict[str, object]:
            try:
                r = resolve(dep.registry, dep.name, dep.version)  # type: ignore[attr-defined]
                r.fetched.cleanup()
                return {"dep": f"{dep.registry}/{dep.name}@{dep.version}", "step": r.step,  # type: ignore[attr-defined]
                        "docs": "readme" if r.readme_only else "docs"}
            except Exception as e:  # noqa: BLE001
                return {"dep": f"{dep.registry}/{dep.name}@{dep.version}", "step": "none", "docs": "none",  # type: ignore[attr-defined]
                        "error": str(e)[:200]}

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(one_dep, deps))
        real = sum(r["docs"] == "docs" for r in results)
        print(f"app {label}: {real}/{len(results)} direct dependencies with real docs", flush=True)
        out.append({"app": label, "files": present, "deps": results, "real": real, "total": len(results)})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=5)
    ap.add_argument("--only", help="comma-separated names; their rows replace those already in --out")
    ap.add_argument("--apps", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "coverage.json")
    args = ap.parse_args()
    if args.one:
        registry, name, version, mode, out = args.one
        print(json.dumps(one(registry, name, version, mode, Path(out))))
        return
    work = Path(tempfile.mkdtemp(prefix="coverage-bench-"))
    env = environment(work)
    report: dict[str, object] = {}
    if args.out.exists():
        report = json.loads(args.out.read_text())
    if args.apps:
        report["apps"] = run_apps(env, work)
    else:
        fresh = run_packages(env, work, args.only)
        keep = [r for r in report.get("packages") or [] if args.only  # type: ignore[union-attr]
                and (r["name"], r["mode"]) not in {(f["name"], f["mode"]) for f in fresh}]
        order = {n: i for i, (_, n, _, _) in enumerate(PACKAGES)}
        report["packages"] = sorted(keep + fresh, key=lambda r: (order[r["name"]], r["mode"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    summarise(report)


def summarise(report: dict[str, object]) -> None:
    rows = report.get("packages") or []
    for mode in ("before", "after"):
        mine = [r for r in rows if r["mode"] == mode]  # type: ignore[index]
        if not mine:
            continue
        real = sum(r["docs"] == "docs" for r in mine)  # type: ignore[index]
        qs = [q for r in mine for q in r["questions"]]  # type: ignore[index]
        hits = sum(q["hit"] for q in qs)
        hits_i = sum(q.get("hit_i", q["hit"]) for q in qs)
        print(f"{mode}: real docs for {real}/{len(mine)} packages ({100 * real / len(mine):.0f} %); "
              f"gold in top 3 for {hits}/{2 * len(mine)} questions ({50 * hits / len(mine):.0f} %), "
              f"{hits_i} ({50 * hits_i / len(mine):.0f} %) matching case-insensitively")
    for app in report.get("apps") or []:  # type: ignore[union-attr]
        print(f"app {app['app']}: {app['real']}/{app['total']}")  # type: ignore[index]


if __name__ == "__main__":
    main()
