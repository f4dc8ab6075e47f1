"""API extraction on real releases: its time, what it adds to build time and package size,
and how fast `context api` answers (cold: a fresh process; warm: in-process).

Each sdist is downloaded once (common.sdist) and built twice in this process, without and
with the API (`BuildOptions.api`), with embeddings as `context add` makes them. Budget
(issue 29): API extraction adds at most 25 % build time and 30 % size where docs exist;
`context api` < 0.3 s cold, < 5 ms warm.

    python bench/api_extract.py                 # django numpy pandas sqlalchemy pydantic
    python bench/api_extract.py --only pydantic --no-embed
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from common import DJANGO, ROOT, bench_env, cache_dir, context_cmd, sdist

sys.path.insert(0, str(ROOT))

RELEASES = {"django": (DJANGO, "get_object_or_404"), "numpy": ("numpy==2.2.1", "concatenate"),
            "pandas": ("pandas==2.2.3", "DataFrame.merge"), "sqlalchemy": ("SQLAlchemy==2.0.36", "create_engine"),
            "pydantic": ("pydantic==2.10.4", "BaseModel.model_dump")}


def unpacked(requirement: str) -> Path:
    archive = sdist(requirement)
    target = cache_dir() / "api-trees" / archive.name.removesuffix(".tar.gz").lower()
    if not target.exists():
        with tarfile.open(archive) as tf:
            tf.extractall(target.with_suffix(".partial"), filter="data")
        target.with_suffix(".partial").rename(target)
    return next(p for p in target.iterdir() if p.is_dir())


def docs_path(root: Path) -> str | None:
    from context_cli.sources.artefact import DOCS_FOLDERS

    return next((d for d in DOCS_FOLDERS if (root / d).is_dir()), None)


def measure(key: str, embed: bool) -> dict[str, object]:
    from context_cli.apiref.lookup import find_api
    from context_cli.apiref.python import extract_api
    from context_cli.build import BuildOptions, build
    from context_cli.sources.base import Fetched
    from context_cli.store.store import Store

    requirement, probe = RELEASES[key]
    name, version = requirement.split("==")
    root = unpacked(requirement)
    start = time.perf_counter()
    ref = extract_api(root, registry="pip", name=name.lower(), version=version)
    extract_s = time.perf_counter() - start
    out: dict[str, object] = {"release": requirement, "symbols": len(ref.symbols), "extract_s": round(extract_s, 2),
                              "notes": len(ref.notes)}
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for api in (False, True):
            fetched = Fetched(source_type="pypi", source_url=f"pypi:{requirement}", folder=root,
                              docs_path=docs_path(root), code=root, name=name.lower(), version=version,
                              registry="pip")
            dest = Path(tmp) / f"{api}.db"
            t = time.perf_counter()
            build(fetched, dest, BuildOptions(embed=embed, api=api, registry="pip"))
            results[api] = (time.perf_counter() - t, dest.stat().st_size)
        (t0, s0), (t1, s1) = results[False], results[True]
        out.update(build_s=round(t0, 1), build_api_s=round(t1, 1), time_growth=f"{(t1 / t0 - 1) * 100:+.0f} %",
                   size_mb=round(s0 / 1e6, 2), size_api_mb=round(s1 / 1e6, 2), size_growth=f"{(s1 / s0 - 1) * 100:+.0f} %")
        home = Path(tmp) / "home"
        inst = Store(home / "packages").install(Path(tmp) / "True.db")
        cold = []
        for _ in range(3):
            t = time.perf_counter()
            subprocess.run(context_cmd("api", probe, "--lib", inst.label, "--format", "json"), env=bench_env(home),
                           check=True, capture_output=True)
            cold.append(time.perf_counter() - t)
        find_api(probe, [inst])
        warm = []
        for _ in range(50):
            t = time.perf_counter()
            find_api(probe, [inst])
            warm.append(time.perf_counter() - t)
        out.update(api_cold_s=round(min(cold), 3), api_warm_ms=round(statistics.median(warm) * 1000, 2))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", choices=list(RELEASES))
    parser.add_argument("--no-embed", action="store_true", help="Build without embeddings (faster, lexical only).")
    args = parser.parse_args()
    for key in args.only or list(RELEASES):
        print(measure(key, not args.no_embed), flush=True)


if __name__ == "__main__":
    main()
