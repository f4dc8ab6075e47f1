"""The docs-source resolver's parts that need no network: which metadata URLs may be followed,
how repository strings are read, and which folder of a repository is its docs tree."""

from __future__ import annotations

import pytest

from context_cli.sources.docsources.guard import UnsafeURL, check_public
from context_cli.sources.docsources.metadata import docs_site_of, normalise
from context_cli.sources.docsources.tree import best_tree


@pytest.mark.parametrize("url,why", [
    ("file:///etc", "only https:// and git:// URLs"),
    ("http://github.com/a/b.git", "only https:// and git:// URLs"),
    ("ssh://git@github.com/a/b.git", "only https:// and git:// URLs"),
    ("https://user:token@github.com/a/b.git", "may not carry credentials"),
    ("https://127.0.0.1/a/b.git", "loopback"),
    ("https://localhost:8080/a/b.git", "loopback"),
    ("https://10.1.2.3/a/b.git", "private"),
    ("https://169.254.169.254/latest/meta-data", "link-local"),
    ("https://[::1]/a.git", "loopback"),
    ("https://[::ffff:192.168.0.1]/a.git", "private"),
    ("https://0.0.0.0/a.git", "unspecified"),
    ("https://github.com:notaport/a.git", "not a valid URL"),
])
def test_metadata_urls_to_private_places_are_refused(url: str, why: str):
    with pytest.raises(UnsafeURL, match=why) as e:
        check_public(url)
    assert "token" not in str(e.value)


def test_public_https_and_unresolvable_hosts_pass():
    assert check_public("https://8.8.8.8/x.git")
    assert check_public("https://git.example.invalid/a/b.git")  # nothing to reach; git says so


@pytest.mark.parametrize("text,url", [
    ("git+ssh://git@github.com:react-icons/react-icons.git", "https://github.com/react-icons/react-icons.git"),
    ("git@github.com:a/b.git", "https://github.com/a/b.git"),
    ("git+https://github.com/a/b.git", "https://github.com/a/b.git"),
    ("git://github.com/a/b.git", "https://github.com/a/b.git"),
    ("ssh://git@gitlab.com/g/r.git", "https://gitlab.com/g/r.git"),
    ("github:a/b", "https://github.com/a/b.git"),
    ("http://github.com/ActiveState/appdirs", "https://github.com/ActiveState/appdirs"),  # appdirs 1.4.4
    ("git+http://gitlab.com/g/r.git", "https://gitlab.com/g/r.git"),
    ("http://example.org/a/b.git", "http://example.org/a/b.git"),  # not a forge: left for the guard to refuse
    ("a/b", "https://github.com/a/b.git"),
    ("file:///tmp/x", "file:///tmp/x"),  # left as it is, for the guard to refuse
])
def test_repository_strings_are_read_as_https_urls(text: str, url: str):
    assert normalise(text) == url


def test_the_docs_tree_is_the_one_with_most_pages():
    vite = ["README.md", "packages/vite/README.md", "packages/vite/src/index.ts", "packages/vite/LICENSE.md",
            *(f"docs/guide/p{i}.md" for i in range(30)), "docs/.vitepress/config.ts"]
    assert best_tree(vite, near="packages/vite") == "docs"
    site = ["README.md", "docs/index.md", *(f"website/docs/p{i}.mdx" for i in range(5))]
    assert best_tree(site) == "website/docs"
    mono = ["packages/widgets/docs/usage.md", *(f"packages/other/docs/p{i}.md" for i in range(9))]
    assert best_tree(mono, near="packages/widgets") == "packages/widgets/docs"
    assert best_tree(["README.md", "src/a.py", "tests/docs/x.md", "examples/docs/y.md"]) is None


def test_a_forge_or_index_page_is_no_docs_site():
    npm = {"versions": {"1.0.0": {"homepage": "https://github.com/a/b#readme"}}}
    assert docs_site_of("npm", npm, "1.0.0") is None
    pip = {"info": {"project_urls": {"Documentation": "https://www.github.com/a/b",
                                     "Docs": "https://b.readthedocs.io/"}}}
    assert docs_site_of("pip", pip, "1.0.0") == "https://b.readthedocs.io/"
    assert docs_site_of("pip", {"info": {"docs_url": "http://b.example.org/"}}, "1.0.0") is None


def test_the_catalogue_ships_inside_the_registry_package(monkeypatch: pytest.MonkeyPatch):
    """An installed wheel's ladder finds it with no CONTEXT_DEFINITIONS: it is the registry
    package's data (scripts/check_wheel.sh checks the built wheel itself)."""
    import tomllib
    from pathlib import Path

    import registry
    from context_cli.sources.docsources.catalogue import ENV, default_paths, load_catalogue, shipped

    monkeypatch.delenv(ENV, raising=False)
    assert default_paths() == [shipped()] and shipped().parent == Path(registry.__file__).resolve().parent
    pyproject = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    assert "packages.yaml" in pyproject["tool"]["setuptools"]["package-data"]["registry"]
    catalogue = load_catalogue()
    assert not catalogue.problems and catalogue.find("pip", "Flask_SQLAlchemy") is not None
