"""Which folder of a repository holds its documentation: the tree with the most doc pages.

Projects keep their docs in many places: root `docs/` or `doc/`, `docs/source`, `website/docs`
(Docusaurus), `apps/docs` and `packages/docs` (monorepos), `src/content` (react.dev). The
folder npm's `repository.directory` names is where the package's code lives, not always its
docs: vite's are in the root `docs/` at `v8.2.0`, not in `packages/vite`. So every candidate
folder is scored by the documentation pages under it, read from the tree listing alone (a
blob-less clone lists every path without fetching a file).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

DOC_NAMES = frozenset({"docs", "doc", "documentation", "website"})
NESTED = ("website/docs", "apps/docs", "apps/website", "packages/docs", "docs/source", "docs/src",
          "docs/docs", "src/content", "www/docs", "site/docs", "website/content")
NOT_DOCS = frozenset({"node_modules", "test", "tests", "__tests__", "fixtures", "examples", "example",
                      "vendor", "third_party", "build", "dist", "i18n", "translations"})
MAX_DEPTH = 3
MIN_PAGES = 1


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
        if not path.name.lower().endswith(wanted):
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
