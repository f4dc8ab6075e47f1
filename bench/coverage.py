"""Issue 28's coverage bench: where each dependency's docs come from, before and after the
docs-source ladder, and whether the gold page answers in the top three.

    .venv/bin/python bench/coverage.py [--only NAME] [--mode before|after] [--apps] [--out bench/results/coverage.json]

`before` is what `context add pypi:/npm:` built until now: the released artefact's docs folder,
else its README. `after` is the ladder (`context_cli/sources/docsources`). GitHub is not
reachable from the bench machine: repositories come from `fetch` snapshots under
/work/.mirror, served to git by a global config of `url.<folder>.insteadOf` lines; Neuledge's
definitions come from the snapshot of neuledge/context. Builds are lexical (no vectors), each
package in its own process with a time limit. `--apps` reads the four applications' lockfiles
and resolves (fetches, builds nothing) each direct dependency's docs (`--only` names packages,
or with `--apps` applications, whose rows replace those already in `--out`).

Each package or dependency is counted in one of three classes (`docs_class`): `docs`, `api`
(the README plus the API reference read from the released code) and `readme`; the summary
gives the targets on `docs` alone and on `docs + api` apart.
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
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MIRRORS = Path("/work/.mirror")
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from coverage_set import APPS, PACKAGES  # noqa: E402

PER_PACKAGE_S = 420


def environment(work: Path) -> dict[str, str]:
    """CONTEXT_HOME, definitions and the git config that serves the snapshots."""
    # Snapshots drop blobs of 4 MiB and more: a blob-less partial clone (which the client tries
    # first, as GitHub allows it) needs the serving side to allow filters, or redux's tag fails.
    lines = ["[uploadpack]", "\tallowFilter = true", "\tallowAnySHA1InWant = true"]
    for folder in sorted(MIRRORS.glob("*+*")):
        owner, name = folder.name.split("+", 1)
        repo = folder / "repo"
        if repo.is_dir():
            # GitHub reads owner and name in any case (flask-migrate's metadata names
            # miguelgrinberg/flask-migrate, the repository is Flask-Migrate); git's insteadOf does not.
            spellings = dict.fromkeys((f"{owner}/{name}", f"{owner}/{name}".lower()))
            lines.append(f'[url "{repo.as_uri()}"]')
            lines += [f"\tinsteadOf = https://github.com/{path}{tail}" for path in spellings for tail in (".git", "")]
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


def one(registry: str, name: str, version: str, mode: str, out: Path) -> dict[str, Any]:
    """Fetch and build one package one way; answer its two questions."""
    from context_cli.api import open as open_package
    from context_cli.api import search
    from context_cli.build import BuildOptions, build
    from context_cli.sources.docsources.ladder import _is_readme, resolve

    questions = next(q for r, n, v, q in PACKAGES if (r, n, v) == (registry, name, version))
    start = time.perf_counter()
    row: dict[str, Any] = {"registry": registry, "name": name, "version": version, "mode": mode}
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
        row.update(step=step, docs=docs_class(readme, result.symbols), pages=result.pages, sections=result.chunks,
                   symbols=result.symbols,
                   tried=tried, meta=dict(fetched.meta), questions=hits)
    except Exception as e:  # noqa: BLE001 - a bench row, not a crash
        row.update(step="failed", docs="none", error=f"{type(e).__name__}: {e}"[:300], questions=[])
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def docs_class(readme_only: bool, symbols: int) -> str:
    """`docs` (real documentation), `api` (the README plus the API reference read from the
    released code: sync's `api`), or `readme`. Only `docs` counts as documentation."""
    if not readme_only:
        return "docs"
    return "api" if symbols else "readme"


def run_packages(env: dict[str, str], work: Path, only: str | None,
                 modes: tuple[str, ...] = ("before", "after")) -> list[dict[str, Any]]:
    rows = []
    for registry, name, version, _ in PACKAGES:
        if only and name not in only.split(","):
            continue
        for mode in modes:
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
            hits = sum(q["hit"] for q in row["questions"])
            print(f"{mode:6} {registry}/{name}@{version}: {row['step']:10} {row['docs']:6} "
                  f"gold {hits}/2 {row.get('seconds', '')}s {str(row.get('error', ''))[:100]}", flush=True)
    return rows


def run_apps(env: dict[str, str], work: Path, only: str | None = None) -> list[dict[str, Any]]:
    """Each app's direct dependencies (with exact versions), resolved through the ladder; a
    README-only one counts as `api` when the API reference can be read from its released code."""
    os.environ.update(env)
    from context_cli.sync.project import read_project

    out = []
    for label, mirror, files in APPS:
        if only and label not in only.split(","):
            continue
        checkout = work / "apps" / label
        checkout.mkdir(parents=True, exist_ok=True)
        git_dir = MIRRORS / mirror / "repo"
        present = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "--name-only", "HEAD", "--", *files],
                                 capture_output=True, text=True).stdout.split()
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", "HEAD", *present],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(checkout)], input=archive, check=True)
        deps = [d for d in read_project(checkout).deps if d.version and not d.skip]
        start = time.perf_counter()
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda d: one_dep(d.registry, d.name, d.version), deps))
        counts = {k: sum(r["docs"] == k for r in results) for k in ("docs", "api", "readme", "none")}
        print(f"app {label}: of {len(results)} direct dependencies, docs {counts['docs']}, api {counts['api']}, "
              f"readme {counts['readme']}, none {counts['none']} ({time.perf_counter() - start:.0f}s)", flush=True)
        out.append({"app": label, "files": present, "deps": results, "total": len(results), **counts})
    return out


