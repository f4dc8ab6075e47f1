"""What the benchmarks share: the cache folder, the Django docs tree, timing summaries.

Built packages, downloaded sdists and synthetic package homes live under one cache folder
outside the repository (`$CONTEXT_BENCH_CACHE`, else `$XDG_CACHE_HOME/context-bench`, else
`~/.cache/context-bench`), so a second `make bench` reuses them.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DJANGO = "Django==5.1.4"


def cache_dir() -> Path:
    """The benchmarks' cache folder (created)."""
    explicit = os.environ.get("CONTEXT_BENCH_CACHE")
    base = Path(explicit) if explicit else Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "context-bench"
    base.mkdir(parents=True, exist_ok=True)
    return base


def package_stamp() -> str:
    """The package formats that the `context_cli` this process imports writes (this checkout's,
    unless a benchmark put another first: `instructions.py --root`): a cached home built
    under other ones is built again, since its packages would lack what that code reads."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    from context_cli.package import bm25, schema

    try:
        from context_cli.package import phrases
    except ImportError:  # a checkout from before phrase postings
        return f"package {schema.FORMAT_VERSION}, bm25 {bm25.FORMAT}\n"
    return f"package {schema.FORMAT_VERSION}, bm25 {bm25.FORMAT}, phrases {phrases.FORMAT}\n"


def sdist(requirement: str) -> Path:
    """The sdist of `requirement` (name==version), downloaded once with pip (registry only)."""
    dest = cache_dir() / "sdists"
    dest.mkdir(exist_ok=True)
    name = requirement.split("==")[0].lower().replace("-", "_")

    def found() -> list[Path]:
        return [p for p in dest.glob("*.tar.gz") if p.name.lower().replace("-", "_").startswith(name)]

    if not found():
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        requirement, "-d", str(dest)], check=True)
    return found()[0]


def docs_tree(requirement: str) -> Path:
    """The docs folder of `requirement`'s sdist, unpacked once."""
    archive = sdist(requirement)
    target = cache_dir() / "trees" / archive.name.removesuffix(".tar.gz").lower()
    if not target.exists():
        partial = target.with_suffix(".partial")
        with tarfile.open(archive) as tf:
            tf.extractall(partial, filter="data")
        partial.rename(target)
    return next(p for pattern in ("*/docs", "*/doc") for p in target.glob(pattern))


def context_cmd(*args: str) -> list[str]:
    """The `context` CLI of this checkout, as a subprocess command."""
    return [sys.executable, "-m", "context_cli", *args]


def bench_env(home: Path) -> dict[str, str]:
    """The environment a `context` subprocess runs in: this checkout, `home`, no network."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "CONTEXT_HOME": str(home), "HF_HUB_OFFLINE": "1", "PYTHONPATH": path}


def pct(xs: list[float], q: float) -> float:
    """The q-quantile of xs (nearest rank)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


@dataclass(frozen=True)
class Summary:
    """Median, 95th percentile and spread of repeated measurements."""

    p50: float
    p95: float
    low: float
    high: float
    q1: float
    q3: float
    n: int

    @classmethod
    def of(cls, xs: list[float]) -> Summary:
        return cls(statistics.median(xs), pct(xs, 0.95), min(xs), max(xs), pct(xs, 0.25), pct(xs, 0.75), len(xs))

    def spread(self, unit: str, fmt: str = ".1f") -> str:
        """`min–max` for few runs, the interquartile range for many."""
        if self.n < 10:
            return f"range {self.low:{fmt}}–{self.high:{fmt}} {unit}, n={self.n}"
        return f"IQR {self.q1:{fmt}}–{self.q3:{fmt}} {unit}, n={self.n}"


def pace_ms() -> float:
    """How fast this host runs Python right now: a fixed piece of interpreter work (dicts,
    strings, a sort), best of three, in ms. A shared host's pace swings by 1.7x within a
    minute, and warm search times follow it (correlation 0.77 over 40 blocks of questions),
    so a warm figure is given with the pace it ran at (`latency.warm`)."""
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        d: dict[int, int] = {}
        for i in range(20_000):
            d[i % 977] = d.get(i % 511, 0) + i
        sorted(str(i) for i in range(5_000))
        best = min(best, time.perf_counter() - t)
    return best * 1000


def rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident memory of a live process in MB, from /proc."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def children_of(pid: int) -> list[int]:
    """Live child processes of `pid` (Linux /proc)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out
