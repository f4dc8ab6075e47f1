"""Query latency where users feel it.

1. Warm in-process search over ten installed packages of 2,000 sections each, hybrid
   (target p50 <= 5 ms, p95 <= 8 ms), across all packages and for one package.
2. Cold `context query LIB "<question>"`: a fresh process per run (target p50 <= 0.35 s),
   with `context --help` as the floor of any command.
3. `--batch`: a 200-question batch over six packages (the Django 5.1.4 package and five of
   the ten, 15,444 sections), searched as `context search --batch` does (warm), per question
   (issue 35's target: <= 4 ms), several runs with their spread.

The ten packages are synthesised from the anthropic eval corpus (its sections, re-titled
per package) so the text is realistic; each carries vectors from the shipped model. They
are built once into the bench cache (see common.py) and reused.

    python bench/latency.py              # both
    python bench/latency.py --warm-only  # only 1., e.g. to compare two checkouts run by turns
    python bench/latency.py --batch --runs 5   # only 3.

Each warm line gives the 1-minute load average and the host's pace (`common.pace_ms`, timed
before each block of questions), and the figure of the blocks run at the fastest pace seen:
on a busy machine the times are upper bounds.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from common import ROOT, Summary, bench_env, cache_dir, context_cmd, pace_ms, package_stamp

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as the CLI does: see context_cli/surfaces/cli.py
SHARED = Path(os.environ.get("CONTEXT_SHARED", ROOT.parent / "shared"))
QUESTIONS = SHARED / "eval" / "anthropic-docs" / "questions.jsonl"
CORPUS = SHARED / "eval" / "anthropic-docs" / "corpus"
N_PACKAGES = 10
CHUNKS_PER_PACKAGE = 2000


def questions() -> list[str]:
    return [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]


def make_packages(home: Path) -> None:
    from context_cli.build import model_meta
    from context_cli.chunk.chunker import chunk_document
    from context_cli.embed.model import load_model
    from context_cli.embed.text import embed_text
    from context_cli.package.writer import write_package
    from context_cli.parse import parse_file
    from context_cli.store.store import Store

    base = []
    for f in sorted(CORPUS.rglob("*.md")):
        doc = parse_file(f.relative_to(CORPUS).as_posix(), f.read_bytes())
        if doc is not None:
            base.extend(chunk_document(doc))
    store = Store(home / "packages")
    model = load_model(None)
    for p in range(N_PACKAGES):
        chunks = []
        for i in range(CHUNKS_PER_PACKAGE):
            c = base[i % len(base)]
            chunks.append(type(c)(**{**c.__dict__, "doc_path": f"v{i // len(base)}/{c.doc_path}",
                                     "section_title": f"{c.section_title} ({p}.{i})"}))
        vectors = model.encode([embed_text(c) for c in chunks])
        tmp = home / f"p{p}.db"
        write_package(tmp, {"name": f"pkg{p}", "version": "1.0.0", **model_meta(model)}, chunks, vectors=vectors)
        store.install(tmp)
        tmp.unlink()


def ten_packages_home() -> Path:
    """The home with ten 2,000-section packages, built once into the bench cache."""
    home = cache_dir() / "ten-packages-home"
    done = home / "complete"
    if not done.exists() or done.read_text() != package_stamp():
        import shutil

        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        os.environ["CONTEXT_HOME"] = str(home)
        make_packages(home)
        done.write_text(package_stamp())
    return home


@dataclass(frozen=True)
class Warm:
    """A warm figure, and the host's pace while it ran (`common.pace_ms`, timed before each
    block of BLOCK questions): `quiet` is the figure of the blocks run within QUIET of the
    fastest pace seen, what a quiet host gives."""

    all: Summary
    quiet: Summary
    pace: Summary  # ms, one per block
    quiet_first: float  # the share of the quiet figure's questions that were new to the packages

    def line(self) -> str:
        return (f"p50 {self.all.p50:.2f} ms  p95 {self.all.p95:.2f} ms  ({self.all.spread('ms', '.2f')})"
                f"  load {os.getloadavg()[0]:.1f}  |  pace {self.pace.low:.1f}-{self.pace.high:.1f} ms;"
                f" at the fastest (n={self.quiet.n}, {self.quiet_first:.0%} new questions):"
                f" p50 {self.quiet.p50:.2f} ms  p95 {self.quiet.p95:.2f} ms")


BLOCK = 10
QUIET = 1.15


def warm(home: Path, one_package: bool = False, rounds: int = 2) -> Warm:
    """Warm in-process `search` (hybrid) p50/p95 in ms over the eval questions, each round's
    questions new to the packages in the first round and asked again in the others."""
    os.environ["CONTEXT_HOME"] = str(home)
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from context_cli.search.engine import SearchOptions, search
    from context_cli.store.store import Store

    qs = questions()
    pkgs = Store(home / "packages").installed()
    pkgs = pkgs[:1] if one_package else pkgs
    served = SearchOptions(warm=True)  # as `context serve` searches
    for q in qs[:5]:
        search(q, pkgs, served)  # load matrices and model once
    asked = qs * rounds
    times, paces = [], []
    for start in range(0, len(asked), BLOCK):
        paces.append(pace_ms())
        for q in asked[start:start + BLOCK]:
            t0 = time.perf_counter()
            search(q, pkgs, served)
            times.append((time.perf_counter() - t0) * 1000)
    fastest = min(paces)
    quiet = [k for k in range(len(times)) if paces[k // BLOCK] <= QUIET * fastest]
    return Warm(Summary.of(times), Summary.of([times[k] for k in quiet]), Summary.of(paces),
                sum(1 for k in quiet if k < len(qs)) / len(quiet))


SIX = 5  # of the ten packages, beside Django's
BATCH = 200


def six_packages_home() -> Path:
    """A home with the Django package (bench/build.py) and five of the ten packages, copied
    into the bench cache once (again when either source is rebuilt)."""
    import shutil

    from build import django_home

    sources = sorted((django_home() / "packages").glob("*.db")) + sorted(
        (ten_packages_home() / "packages").glob("*.db"))[:SIX]
    home = cache_dir() / "six-packages-home"
    stamp = home / "complete"
    want = "".join(f"{p.name} {p.stat().st_mtime_ns}\n" for p in sources)
    if not stamp.exists() or stamp.read_text() != want:
        shutil.rmtree(home, ignore_errors=True)
        (home / "packages").mkdir(parents=True)
        for p in sources:
            shutil.copy2(p, home / "packages" / p.name)
        stamp.write_text(want)
    return home


def batch_questions() -> list[str]:
    """BATCH questions: the anthropic set's (the five synthetic packages' text) and the
    Django set's (bench/sets/django), in turn."""
    django = [json.loads(line)["question"] for line in (ROOT / "bench" / "sets" / "django" / "questions.jsonl")
              .read_text().splitlines() if line.strip()]
    mixed = [q for pair in zip(questions(), django, strict=False) for q in pair]
    return (mixed * (1 + BATCH // len(mixed)))[:BATCH]


def batch(home: Path, runs: int) -> tuple[Summary, Summary]:
    """ms per question of a BATCH-question batch over the home's packages, searched warm as
    `context search --batch` does, in `runs` runs (a fresh process each, so every run's
    questions are new to the packages); and the host's pace before each run."""
    code = ("import sys, time; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, sys.argv[2]); import latency\n"
            "from context_cli.search.engine import SearchOptions, search\n"
            "from context_cli.store.store import Store\n"
            "pkgs = Store().installed(); qs = latency.batch_questions(); o = SearchOptions(warm=True)\n"
            "search(qs[0], pkgs, o)\n"
            "t = time.perf_counter()\n"
            "for q in qs: search(q, pkgs, o)\n"
            "print((time.perf_counter() - t) * 1000 / len(qs))\n")
    times, paces = [], []
    for _ in range(runs):
        paces.append(pace_ms())
        out = subprocess.run([sys.executable, "-c", code, str(ROOT), str(ROOT / "bench")], env=bench_env(home),
                             check=True, capture_output=True, text=True)
        times.append(float(out.stdout.split()[-1]))
    return Summary.of(times), Summary.of(paces)


def cold(home: Path, args: list[str], runs: int) -> Summary:
    """Wall seconds of `context ARGS` in a fresh process, `runs` times.

    The checkout's bytecode is compiled first, as installing a wheel does: where
    PYTHONDONTWRITEBYTECODE is set (these sandboxes set it), each run would otherwise compile
    the package's modules from source, ~0.15 s that no installed copy pays.
    """
    compileall.compile_dir(str(ROOT / "context_cli"), quiet=1)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(context_cmd(*args), env=bench_env(home), check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return Summary.of(times)


def cold_query(home: Path, library: str, topics: list[str], runs: int) -> Summary:
    """Cold `context query LIBRARY TOPIC` seconds, cycling through `topics`, after one untimed
    query: the first in a home writes what the home remembers of the model (its fingerprint
    and vocabulary, see docs/performance.md "Cold query"), once, as a user's first query does."""
    cold(home, ["query", library, topics[0]], 1)
    times = []
    for i in range(runs):
        times.append(cold(home, ["query", library, topics[i % len(topics)]], 1).p50)
    return Summary.of(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--warm-only", action="store_true", help="only the warm in-process search")
    ap.add_argument("--batch", action="store_true", help="only the 200-question batch over six packages")
    ap.add_argument("--runs", type=int, default=5, help="runs of the batch")
    args = ap.parse_args()
    if args.batch:
        home = six_packages_home()
        per, pace = batch(home, args.runs)
        print(f"batch of {BATCH} over six packages: {per.p50:.2f} ms a question ({per.spread('ms', '.2f')})  "
              f"pace {pace.low:.1f}-{pace.high:.1f} ms  load {os.getloadavg()[0]:.1f}")
        return
    t0 = time.perf_counter()
    home = ten_packages_home()
    print(f"{N_PACKAGES} packages x {CHUNKS_PER_PACKAGE} sections ready in {time.perf_counter() - t0:.1f}s")
    for label, one in (("all 10 packages", False), ("one package", True)):
        print(f"warm search, {label:<16} {warm(home, one).line()}")
    if args.warm_only:
        return
    for label, cmd in (("context --help", ["--help"]), ("context query pkg0", ["query", "pkg0", questions()[0]])):
        s = cold(home, cmd, 7)
        print(f"cold {label:<20} p50 {s.p50 * 1000:.0f} ms  ({s.spread('s', '.3f')})  load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
