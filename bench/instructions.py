"""Instructions a question costs the search thread, counted by callgrind: repeatable where
wall time on a shared machine is not (the same count twice, whatever else the machine does).

    python bench/instructions.py                       # ten 2,000-section packages, repeated questions
    python bench/instructions.py --pass first          # each question new to the packages
    python bench/instructions.py --home django         # the Django package alone
    python bench/instructions.py --home six            # latency.py's six packages and batch questions
    python bench/instructions.py --root ../other-checkout   # the same for another checkout
    python bench/instructions.py --cold                # a whole cold `context query` process
    python bench/instructions.py --cold --command "import numpy"   # what one import costs
    python bench/instructions.py --cold --python VENV/bin/python   # the wheel installed in VENV
    python bench/instructions.py --cold --dataclasses  # what making the query's dataclasses costs

It runs itself under `valgrind --tool=callgrind` (Debian's valgrind) and collects only inside
the measured searches: they are consumed by a `collections.deque`, and `--toggle-collect`
counts what runs inside `deque_extend`. Loading the packages, the warm-up and the helper
thread's matrix product are left out; the count is the search thread's work, what a
question waits for when the product runs beside it. Questions are the anthropic eval set's
(the ten-package home) or `django_topics.QUESTIONS`; the first five warm up.

`--cold` counts everything instead, from the interpreter's start to its exit: a fresh
`context query django@5.1.4 QUESTION` on the Django home (after one untimed query, which
writes what the home remembers of the model), both threads, with the checkout's bytecode
compiled as an installed wheel's is. `--command CODE` counts `python -c CODE` the same way,
for one import's share (less `--command pass`, Python's own start). `--dataclasses` counts,
of the same query, only what `dataclasses` spends making its classes (each one's generated
methods written out and compiled with `exec`); `--python` runs the query by another
interpreter, one whose environment has the wheel installed.
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


# `--dataclasses`: the query, with each class that `dataclasses` makes made inside `deque.extend`,
# where callgrind collects (nothing else on a query's path calls it).
IN_DATACLASSES = """import collections, dataclasses, runpy, sys
make = dataclasses._process_class
def counted(cls, *args):
    made = collections.deque(maxlen=1)
    made.extend(map(lambda _: make(cls, *args), (0,)))
    return made[0]
dataclasses._process_class = counted
sys.argv = ["context", *sys.argv[1:]]
runpy.run_module("context_cli", run_name="__main__", alter_sys=True)
"""


def cold(root: Path, code: str | None, question: str, python: Path | None = None, dataclasses: bool = False) -> int:
    """Instructions of one whole process: `context query` on the Django home, or `python -c code`;
    by `python` (an environment with the wheel installed: its own `context_cli`) when given;
    only those spent making dataclasses with `dataclasses`."""
    import compileall

    compileall.compile_dir(str(root / "context_cli"), quiet=1)
    place = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import build; "
                            "print(build.django_home())", str(root)],
                           check=True, cwd=HERE, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    env = {**os.environ, "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1", "CONTEXT_HOME": place,
           "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(root)}
    if python is not None:
        del env["PYTHONPATH"]
    query = ["query", "django@5.1.4", question]
    run = ["-c", code] if code is not None else ["-c", IN_DATACLASSES, *query] if dataclasses else ["-m", "context_cli", *query]
    args = [str(python or sys.executable), *run]
    where = root if python is None else place  # (not the checkout: `-c` would import its context_cli)
    subprocess.run(args, env=env, check=True, capture_output=True, cwd=where)
    only = ["--collect-atstart=no", "--toggle-collect=deque_extend*"] if dataclasses else []
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *only, *args],
                          env=env, capture_output=True, text=True, cwd=where)
    return _collected(done)


def _collected(done: subprocess.CompletedProcess[str]) -> int:
    """The instructions callgrind counted; else exit with the measured program's own last
    line of error (the end of stderr is valgrind's summary, which says only "I refs: 0")."""
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode == 0 and found:
        return int(found.group(1))
    own = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith("==")]
    sys.exit(f"callgrind failed: {own[-1] if own else f'exit status {done.returncode}'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--pass", dest="which", choices=["first", "again"], default="again")
    ap.add_argument("--home", choices=["ten", "six", "django"], default="ten")
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--root", type=Path, default=HERE.parent, help="the checkout whose search is counted")
    ap.add_argument("--cold", action="store_true", help="count a whole cold `context query` process")
    ap.add_argument("--command", help="with --cold: count `python -c COMMAND` instead")
    ap.add_argument("--question", default="how do I add a custom template filter", help="with --cold")
    ap.add_argument("--dataclasses", action="store_true", help="with --cold: only what making dataclasses costs "
                                                                  "(their generated methods, compiled with exec)")
    ap.add_argument("--python", type=Path, help="with --cold: this interpreter, whose environment has the wheel "
                                                "installed, instead of the checkout (--root builds the home)")
    ap.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed (Debian: apt-get install valgrind)")
    if args.cold:
        total = cold(args.root.resolve(), args.command, args.question, args.python, args.dataclasses)
        what = f"python -c {args.command!r}" if args.command is not None else f"cold query {args.question!r}"
        what += ", making dataclasses" if args.dataclasses else ", whole process"
        print(f"{what}: {total / 1e6:.1f} M instructions [{args.python or args.root}]")
        return
    if args.inside:
        measure(args.root.resolve(), args.home, args.which, args.questions)
        return
    subprocess.run([sys.executable, "-c", PREPARE, str(args.root.resolve()), args.home], check=True, cwd=HERE)
    cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=deque_extend*",
           "--callgrind-out-file=/dev/null", sys.executable, __file__, "--inside", "--pass", args.which,
           "--home", args.home, "--questions", str(args.questions), "--root", str(args.root)]
    env = {**os.environ, "PYTHONHASHSEED": "0", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    per = _collected(done) / args.questions
    what = {"ten": "ten 2,000-section packages", "six": "six packages (Django and five of the ten)"}.get(
        args.home, "the Django package")
    print(f"{what}, {args.which} pass, {args.questions} questions: {per / 1e6:.2f} M instructions a question "
          f"(search thread) [{args.root}]")


if __name__ == "__main__":
    main()
