"""Instructions a question costs the search thread, counted by callgrind: repeatable where
wall time on a shared machine is not (the same count twice, whatever else the machine does).

    python bench/instructions.py                       # ten 2,000-section packages, repeated questions
    python bench/instructions.py --pass first          # each question new to the packages
    python bench/instructions.py --home django         # the Django package alone
    python bench/instructions.py --home six            # latency.py's six packages and batch questions
    python bench/instructions.py --root ../other-checkout   # the same for another checkout

It runs itself under `valgrind --tool=callgrind` (Debian's valgrind) and collects only inside
the measured searches: they are consumed by a `collections.deque`, and `--toggle-collect`
counts what runs inside `deque_extend`. Loading the packages, the warm-up and the helper
thread's matrix product are left out; the count is the search thread's work, what a
question waits for when the product runs beside it. Questions are the anthropic eval set's
(the ten-package home) or `django_topics.QUESTIONS`; the first five warm up.
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


# The home is built (or found) before valgrind starts: a build under callgrind takes an age.
PREPARE = ("import sys; sys.path.insert(0, sys.argv[1]); import latency, build; "
           "{'ten': latency.ten_packages_home, 'six': latency.six_packages_home}.get(sys.argv[2], build.django_home)()")


def measure(root: Path, home: str, which: str, count: int) -> None:
    """The measured run (inside valgrind)."""
    sys.path.insert(0, str(root))
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import latency

    if home == "ten":
        questions, place = latency.questions(), latency.ten_packages_home()
    elif home == "six":
        questions, place = latency.batch_questions(), latency.six_packages_home()
    else:
        import build
        from django_topics import QUESTIONS

        questions, place = QUESTIONS * (1 + (count + 5) // len(QUESTIONS)), build.django_home()
    os.environ["CONTEXT_HOME"] = str(place)
    from context_cli.search.engine import SearchOptions, search
    from context_cli.store.store import Store

    # Warm packages, as `context serve` searches them (a checkout from before `warm` made them
    # so by searching each package twice).
    served = SearchOptions(warm=True) if hasattr(SearchOptions(), "warm") else SearchOptions()
    packages = Store(place / "packages").installed()
    for q in questions[:5]:
        search(q, packages, served)
    measured = questions[5:5 + count]
    if which == "again":
        for q in measured:
            search(q, packages, served)
    collections.deque(itertools.starmap(search, ((q, packages, served) for q in measured)), maxlen=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--pass", dest="which", choices=["first", "again"], default="again")
    ap.add_argument("--home", choices=["ten", "six", "django"], default="ten")
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--root", type=Path, default=HERE.parent, help="the checkout whose search is counted")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        measure(args.root.resolve(), args.home, args.which, args.questions)
        return
    subprocess.run([sys.executable, "-c", PREPARE, str(args.root.resolve()), args.home], check=True, cwd=HERE)
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=deque_extend*",
           "--callgrind-out-file=/dev/null", sys.executable, __file__, "--inside", "--pass", args.which,
           "--home", args.home, "--questions", str(args.questions), "--root", str(args.root)]
    env = {**os.environ, "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1"}
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode or not found:
        sys.exit(f"callgrind failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    per = int(found.group(1)) / args.questions
    what = {"ten": "ten 2,000-section packages", "six": "six packages (Django and five of the ten)"}.get(
        args.home, "the Django package")
    print(f"{what}, {args.which} pass, {args.questions} questions: {per / 1e6:.2f} M instructions a question "
          f"(search thread) [{args.root}]")


if __name__ == "__main__":
    main()
