"""A wheel as a documentation source, for PyPI releases published without an sdist.

A wheel carries the project's README as the long description in `*.dist-info/METADATA`
(Markdown, reST or plain text, as its `Description-Content-Type` says) and the code, from
which the build reads the API (context_cli/apiref, with `ast`: nothing in a wheel is ever
imported or run, `.pth` files and `__init__.py` included). So a wheel gives its docs folder
where it ships one (rare), else its README plus the API: the ladder's README outcome, never
"docs".

Which wheel: the most generic one, so the choice is the same on every machine (pure-Python
`py3-none-any` first, then the widest ABI and platform), the smallest and then the first by
name among equals. It is downloaded, checked against the index's sha256 and unpacked by
`artefact.fetch_pypi` with the sdists' protections (sources/archive.py). The unpacked
`*.dist-info/` and `*.data/` folders are not code (apiref never walks names that are not
identifiers). `RECORD` is never read: the index's digest covers the whole file, and what
RECORD claims (paths, hashes) is not used for anything.
"""

from __future__ import annotations

import re
from email.parser import Parser
from email.policy import compat32
from pathlib import Path
from typing import Any

from .base import Fetched
from .unpacked import DOCS_FOLDERS, docs_path_in, has_docs

MAX_METADATA_BYTES = 4 * 1024 * 1024  # real METADATA with its README runs to a few hundred KB at most
# The README's file name by the metadata's content type; without one the core metadata spec
# says to try reST and fall back to plain text, which is what a `.txt` page gets (parse/).
README_FILES = {"text/markdown": "README.md", "text/x-rst": "README.rst", "text/plain": "README.txt"}
DEFAULT_README = "README.txt"
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")


def choose_wheel(files: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The wheel to read among a release's `files` (PyPI JSON entries), or None: not yanked
    first, then the most generic tags, then the smallest, then by file name."""
    ranked = []
    for f in files:
        name = f.get("filename")
        generality = _generality(name) if isinstance(name, str) else None
        if generality is not None:
            size = f.get("size") if isinstance(f.get("size"), int) else 1 << 62
            ranked.append(((bool(f.get("yanked")), generality, size, name), f))
    return min(ranked, key=lambda pair: pair[0])[1] if ranked else None


def _generality(filename: str) -> tuple[int, int, int] | None:
    """(platform, ABI, interpreter) ranks of a wheel's best tag, lower is more generic; None
    for a name that is not a wheel's."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    try:
        tags = parse_wheel_filename(filename)[3]
    except (InvalidWheelFilename, ValueError):
        return None
    return min(((t.platform != "any"), _ABI.get(t.abi, 2), _interpreter(t.interpreter)) for t in tags) \
        if tags else None


_ABI = {"none": 0, "abi3": 1}


def _interpreter(tag: str) -> int:
    """`py3*` (any Python 3) before one implementation's 3.x (`cp312`), before Python 2 only."""
    if tag.startswith("py3"):
        return 0
    if tag[2:3] == "3":
        return 1
    return 2 if tag.startswith("py") else 3


def wheel_layout(root: Path, wanted: str | None, label: str) -> Fetched:
    """What the build reads of the wheel unpacked at `root`: the docs path asked for, else a
    docs folder it ships, else the README from its METADATA, written beside `root` (in the
    same temp folder) as README.md/.rst/.txt by its content type; the code is the wheel."""
    found = docs_path_in(root, wanted, label) if wanted else _docs_folder(root)
    if found is not None:
        return Fetched(source_type="", source_url="", folder=root, docs_path=found, code=root,
                       notes=[f"docs from {found}/ in the wheel" if (root / found).is_dir() else f"docs from {found}"])
    readme = root.with_name("readme")
    readme.mkdir()
    got = metadata_readme(root)
    if isinstance(got, str):
        return Fetched(source_type="", source_url="", folder=readme, code=root,
                       notes=[f"no README ({got}); only the API read from its code"])
    text, content_type = got
    name = README_FILES.get(content_type or "", DEFAULT_README)
    (readme / name).write_text(text, "utf-8")
    said = content_type or "no content type: read as reST or plain text"
    return Fetched(source_type="", source_url="", folder=readme, docs_path=name, code=root,
                   notes=[f"README from the wheel's METADATA ({said})"])


def _docs_folder(root: Path) -> str | None:
    """A docs folder the wheel ships: at its root, else inside a top-level package."""
    places = [root, *sorted(p for p in root.iterdir() if p.is_dir() and _IDENTIFIER.match(p.name))]
    for place in places:
        for candidate in DOCS_FOLDERS:
            folder = place / candidate
            if folder.is_dir() and not folder.is_symlink() and has_docs(folder):
                return folder.relative_to(root).as_posix()
    return None


def metadata_readme(root: Path) -> tuple[str, str | None] | str:
    """(README text, content type) from the METADATA of the wheel unpacked at `root`, or why
    there is none."""
    metadata = _metadata_file(root)
    if metadata is None:
        return "the wheel has no single *.dist-info/METADATA"
    size = metadata.stat().st_size
    if size > MAX_METADATA_BYTES:
        return f"the wheel's METADATA is {size // 1_000_000} MB, over the {MAX_METADATA_BYTES // 1_000_000} MB cap"
    text, content_type = parse_metadata(metadata.read_bytes())
    return (text, content_type) if text is not None else "the wheel's METADATA has no long description"


def _metadata_file(root: Path) -> Path | None:
    """The METADATA of the one `*.dist-info` folder at the wheel's root (a wheel has exactly one)."""
    infos = [p for p in root.iterdir() if p.name.endswith(".dist-info") and p.is_dir()]
    if len(infos) != 1:
        return None
    path = infos[0] / "METADATA"
    return path if path.is_file() and not path.is_symlink() else None


def parse_metadata(raw: bytes) -> tuple[str | None, str | None]:
    """(long description, content type) of core metadata: the body (Metadata 2.1+), else the
    folded `Description` header of older versions. Only the headers are parsed as such: a
    body is text whatever a hostile `Content-Type` header says."""
    message = Parser(policy=compat32).parsestr(raw.decode("utf-8", "replace"), headersonly=True)
    body = message.get_payload()
    text = body if isinstance(body, str) and body.strip() else _unfold(str(message.get("Description") or ""))
    content_type = str(message.get("Description-Content-Type") or "").split(";", 1)[0].strip().lower() or None
    text = text.replace("\x00", "")
    return (text if text.strip() else None), content_type


def _unfold(value: str) -> str:
    """A `Description` header's text: its continuation lines lose the 8-space (or `       |`)
    indent that distutils and setuptools gave them."""
    lines = value.splitlines()
    out = lines[:1]
    for line in lines[1:]:
        out.append(line[8:] if line.startswith(("       |", " " * 8)) else line.lstrip())
    return "\n".join(out)
