"""Build speed, peak memory and package size on real docs trees (the docs folders of PyPI sdists).

`context add FOLDER` runs as a fresh process per build, as a user runs it; its wall time and
peak resident memory (the largest process of the build, parse workers included) are taken
from the operating system. Sdists are downloaded once into the bench cache (see common.py).

    python bench/build.py                       # django flask click sqlalchemy, 1 run each
    python bench/build.py --only django --runs 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from common import DJANGO, Summary, bench_env, cache_dir, context_cmd, docs_tree, package_stamp

PROJECTS = {"django": DJANGO, "flask": "flask==3.1.0", "click": "click==8.1.8",
            "sqlalchemy": "SQLAlchemy==2.0.36"}


@dataclass(frozen=True)
class Built:
    seconds: float
    cpu_seconds: float  # user + system, the build's process and its parse workers together
    peak_rss_mb: float
    size_mb: float
    package: Path


def timed_add(docs: Path, home: Path, name: str, version: str, *, embed: bool = True) -> Built:
    """`context add docs` into a fresh `home`: wall and CPU time, peak RSS, package size."""
    shutil.rmtree(home, ignore_errors=True)
    args = context_cmd("add", str(docs), "--name", name, "--pkg-version", version, *([] if embed else ["--no-embed"]))
    start = time.perf_counter()
    proc = subprocess.Popen(args, env=bench_env(home), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise RuntimeError(f"context add failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    package = next((home / "packages").glob("*.db"))
    return Built(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, package.stat().st_size / 1e6,
                 package)


def django_builds(runs: int) -> tuple[Summary, Summary, float, Path]:
    """Build the Django docs `runs` times: (seconds, peak RSS MB, size MB, the home kept for reuse)."""
    docs = docs_tree(DJANGO)
    home = cache_dir() / "django-home"
    results = [timed_add(docs, home, "django", "5.1.4") for _ in range(runs)]
    (home / "stamp").write_text(package_stamp())
    return (Summary.of([r.seconds for r in results]), Summary.of([r.peak_rss_mb for r in results]),
            results[-1].size_mb, home)


def django_home() -> Path:
    """A home with the Django package installed: the cached one, else built once."""
    home = cache_dir() / "django-home"
    stamp = home / "stamp"
    if not list((home / "packages").glob("*.db")) or not stamp.exists() or stamp.read_text() != package_stamp():
        timed_add(docs_tree(DJANGO), home, "django", "5.1.4")
        stamp.write_text(package_stamp())
    return home


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(PROJECTS))
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    print(f"{'project':<11} {'lexical s':>14} {'hybrid s':>14} {'hybrid CPU s':>14} {'peak RSS':>9} {'size lex':>9} "
          f"{'size hyb':>9}")
    for name in args.only or list(PROJECTS):
        docs = docs_tree(PROJECTS[name])
        with tempfile.TemporaryDirectory(prefix="bench-build-") as tmp:
            lex = [timed_add(docs, Path(tmp), name, "1.0.0", embed=False) for _ in range(args.runs)]
            hyb = [timed_add(docs, Path(tmp), name, "1.0.0") for _ in range(args.runs)]
        ls, hs = Summary.of([b.seconds for b in lex]), Summary.of([b.seconds for b in hyb])
        hc = Summary.of([b.cpu_seconds for b in hyb])
        print(f"{name:<11} {ls.p50:>6.1f} ({ls.low:.1f}-{ls.high:.1f}) {hs.p50:>6.1f} ({hs.low:.1f}-{hs.high:.1f}) "
              f"{hc.p50:>6.1f} ({hc.low:.1f}-{hc.high:.1f}) "
              f"{max(b.peak_rss_mb for b in hyb):>7.0f}MB {lex[-1].size_mb:>8.2f}M {hyb[-1].size_mb:>8.2f}M")


if __name__ == "__main__":
    main()
