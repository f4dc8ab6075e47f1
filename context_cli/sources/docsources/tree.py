"""Which folder of a repository holds its documentation: the tree with the most doc pages.

Projects keep their docs in many places: root `docs/` or `doc/`, `docs/source`, `website/docs`
(Docusaurus), `apps/docs` and `packages/docs` (monorepos), `src/content` (react.dev). The
folder npm's `repository.directory` names is where the package's code lives, not always its
docs: vite's are in the root `docs/` at `v8.2.0`, not in `packages/vite`. So every candidate
folder is scored by the documentation pages under it, read from the tree listing alone (a
blob-less clone lists every path without fetching a file).

The listing cannot tell a page from a stub, so once the tree is checked out `thin_pages` reads
its small pages: dayjs's `docs/` at `v1.11.19` is 24 pages of 80 bytes ("The documents are moved
to https://day.js.org") beside its translated READMEs, which is no documentation. Pages for the project's maintainers
(`docs/dev/`: pystache 0.6.0's release tooling) are not counted as a tree's pages at all.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

DOC_NAMES = frozenset({"docs", "doc", "documentation", "website"})
NESTED = ("website/docs", "apps/docs", "apps/website", "packages/docs", "docs/source", "docs/src",
          "docs/docs", "src/content", "www/docs", "site/docs", "website/content")
NOT_DOCS = frozenset({"node_modules", "test", "tests", "__tests__", "fixtures", "examples", "example",
                      "vendor", "third_party", "build", "dist", "i18n", "translations"})
# Folders of pages written for the project's maintainers (how to release, how to contribute).
FOR_MAINTAINERS = frozenset({"dev", "development", "contributing", "maintainers", "maintaining", "releasing"})
MAX_DEPTH = 3
MIN_PAGES = 1
STUB_BYTES = 200  # a page under this may hold a title and a link at most
MAX_SIZED = 20_000  # pages looked at; a tree past this is no stub folder


def best_tree(paths: Iterable[str], *, near: str | None = None,
              suffixes: Iterable[str] | None = None) -> str | None:
    """The candidate folder under which most of `paths` are doc pages, or None.

    `near` is the package's own folder in a monorepo (npm `repository.directory`): its docs
    and the repository's shared docs compete, other packages' folders do not.
    """
    if suffixes is None:
        from ..folder import DOC_SUFFIXES

        suffixes = DOC_SUFFIXES
    wanted = tuple(s.lower() for s in suffixes)
    near_path = PurePosixPath(near.strip("/")) if near and near.strip("/") else None
    counts: dict[str, int] = {}
    for text in paths:
        path = PurePosixPath(text)
        if not path.name.lower().endswith(wanted) or any(p.lower() in FOR_MAINTAINERS for p in path.parts[:-1]):
            continue
        for folder in _candidates(path, near_path):
            counts[folder] = counts.get(folder, 0) + 1
    # Equal counts: the deeper folder (website/docs over website, docs/source over docs) is the
    # docs tree itself, the shallower only holds it.
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], -len(PurePosixPath(kv[0]).parts), kv[0]))
    return ranked[0][0] if ranked and ranked[0][1] >= MIN_PAGES else None


def _candidates(path: PurePosixPath, near: PurePosixPath | None) -> list[str]:
    parts = path.parts[:-1]
    out = []
    for depth in range(1, min(len(parts), MAX_DEPTH) + 1):
        folder = PurePosixPath(*parts[:depth])
        if any(p.lower() in NOT_DOCS or p.startswith(".") for p in folder.parts):
            break
        name = folder.name.lower()
        inside_near = near is not None and (folder == near or near in folder.parents)
        elsewhere = near is not None and not inside_near and len(near.parts) > 1 \
            and near.parent in (folder, *folder.parents) and folder != near.parent \
            and folder.as_posix() not in NESTED
        if elsewhere:
            continue  # another package of the monorepo
        if name in DOC_NAMES or folder.as_posix() in NESTED or folder == near:
            out.append(folder.as_posix())
    return out


def thin_pages(root: Path, suffixes: Iterable[str] | None = None) -> tuple[int, int]:
    """(pages, stubs) of the checked-out docs tree at `root`. A stub is a page under
    `STUB_BYTES` that only points elsewhere: a link and no code (dayjs's "The documents are moved
    to https://day.js.org"); a short page with a snippet (day.js.org's own `as-json.md`, 142 bytes)
    or a sentence and no link is a page. Links are not followed; only files that small are read."""
    if suffixes is None:
        from ..folder import DOC_SUFFIXES

        suffixes = DOC_SUFFIXES
    wanted = tuple(s.lower() for s in suffixes)
    pages = stubs = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.lower().endswith(wanted):
                pages += 1
                stubs += _points_elsewhere(os.path.join(folder, name))
                if pages >= MAX_SIZED:
                    return pages, stubs
    return pages, stubs


def _points_elsewhere(path: str) -> bool:
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size >= STUB_BYTES:
            return False
        with open(path, "rb") as f:
            text = f.read(STUB_BYTES)
    except OSError:
        return False
    return b"://" in text and b"`" not in text
