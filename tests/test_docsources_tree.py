"""Which docs tree the repository step takes: maintainers' pages are no docs tree, and a tree
that is mostly stubs once checked out (dayjs's "moved" pages) is refused, so the release falls to
its README instead of counting as documented (real git repository, tests/sync_fixtures.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from helpers import targz
from sync_fixtures import FORGE, World, git, world, world_parts  # noqa: F401 - fixtures

from context_cli.sources.docsources.ladder import resolve
from context_cli.sources.docsources.tree import STUB_BYTES, best_tree, thin_pages

MOVED = "# Moved\n\nThis page moved to [the site](https://example.org/).\n"


def test_maintainers_pages_are_no_docs_tree():
    pystache = ["README.md", "docs/dev/generate_changelog.rst", "docs/dev/pre-commit-usage.rst",
                "pystache/__init__.py"]
    assert best_tree(pystache) is None
    both = [*pystache, "docs/usage.rst", "docs/api.rst"]
    assert best_tree(both) == "docs"


def test_thin_pages_counts_the_short_pages_that_only_point_elsewhere(tmp_path: Path):
    (tmp_path / "en").mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (tmp_path / "en" / name).write_text(MOVED)
    (tmp_path / "README-fr.md").write_text("# Day\n\n" + "Une bibliothèque. " * 40)
    # day.js.org's own pages are this short, and they are pages
    (tmp_path / "as-json.md").write_text("---\ntitle: As JSON\n---\n\nTo serialize as an ISO 8601 string.\n\n"
                                         "```js\ndayjs('2019-01-25').toJSON() // see https://tc39.es\n```\n")
    (tmp_path / "display.md").write_text("# Display\n\nOnce parsing is done, you need some way to display it.\n")
    (tmp_path / "index.js").write_text("x")  # no doc page
    (tmp_path / "big.md").symlink_to("/dev/zero")  # never followed or read
    assert len(MOVED) < STUB_BYTES
    assert thin_pages(tmp_path) == (7, 3)


def _repository(world: World, name: str, pages: dict[str, str]) -> None:
    """An npm release whose tarball has only a README, its repository tagged v1.0.0 with `pages`."""
    repo = world.repo.parent / name
    if not repo.exists():
        git(world.repo.parent, "init", "-q", "-b", "main", str(repo))
        (repo / "README.md").write_text(f"# {name}\n")
        for path, text in pages.items():
            (repo / path).parent.mkdir(parents=True, exist_ok=True)
            (repo / path).write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "docs")
        git(repo, "tag", "v1.0.0")
        repo.with_name(name + ".git").symlink_to(name)
    tarball = targz({"package/package.json": json.dumps({"name": name}),
                     "package/README.md": f"# {name}\n\n## Usage\n\nCall `day()` to get a date.\n"})
    world.index.add(f"/tarballs/{name}-1.0.0.tgz", tarball)
    world.index.add(f"/{name}", {"name": name, "versions": {"1.0.0": {
        "repository": {"type": "git", "url": f"git+{FORGE}/{name}.git"},
        "dist": {"tarball": f"{world.index.url}/tarballs/{name}-1.0.0.tgz",
                 "shasum": hashlib.sha1(tarball).hexdigest()}}}})


def test_a_docs_tree_of_stubs_is_refused_and_the_readme_stands(world: World):
    pages = {f"docs/{lang}/{page}.md": MOVED for lang in ("en", "ja", "ko") for page in ("API", "I18n", "Plugin")}
    pages["docs/fr/README-fr.md"] = "# Day\n\n" + "Une bibliothèque de dates. " * 40
    _repository(world, "stubbed", pages)
    got = resolve("npm", "stubbed", "1.0.0")
    got.fetched.cleanup()
    assert got.step == "readme" and got.readme_only
    assert "repository: the docs tree docs/ at tag v1.0.0 is mostly stubs (9 of 10 pages point elsewhere)" in got.tried()


def test_a_docs_tree_with_some_short_pages_is_still_docs(world: World):
    guide = "# Guide\n\n## Formatting\n\nCall `day().format('YYYY')` to print the year. " + "More. " * 40
    _repository(world, "halfstub", {"docs/guide.md": guide, "docs/api.md": guide, "docs/moved.md": MOVED})
    got = resolve("npm", "halfstub", "1.0.0")
    try:
        assert got.step == "repository" and got.fetched.docs_path == "docs"
    finally:
        got.fetched.cleanup()
