"""Build speed and package size on real docs trees (the docs folders inside PyPI sdists).

Downloads each sdist once into bench/out/sdists (PyPI only), then builds its docs folder
with and without embeddings and prints sections per second and package sizes.

    python bench/build.py                   # django flask click sqlalchemy
    python bench/build.py --only flask
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"
PROJECTS = {"django": "Django==5.1.4", "flask": "flask==3.1.0", "click": "click==8.1.8",
            "sqlalchemy": "SQLAlchemy==2.0.36"}


def sdist(requirement: str) -> Path:
    dest = OUT / "sdists"
    dest.mkdir(parents=True, exist_ok=True)
    name = requirement.split("==")[0].lower()
    found = [p for p in dest.glob("*.tar.gz") if p.name.lower().startswith(name.replace("-", "_"))
             or p.name.lower().startswith(name)]
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        requirement, "-d", str(dest)], check=True)
        found = [p for p in dest.glob("*.tar.gz") if p.name.lower().startswith(name.replace("-", "_"))
                 or p.name.lower().startswith(name)]
    return found[0]


def docs_tree(archive: Path) -> Path:
    target = OUT / "trees" / archive.name.removesuffix(".tar.gz").lower()
    if not target.exists():
        target.mkdir(parents=True)
        with tarfile.open(archive) as tf:
            tf.extractall(target, filter="data")
    return next(p for pattern in ("*/docs", "*/doc") for p in target.glob(pattern))


def measure(name: str, docs: Path, embed: bool) -> dict:
    from context_cli.build import BuildOptions, build
    from context_cli.sources.resolve import fetch_folder

    dest = Path(tempfile.mkdtemp()) / f"{name}.db"
    t0 = time.perf_counter()
    res = build(fetch_folder(docs), dest, BuildOptions(name=name, version="1.0.0", embed=embed))
    secs = time.perf_counter() - t0
    return {"sections": res.chunks, "pages": res.pages, "skipped": res.skipped, "seconds": secs,
            "size": dest.stat().st_size, "rate": res.chunks / secs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", choices=sorted(PROJECTS))
    args = ap.parse_args()
    os.environ.setdefault("CONTEXT_HOME", tempfile.mkdtemp(prefix="bench-home-"))
    sys.path.insert(0, str(ROOT))
    print(f"{'project':<11} {'pages':>5} {'skip':>4} {'sections':>8} {'lexical s/s':>11} {'hybrid s/s':>10} "
          f"{'size lex':>9} {'size hyb':>9} {'vectors add':>11}")
    for name in args.only or list(PROJECTS):
        docs = docs_tree(sdist(PROJECTS[name]))
        lex = measure(name, docs, embed=False)
        hyb = measure(name, docs, embed=True)
        extra = hyb["size"] / lex["size"] - 1
        print(f"{name:<11} {lex['pages']:>5} {lex['skipped']:>4} {lex['sections']:>8} {lex['rate']:>11.0f} "
              f"{hyb['rate']:>10.0f} {lex['size'] / 1e6:>8.2f}M {hyb['size'] / 1e6:>8.2f}M {extra:>10.0%}")


if __name__ == "__main__":
    main()
