"""API extraction on real releases: its time, what it adds to build time and package size,
and how fast `context api` answers (cold: a fresh process; warm: in-process).

Each release (a PyPI sdist or an npm tarball, fetched by URL from the registry's index and
checked against its published digest) is downloaded once into the bench cache, outside the
repository, and unpacked there. It is then built in this process without and with the API
(`BuildOptions.api`), alternately, after one warm-up build, with embeddings as `context add`
makes them; the medians of wall and CPU time (this process and its page workers) are
reported. react ships no declarations, so its API comes from `@types/react` (fetched from
npm by the build, as `context add npm:react` does).

Budget (issue 29): API extraction adds at most 25 % build time and 30 % size where docs
exist (the sdist has a docs folder: Django, NumPy, SQLAlchemy); a README-only release gains
its whole API. `context api` < 0.3 s cold, < 5 ms warm.

    python bench/api_extract.py                       # all nine, 3 pairs each
    python bench/api_extract.py --only django --pairs 5
    python bench/api_extract.py --only zod --no-embed --extract-only
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import requests
from common import ROOT, bench_env, cache_dir, context_cmd

sys.path.insert(0, str(ROOT))


@dataclass(frozen=True)
class Release:
    registry: str  # pypi | npm
    name: str
    version: str
    probe: str  # a name `context api` is timed on

    @property
    def key(self) -> str:
        return self.name.lower()


RELEASES = [Release("pypi", "Django", "5.1.4", "get_object_or_404"),
            Release("pypi", "numpy", "2.2.1", "concatenate"),
            Release("pypi", "pandas", "2.2.3", "DataFrame.merge"),
            Release("pypi", "SQLAlchemy", "2.0.36", "create_engine"),
            Release("pypi", "pydantic", "2.10.4", "BaseModel.model_dump"),
            Release("npm", "react", "18.3.1", "useEffect"),
            Release("npm", "next", "15.1.0", "NextResponse.json"),
            Release("npm", "zod", "3.23.8", "z.string"),
            Release("npm", "typescript", "5.7.2", "createProgram")]


def archive(r: Release) -> Path:
    """The release's archive in the bench cache, downloaded once and digest-checked."""
    dest = cache_dir() / "releases"
    dest.mkdir(exist_ok=True)
    url, filename, check = _pypi_file(r) if r.registry == "pypi" else _npm_file(r)
    path = dest / filename
    if not path.exists():
        body = requests.get(url, timeout=600).content
        check(body)
        path.with_suffix(".partial").write_bytes(body)
        path.with_suffix(".partial").rename(path)
    return path


def _pypi_file(r: Release) -> tuple[str, str, object]:
    index = requests.get(f"https://pypi.org/simple/{r.name.lower()}/", timeout=60,
                         headers={"Accept": "application/vnd.pypi.simple.v1+json"}).json()
    want = f"{r.name}-{r.version}.tar.gz".lower()
    f = next(f for f in index["files"] if f["filename"].lower() == want)

    def check(body: bytes) -> None:
        assert hashlib.sha256(body).hexdigest() == f["hashes"]["sha256"], f"{want}: sha256 mismatch"

    return f["url"], f["filename"], check


def _npm_file(r: Release) -> tuple[str, str, object]:
    meta = requests.get(f"https://registry.npmjs.org/{r.name.replace('/', '%2F')}/{r.version}", timeout=60).json()
    integrity = meta["dist"]["integrity"].split("-", 1)[1]

    def check(body: bytes) -> None:
        assert base64.b64encode(hashlib.sha512(body).digest()).decode() == integrity, f"{r.name}: sha512 mismatch"

    return meta["dist"]["tarball"], f"{r.name.strip('@').replace('/', '-')}-{r.version}.tgz", check


def unpacked(r: Release) -> Path:
    """The release's top folder (`pkg-1.0/`, npm's `package/`), unpacked once."""
    path = archive(r)
    target = cache_dir() / "api-trees" / path.name.removesuffix(".tar.gz").removesuffix(".tgz").lower()
    if not target.exists():
        partial = target.with_suffix(".partial")
        shutil.rmtree(partial, ignore_errors=True)
        with tarfile.open(path) as tf:
            tf.extractall(partial, filter="data")
        partial.rename(target)
    return next(p for p in target.iterdir() if p.is_dir())


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def extraction(r: Release, root: Path, runs: int = 3) -> dict[str, object]:
    """Symbols and the median extraction time (wall, CPU) of `runs` extractions."""
    from context_cli.apiref.extract import extract_release

    walls, cpus = [], []
    for _ in range(runs):
        t, c = time.perf_counter(), _cpu()
        ref = extract_release(root, source_type=r.registry, registry="pip" if r.registry == "pypi" else "npm",
                              name=r.key, version=r.version)
        walls.append(time.perf_counter() - t)
        cpus.append(_cpu() - c)
    documented = sum(1 for s in ref.symbols if s.doc)
    return {"symbols": len(ref.symbols), "documented": documented, "origin": ref.origin, "notes": len(ref.notes),
            "extract_wall_s": round(statistics.median(walls), 2), "extract_cpu_s": round(statistics.median(cpus), 2)}


