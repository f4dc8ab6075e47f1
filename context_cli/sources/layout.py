"""What a docs tree's layout says about its files, beyond their names.

Three layouts decide what a folder build indexes, each found by structure, not by name alone:

- Rendered Sphinx output beside its sources. Sdists often ship both: alembic's `docs/` holds
  the HTML, `_sources/` copies and `docs/build/` (the sources, with `conf.py`); SQLAlchemy's
  `doc/` the HTML, `_modules/` source pages, `genindex.html` and `doc/build/`. An output folder
  is one holding `searchindex.js`, `.buildinfo` or `_sources/`. Its `_sources/`, `_modules/`,
  `_static/`, `_images/` and index pages are never docs; its HTML pages are skipped whenever a
  source tree (a folder with `conf.py` and pages) is in the build, so each page counts once.
- Translations. A folder whose name looks like a locale (`de`, `pt-BR`, `zh-hant`, FastAPI's
  `em`) and whose files mirror the English tree (half of its own at the same paths) is a
  translation: the English tree is its sibling `en` (one shared page is enough there), or
  else the folder it sits in (Starlight's `src/content/docs/{de,fr}/`; two shared pages at
  least, so that `docs/js/` beside `docs/index.md` stays). Docusaurus keeps them under `i18n/`.
- sphinx-gallery examples: a Sphinx `conf.py` that loads sphinx_gallery makes its example
  folders pages (matplotlib's user guide is `galleries/users_explain/*.py`). A gallery folder
  holds a header (`GALLERY_HEADER.rst`, `README.txt`/`.rst`, `index.rst`) and scripts whose
  docstring opens with an rst title (parse/gallery.py reads them).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

OUTPUT_MARKERS = ("searchindex.js", ".buildinfo", "_sources")
OUTPUT_ONLY_DIRS = frozenset({"_sources", "_modules", "_static", "_images", "_downloads"})
INDEX_PAGES = re.compile(r"^(genindex(-\w+)?|search|py-modindex|np-modindex|modindex)\.html?$", re.I)
HTML = (".html", ".htm")
LOCALE_SHAPE = re.compile(r"^[a-z]{2,3}(?:[-_][A-Za-z]{2,4})?$")
MIRROR_SHARE = 0.5  # of a locale folder's files found at the same path in the English tree
MIRROR_MIN = 2
GALLERY_HEADERS = ("GALLERY_HEADER.rst", "README.txt", "README.rst", "index.rst")
GALLERY_DEPTH = 4  # how deep below the project root gallery folders are looked for


def is_output_dir(names: Iterable[str]) -> bool:
    """A folder listing that is a rendered Sphinx build's output root."""
    return any(n in OUTPUT_MARKERS for n in names)


def is_source_dir(names: Iterable[str]) -> bool:
    """A folder listing with a Sphinx `conf.py` (the build's source folder)."""
    return "conf.py" in set(names)


def output_only(name: str) -> bool:
    """An entry of a rendered output folder that is never docs, sources or not (copies,
    highlighted module sources, assets, index and search pages)."""
    return name in OUTPUT_ONLY_DIRS or INDEX_PAGES.match(name) is not None


def translations(files: Iterable[PurePosixPath], wanted: str | None) -> set[PurePosixPath]:
    """The folders among `files`' parents that translate another folder (module docstring);
    a folder of the `wanted` language is never one."""
    files = list(files)
    under: dict[PurePosixPath, set[str]] = {}  # locale-shaped folder -> its files, relative to it
    kids: dict[PurePosixPath, set[str]] = {}  # folder -> its locale-shaped child folders
    for f in files:
        for k, part in enumerate(f.parts[:-1]):
            if LOCALE_SHAPE.match(part):
                folder = PurePosixPath(*f.parts[:k + 1])
                under.setdefault(folder, set()).add("/".join(f.parts[k + 1:]))
                kids.setdefault(folder.parent, set()).add(part)
    found: set[PurePosixPath] = set()
    for parent, names in kids.items():
        if parent.name == "i18n":  # Docusaurus: i18n/<locale>/docusaurus-plugin-content-docs/...
            found.update(parent / n for n in names if _language(n) != wanted)
            continue
        english = sorted(n for n in names if _language(n) == "en")
        reference = under[parent / english[0]] if english else _outside(files, parent, names)
        for name in names:
            if name in english or (wanted and _language(name) == wanted):
                continue
            own = under[parent / name]
            shared = len(own & reference)
            # Beside an `en` folder, one mirrored page is enough (FastAPI's `yo` has only its index).
            if shared >= (1 if english else MIRROR_MIN) and shared >= MIRROR_SHARE * len(own):
                found.add(parent / name)
    return found


def _outside(files: list[PurePosixPath], parent: PurePosixPath, children: set[str]) -> set[str]:
    """`parent`'s files outside its folders named in `children`, relative to `parent`."""
    out = set()
    for f in files:
        if parent.parts and f.parts[:len(parent.parts)] != parent.parts:
            continue
        rest = f.parts[len(parent.parts):]
        if len(rest) > 1 and rest[0] in children:
            continue
        out.add("/".join(rest))
    return out


def _language(name: str) -> str:
    return re.split(r"[-_]", name.lower(), maxsplit=1)[0]


def gallery_files(root: Path, skip: Iterable[Path], prune: frozenset[str]) -> Iterator[Path]:
    """sphinx-gallery scripts and headers under `root` (not under `skip`, nor in folders named
    in `prune` or hidden), at most GALLERY_DEPTH folders down."""
    skipped = {p.resolve() for p in skip}
    for dirpath, dirnames, filenames in os.walk(root):
        d = Path(dirpath)
        depth = len(d.relative_to(root).parts)
        dirnames[:] = sorted(n for n in dirnames if not n.startswith(".") and n.lower() not in prune
                             and (d / n).resolve() not in skipped and depth < GALLERY_DEPTH)
        header = next((n for n in GALLERY_HEADERS if n in filenames), None)
        if header is None:
            continue
        scripts = [d / n for n in sorted(filenames) if n.endswith(".py") and _is_gallery_script(d / n)]
        if scripts:
            yield d / header
            yield from scripts


def _is_gallery_script(path: Path) -> bool:
    """A Python file that opens with a docstring holding an rst title (sphinx-gallery's rule)."""
    from ..parse.gallery import is_gallery_script

    try:
        if path.is_symlink() or not stat.S_ISREG(path.stat().st_mode):  # a FIFO would block the read
            return False
        with path.open("rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return is_gallery_script(head)
