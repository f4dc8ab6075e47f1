"""How faithfully real docs trees are read: pages, sections, tokens and what is left raw.

Builds each tree with the real builder (no vectors) exactly as `context add FOLDER --path SUB`
would, then reads the package back and counts: pages by kind, sections, tokens, sections with
code, and sections that still show markup their authors never meant readers to see (include
directives, attribute lists, Jinja, unresolved reference links, rendered-HTML chrome) or that a
docs tree should not hold (rendered HTML, `_sources/` copies, translations). Run it before and
after a parser change, on the same trees (unpacked sdists or repository snapshots).

    python bench/fidelity.py /tmp/keyring-25.7.0 --path docs
    python bench/fidelity.py ROOT --path docs --dump sections.jsonl   # every section, to read
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Raw text a reader should never see, by what it is.
RAW = {
    "snippet": re.compile(r"^\s*-{1,3}8<-{1,3}", re.M),
    "fastapi_include": re.compile(r"\{\*\s*\S+\s.*?\*\}|\{!\s*\S+?\s*!\}"),
    "attr_list": re.compile(r"\{:?\s*(?:[#.][\w-]+|[\w-]+=\S+)(?:\s+[^{}]*)?\}"),
    "jinja": re.compile(r"\{\{[^{}]*\}\}|\{%[^{}]*%\}"),
    "ref_link": re.compile(r"\]\[[\w.`~-]+\]"),
    "include_directive": re.compile(r"(?:literal)?include::"),
}
_CODE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$|`[^`\n]+`", re.M | re.S)  # fences and inline code
HTML_PAGE = re.compile(r"\.html?$")
SOURCES_COPY = re.compile(r"(^|/)_sources/|(^|/)_modules/")


def measure(folder: Path, path: str | None, dump: Path | None) -> dict[str, object]:
    """Build `folder` (narrowed to `path`) without vectors and count what the package holds."""
    from context_cli.build import BuildOptions, build
    from context_cli.sources.resolve import fetch_folder

    fetched = fetch_folder(folder)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "p.db"
        start = time.perf_counter()
        result = build(fetched, out, BuildOptions(name="bench", version="1.0.0", path=path, embed=False))
        seconds = time.perf_counter() - start
        db = sqlite3.connect(out)
        kinds = _kinds(db)
        rows = db.execute("SELECT doc_path, doc_title, section_title, content, tokens, has_code FROM chunks").fetchall()
        db.close()
    raw: Counter[str] = Counter()
    raw_sections = 0
    paths = set()
    for doc_path, _title, section, content, _tokens, _code in rows:
        paths.add(doc_path)
        prose = _CODE.sub(" ", content)  # code may hold any of these, as code
        found = [name for name, pattern in RAW.items() if pattern.search(prose) or pattern.search(section)]
        raw.update(found)
        raw_sections += bool(found)
    if dump:
        with dump.open("w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(dict(zip(("path", "title", "section", "content", "tokens", "code"), r, strict=True)),
                                   ensure_ascii=False) + "\n")
    return {
        "pages": result.pages, "sections": len(rows), "tokens": sum(r[4] for r in rows),
        "code_sections": sum(1 for r in rows if r[5]), "skipped": result.skipped,
        "kinds": dict(kinds), "html_pages": sum(1 for p in paths if HTML_PAGE.search(p)),
        "copies": sum(1 for p in paths if SOURCES_COPY.search(p)), "raw_sections": raw_sections, "raw": dict(raw),
        "seconds": round(seconds, 1),
    }


def _kinds(db: sqlite3.Connection) -> Counter[str]:
    """Pages per kind (packages from before `pages.kind` count as guides)."""
    try:
        return Counter(k for (k,) in db.execute("SELECT kind FROM pages"))
    except sqlite3.Error:
        return Counter({"guide": db.execute("SELECT COUNT(DISTINCT doc_path) FROM chunks").fetchone()[0]})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", type=Path)
    ap.add_argument("--path", help="narrow to this sub-folder, as `context add --path`")
    ap.add_argument("--dump", type=Path, help="write every section as JSON lines here")
    ap.add_argument("--label", help="name shown in the output (default: the folder's name)")
    args = ap.parse_args()
    counts = measure(args.folder, args.path, args.dump)
    print(json.dumps({"tree": args.label or args.folder.name, "path": args.path, **counts}))


if __name__ == "__main__":
    main()