def builds(r: Release, root: Path, tmp: Path, *, embed: bool, pairs: int) -> dict[str, object]:
    """Build time and size without and with the API: one warm-up, then `pairs` alternating pairs."""
    from context_cli.build import BuildOptions, build
    from context_cli.package.reader import open_package
    from context_cli.sources.base import Fetched
    from context_cli.sources.unpacked import _docs_path

    registry = "pip" if r.registry == "pypi" else "npm"
    docs = _docs_path(root)
    times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
    size, sections = {}, {}
    order = [True]  # the warm-up: imports, the model, the page cache
    for p in range(pairs):
        order += [False, True] if p % 2 == 0 else [True, False]
    for i, api in enumerate(order):
        fetched = Fetched(source_type=r.registry, source_url=f"{r.registry}:{r.key}", folder=root, docs_path=docs,
                          code=root, name=r.key, version=r.version, registry=registry)
        dest = tmp / f"{api}.db"
        t, c = time.perf_counter(), _cpu()
        build(fetched, dest, BuildOptions(embed=embed, api=api, registry=registry))
        if i > 0:
            times[api].append((time.perf_counter() - t, _cpu() - c))
        size[api] = dest.stat().st_size
        with open_package(dest) as pkg:
            sections[api] = pkg.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    out: dict[str, object] = {"docs": docs, "pairs": pairs}
    for api, label in ((False, "plain"), (True, "api")):
        out[f"{label}_wall_s"] = round(statistics.median(w for w, _ in times[api]), 2)
        out[f"{label}_cpu_s"] = round(statistics.median(c for _, c in times[api]), 2)
        out[f"{label}_mb"] = round(size[api] / 1e6, 2)
        out[f"{label}_sections"] = sections[api]
    out["wall_growth"] = f"{(out['api_wall_s'] / out['plain_wall_s'] - 1) * 100:+.0f} %"  # type: ignore[operator]
    out["cpu_growth"] = f"{(out['api_cpu_s'] / out['plain_cpu_s'] - 1) * 100:+.0f} %"  # type: ignore[operator]
    out["size_growth"] = f"{(size[True] / size[False] - 1) * 100:+.0f} %"
    return out


def answers(r: Release, package: Path, tmp: Path) -> dict[str, object]:
    """`context api PROBE`: best of 3 fresh processes, and the in-process median of 50."""
    from context_cli.apiref.lookup import find_api
    from context_cli.store.store import Store

    home = tmp / "home"
    inst = Store(home / "packages").install(package)
    cold = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(context_cmd("api", r.probe, "--lib", inst.label, "--format", "json"), env=bench_env(home),
                       check=True, capture_output=True)
        cold.append(time.perf_counter() - t)
    found = find_api(r.probe, [inst])
    warm = []
    for _ in range(50):
        t = time.perf_counter()
        find_api(r.probe, [inst])
        warm.append(time.perf_counter() - t)
    return {"probe": r.probe, "found": found.symbols[0].symbol.name if found.symbols else None,
            "api_cold_s": round(min(cold), 3), "api_warm_ms": round(statistics.median(warm) * 1000, 2),
            **identifier_rule(r, inst.path)}


def identifier_rule(r: Release, package: Path, runs: int = 2000) -> dict[str, object]:
    """µs per call of `identifier_chunks` on an open package (the search runs it on every
    query): the probe, a common method name and a query of words; medians of `runs`."""
    from context_cli.package.identifiers import identifier_chunks
    from context_cli.package.reader import open_package

    out: dict[str, object] = {}
    with open_package(package) as pkg:
        for label, query in (("probe", r.probe), ("common", "x.get"), ("words", "how do I validate a form")):
            identifier_chunks(query, pkg)
            times = []
            for _ in range(runs):
                t = time.perf_counter()
                identifier_chunks(query, pkg)
                times.append(time.perf_counter() - t)
            out[f"identifier_{label}_us"] = round(statistics.median(times) * 1e6, 1)
    return out


def measure(r: Release, *, embed: bool, pairs: int, extract_only: bool) -> dict[str, object]:
    root = unpacked(r)
    out: dict[str, object] = {"release": f"{r.name} {r.version}", **extraction(r, root)}
    if extract_only:
        return out
    with tempfile.TemporaryDirectory() as tmp:
        out.update(builds(r, root, Path(tmp), embed=embed, pairs=pairs))
        out.update(answers(r, Path(tmp) / "True.db", Path(tmp)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", choices=[r.key for r in RELEASES])
    parser.add_argument("--pairs", type=int, default=3, help="Alternating builds without/with the API.")
    parser.add_argument("--no-embed", action="store_true", help="Build without embeddings (faster, lexical only).")
    parser.add_argument("--extract-only", action="store_true", help="Only the extraction, no builds.")
    args = parser.parse_args()
    for r in RELEASES:
        if not args.only or r.key in args.only:
            print(json.dumps(measure(r, embed=not args.no_embed, pairs=args.pairs, extract_only=args.extract_only)),
                  flush=True)


if __name__ == "__main__":
    main()