def one_dep(registry: str, name: str, version: str) -> dict[str, Any]:
    """Where one dependency's docs come from (the ladder, nothing built), with its class."""
    from context_cli.apiref.extract import extract_release
    from context_cli.sources.docsources.ladder import resolve

    spec, start = f"{registry}/{name}@{version}", time.perf_counter()
    try:
        r = resolve(registry, name, version)
        row: dict[str, Any]
        try:
            symbols, api_error = 0, None
            if r.readme_only and r.fetched.code is not None:
                try:
                    api = extract_release(r.fetched.code, source_type=r.fetched.source_type, registry=registry,
                                          name=name, version=version)
                    symbols = len(api.symbols) if api is not None else 0
                except Exception as e:  # noqa: BLE001 - said in the row (openpyxl: CPython's ast in threads)
                    api_error = f"{type(e).__name__}: {e}"[:200]
            row = {"dep": spec, "step": r.step, "docs": docs_class(r.readme_only, symbols),
                   "docs_version": r.fetched.meta.get("docs_version"), "tried": r.tried()[:400]}
            if api_error:
                row["api_error"] = api_error
        finally:
            r.fetched.cleanup()
    except Exception as e:  # noqa: BLE001 - a bench row, not a crash
        row = {"dep": spec, "step": "none", "docs": "none", "error": str(e)[:400]}
    row["seconds"] = round(time.perf_counter() - start, 1)
    print(f"  {spec}: {row['step']} {row['docs']} {row['seconds']}s", flush=True)
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=5)
    ap.add_argument("--only", help="comma-separated names; their rows replace those already in --out")
    ap.add_argument("--apps", action="store_true")
    ap.add_argument("--mode", choices=("before", "after"),
                    help="build one way only; the other way's rows already in --out are kept")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "coverage.json")
    args = ap.parse_args()
    if args.one:
        registry, name, version, mode, out = args.one
        print(json.dumps(one(registry, name, version, mode, Path(out))))
        return
    work = Path(tempfile.mkdtemp(prefix="coverage-bench-"))
    env = environment(work)
    report: dict[str, Any] = {}
    if args.out.exists():
        report = json.loads(args.out.read_text())
    if args.apps:
        fresh_apps = run_apps(env, work, args.only)
        report["apps"] = [a for a in report.get("apps") or [] if args.only
                          and a["app"] not in {f["app"] for f in fresh_apps}] + fresh_apps
    else:
        fresh = run_packages(env, work, args.only, (args.mode,) if args.mode else ("before", "after"))
        keep = [r for r in report.get("packages") or [] if (args.only or args.mode)
                and (r["name"], r["mode"]) not in {(f["name"], f["mode"]) for f in fresh}]
        order = {n: i for i, (_, n, _, _) in enumerate(PACKAGES)}
        report["packages"] = sorted(keep + fresh, key=lambda r: (order[r["name"]], r["mode"]))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    summarise(report)


def summarise(report: dict[str, Any]) -> None:
    """The targets on `docs` alone and on `docs + api` apart: the API reference is no docs."""
    rows = report.get("packages") or []
    for mode in ("before", "after"):
        mine = [r for r in rows if r["mode"] == mode]
        if not mine:
            continue
        n = len(mine)
        kinds = {k: sum(r["docs"] == k for r in mine) for k in ("docs", "api", "readme", "none")}
        qs = [q for r in mine for q in r["questions"]]
        hits = sum(q["hit"] for q in qs)
        hits_i = sum(q.get("hit_i", q["hit"]) for q in qs)
        print(f"{mode}: docs {kinds['docs']}/{n} ({pct(kinds['docs'], n)}), docs + api "
              f"{kinds['docs'] + kinds['api']}/{n} ({pct(kinds['docs'] + kinds['api'], n)}), readme {kinds['readme']}, "
              f"failed {kinds['none']}; gold in top 3 for {hits}/{2 * n} questions ({pct(hits, 2 * n)}), "
              f"{hits_i} ({pct(hits_i, 2 * n)}) matching case-insensitively")
    apps = report.get("apps") or []
    for app in apps:
        print(f"app {app['app']}: docs {app['docs']}, api {app['api']}, readme {app['readme']}, "
              f"none {app['none']} of {app['total']}")
    if apps:
        total = sum(a["total"] for a in apps)
        docs = sum(a["docs"] for a in apps)
        api = sum(a["api"] for a in apps)
        # Type-only packages (@types/*, types-*) given their runtime library's docs, counted apart
        # so that the figure without them can be read too.
        runtime = sum(d["step"] == "runtime" and d["docs"] == "docs" for a in apps for d in a["deps"])
        print(f"apps: docs {docs}/{total} ({pct(docs, total)}), docs + api {docs + api}/{total} "
              f"({pct(docs + api, total)}); of the docs, {runtime} are type-only packages' runtime library "
              f"(without them {docs - runtime}/{total}, {pct(docs - runtime, total)})")


def pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f} %" if whole else "-"


if __name__ == "__main__":
    main()
