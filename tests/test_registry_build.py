"""Definition -> package: pypi, npm, zip and git sources, all served or made locally.

PyPI and npm are a loopback HTTP server answering their JSON APIs with sdists and tarballs
built here; zips come from the same server; git repositories are made in temp dirs and
cloned over file://. The helpers here are shared with tests/test_publish.py.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import targz
from route_server import Routes, serving

from context_cli.package.reader import open_package
from context_cli.sources import artefact
from registry.build import build_definition
from registry.cli import main
from registry.definitions import DefinitionError, find_definition, load_definitions
from registry.fetch import MissingRef, remote_head

# ---- a loopback PyPI + npm + file host ---------------------------------------------------


Artefacts = Routes  # GET-only: path -> bytes; records every path asked for


@pytest.fixture
def artefacts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Artefacts]:
    """The server, with CONTEXT_PYPI_URL and CONTEXT_NPM_REGISTRY_URL pointing at it."""
    with serving(Artefacts()) as srv:
        monkeypatch.setenv("CONTEXT_PYPI_URL", srv.url)
        monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", srv.url)
        monkeypatch.setattr(artefact, "_sleep", lambda s: None)
        yield srv




def zipped(members: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return buf.getvalue()


def sdist(version: str) -> bytes:
    root = f"demo-{version}"
    return targz({
        f"{root}/PKG-INFO": f"Name: demo\nVersion: {version}\n",
        f"{root}/pyproject.toml": "[project]\nname = 'demo'\n",
        f"{root}/docs/index.md": f"# Demo {version}\n\nDemo {version} frobnicates widgets.\n\n"
                                 "## Install\n\nRun `pip install demo`.\n",
        f"{root}/docs/internal/notes.md": "# Internal\n\nSecret maintainer notes.\n",
        f"{root}/src/demo/__init__.py": "",
    })


def serve_pypi(srv: Artefacts, versions: tuple[str, ...] = ("1.0", "1.1")) -> None:
    """`demo` on PyPI with one sdist per version."""
    releases = {}
    for i, v in enumerate(versions):
        data = sdist(v)
        path = f"/files/demo-{v}.tar.gz"
        srv.add(path, data)
        releases[v] = [{"filename": f"demo-{v}.tar.gz", "packagetype": "sdist",
                        "url": srv.url + path, "yanked": False,
                        "upload_time_iso_8601": f"2024-0{i + 1}-01T00:00:00Z",
                        "digests": {"sha256": hashlib.sha256(data).hexdigest()}}]
    srv.add("/pypi/demo/json", {"info": {"name": "demo", "summary": "Demo from PyPI",
                                         "version": versions[-1]}, "releases": releases})


def serve_npm(srv: Artefacts, name: str, versions: tuple[str, ...] = ("2.0.0",)) -> None:
    """An npm package whose tarball has a docs folder."""
    found = {}
    for v in versions:
        data = targz({
            "package/package.json": json.dumps({"name": name, "version": v}),
            "package/README.md": f"# {name}\n\nReadme.\n",
            "package/docs/guide.md": f"# Guide\n\n## Widgets\n\n{name} {v} arranges widgets "
                                     "in a grid.\n",
            "package/docs/api/legacy.md": "# Legacy API\n\nOld calls.\n",
        })
        path = f"/tarballs/{name.replace('/', '-')}-{v}.tgz"
        srv.add(path, data)
        sri = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
        found[v] = {"name": name, "version": v, "description": f"{name} from npm",
                    "dist": {"tarball": srv.url + path, "integrity": sri}}
    srv.add("/" + name.replace("/", "%2F"),
            {"name": name, "versions": found, "dist-tags": {"latest": versions[-1]},
             "time": {v: "2024-05-01T00:00:00Z" for v in versions}})


def serve_zip(srv: Artefacts, version: str) -> None:
    root = f"pydocs-{version}-html"
    srv.add(f"/archives/pydocs-{version}.zip", zipped({
        f"{root}/index.html": f"<html><head><title>Pydocs {version}</title></head><body>"
                              f"<h1>Pydocs {version}</h1><p>The tutorial for release {version} "
                              "explains list comprehensions.</p></body></html>",
        f"{root}/whatsnew/changes.html": "<html><body><h1>What is new</h1><p>News.</p></body></html>",
        f"{root}/fr/index.html": "<html><body><h1>Bonjour</h1><p>Le tutoriel.</p></body></html>",
        "README.txt": "not docs",
    }))


# ---- git repositories made here ------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=env).stdout


def make_repo(root: Path, tags: tuple[str, ...] = ("v1.0.0", "v2.0.0")) -> Path:
    """A repository with docs/ (and docs/drafts/ to exclude), one commit and tag per version."""
    (root / "docs" / "drafts").mkdir(parents=True)
    git(root.parent, "init", "-q", "-b", "main", str(root))
    for tag in tags:
        version = tag.lstrip("v")
        (root / "docs" / "index.md").write_text(
            f"# Gadgets {version}\n\nGadgets {version} connect sprockets.\n\n"
            f"## Configure\n\nSet `gadget.level = {version!r}`.\n")
        (root / "docs" / "drafts" / "wip.md").write_text("# Draft\n\nUnfinished.\n")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"docs {version}")
        git(root, "tag", tag)
    return root


def commit_change(root: Path, text: str) -> str:
    (root / "docs" / "extra.md").write_text(f"# Extra\n\n{text}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "more docs")
    return git(root, "rev-parse", "HEAD").strip()


def write_yaml(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def doc_paths(db: Path) -> set[str]:
    with open_package(db) as pkg:
        return {r[0] for r in pkg.db.execute("SELECT DISTINCT doc_path FROM chunks")}


def meta(db: Path) -> dict[str, str]:
    with open_package(db) as pkg:
        return dict(pkg.meta)


def contents(db: Path) -> str:
    with open_package(db) as pkg:
        return "\n".join(r[0] for r in pkg.db.execute("SELECT content FROM chunks"))


# ---- tests ---------------------------------------------------------------------------------


def test_pypi_definition_builds_the_release_sdist_without_excluded_files(
        artefacts: Artefacts, tmp_path: Path) -> None:
    serve_pypi(artefacts)
    defs = load_definitions(write_yaml(tmp_path / "packages.yaml", """
pip:
  - name: demo
    description: Demo docs
    source: {type: pypi, exclude_paths: ["internal/**"]}
"""))
    result = build_definition(defs[0], "1.0", tmp_path / "out", embed=False)
    assert result.path == tmp_path / "out" / "pip__demo__1.0.db"
    m = meta(result.path)
    assert (m["registry"], m["name"], m["version"]) == ("pip", "demo", "1.0")
    assert (m["source_type"], m["source_url"]) == ("pypi", "pypi:demo==1.0")
    assert m["description"] == "Demo docs"
    assert doc_paths(result.path) == {"docs/index.md"}
    assert "Demo 1.0 frobnicates" in contents(result.path)
    assert any("exclude_paths" in n for n in result.notes)


def test_npm_definition_scoped_name_and_package_override(artefacts: Artefacts,
                                                         tmp_path: Path) -> None:
    serve_npm(artefacts, "@acme/widgets-core")
    defs = load_definitions(write_yaml(tmp_path / "packages.yaml", """
npm:
  - name: "@acme/widgets"
    versions:
      - source: {type: npm, package: "@acme/widgets-core", exclude_paths: ["api/**"]}
"""))
    result = build_definition(defs[0], "2.0.0", tmp_path / "out", embed=False)
    m = meta(result.path)
    assert (m["registry"], m["name"], m["version"]) == ("npm", "@acme/widgets", "2.0.0")
    assert m["source_url"] == "npm:@acme/widgets-core@2.0.0"
    assert m["description"] == "@acme/widgets-core from npm"  # the definition has none
    assert doc_paths(result.path) == {"docs/guide.md"}
    assert result.path.name == "npm__@acme%2Fwidgets__2.0.0.db"


def test_zip_definition_fills_version_in_url_and_docs_path(artefacts: Artefacts,
                                                            tmp_path: Path) -> None:
    serve_zip(artefacts, "3.12")
    defs = load_definitions(write_yaml(tmp_path / "packages.yaml", f"""
python:
  - name: pydocs
    versions:
      - versions: ["3.12"]
        source:
          type: zip
          url: "{artefacts.url}/archives/pydocs-{{version}}.zip"
          docs_path: "pydocs-{{version}}-html"
          exclude_paths: ["whatsnew/**"]
"""))
    result = build_definition(defs[0], "3.12", tmp_path / "out", embed=False)
    m = meta(result.path)
    assert (m["registry"], m["name"], m["version"], m["source_type"]) == (
        "python", "pydocs", "3.12", "zip")
    assert m["source_url"] == f"{artefacts.url}/archives/pydocs-3.12.zip"
    expected = hashlib.sha256(artefacts.routes["/archives/pydocs-3.12.zip"]).hexdigest()
    assert m["source_commit"] == f"sha256:{expected}"
    # whatsnew/ excluded by the definition, fr/ left out by lang (en), README outside docs_path
    assert doc_paths(result.path) == {"pydocs-3.12-html/index.html"}
    assert "list comprehensions" in contents(result.path)


def test_zip_without_its_docs_path_is_one_clear_error(artefacts: Artefacts,
                                                      tmp_path: Path) -> None:
    serve_zip(artefacts, "3.12")
    defs = load_definitions(write_yaml(tmp_path / "packages.yaml", f"""
python:
  - name: pydocs
    versions:
      - versions: ["3.12"]
        source: {{type: zip, url: "{artefacts.url}/archives/pydocs-{{version}}.zip", docs_path: html}}
"""))
    with pytest.raises(Exception, match="has no 'html' folder"):
        build_definition(defs[0], "3.12", tmp_path / "out", embed=False)


def test_git_definition_builds_the_tag_of_each_version(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "gadgets")
    defs = load_definitions(write_yaml(tmp_path / "packages.yaml", f"""
npm:
  - name: gadgets
    versions:
      - min_version: "1.0.0"
        source: {{type: git, url: "{repo.as_uri()}", docs_path: docs, exclude_paths: ["drafts/*"]}}
"""))
    result = build_definition(defs[0], "1.0.0", tmp_path / "out", embed=False)
    m = meta(result.path)
    assert (m["registry"], m["name"], m["version"], m["source_type"]) == (
        "npm", "gadgets", "1.0.0", "git")
    assert m["source_commit"] == git(repo, "rev-parse", "v1.0.0^{commit}").strip()
    assert m["source_url"] == "gadgets"  # never a local absolute path
    assert doc_paths(result.path) == {"docs/index.md"}
    assert "Gadgets 1.0.0 connect" in contents(result.path)
    assert "2.0.0" not in contents(result.path)


def test_git_tag_that_does_not_exist_is_missing_ref(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "gadgets")
    defs = load_definitions(write_yaml(tmp_path / "packages.yaml", f"""
npm:
  - name: gadgets
    versions:
      - min_version: "1.0.0"
        source: {{type: git, url: "{repo.as_uri()}", docs_path: docs}}
"""))
    with pytest.raises(MissingRef, match="no tag 'v9.0.0'"):
        build_definition(defs[0], "9.0.0", tmp_path / "out", embed=False)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_unversioned_git_builds_the_default_branch_as_latest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "gadgets")
    head = commit_change(repo, "Unreleased sprocket tuning.")
    defs = load_definitions(write_yaml(tmp_path / "packages.yaml", f"""
npm:
  - name: gadgets
    source: {{type: git, url: "{repo.as_uri()}", docs_path: docs}}
"""))
    assert remote_head(repo.as_uri()).ref == "main"
    assert remote_head(repo.as_uri()).commit == head
    assert remote_head(repo.as_uri(), "v1.0.0").commit == git(repo, "rev-parse", "v1.0.0").strip()
    result = build_definition(defs[0], None, tmp_path / "out", embed=False)
    m = meta(result.path)
    assert (m["version"], m["source_commit"]) == ("latest", head)
    assert "Unreleased sprocket tuning" in contents(result.path)
    with pytest.raises(DefinitionError, match="unversioned"):
        build_definition(defs[0], "1.0.0", tmp_path / "out", embed=False)


def make_site_repo(root: Path) -> Path:
    """A docs site's repository, untagged: one folder per major version on `main`, and an
    older layout kept on a `v3-docs` branch."""
    for major in ("4x", "5x"):
        (root / "content" / major).mkdir(parents=True)
        (root / "content" / major / "routing.md").write_text(
            f"# Routing in {major}\n\nRoutes in {major} take a path and a handler.\n")
    (root / "content" / "blog").mkdir()
    (root / "content" / "blog" / "news.md").write_text("# News\n\nWe moved.\n")
    git(root.parent, "init", "-q", "-b", "main", str(root))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "site")
    git(root, "checkout", "-q", "-b", "v3-docs")
    (root / "content" / "3x").mkdir()
    (root / "content" / "3x" / "routing.md").write_text("# Routing in 3x\n\napp.get registers a route.\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "old docs")
    git(root, "checkout", "-q", "main")
    return root


def test_a_docs_repository_range_reads_its_folder_or_branch_and_says_what_it_covers(tmp_path: Path) -> None:
    site = make_site_repo(tmp_path / "site")
    url = site.as_uri()
    defs = load_definitions(write_yaml(tmp_path / "packages.yaml", f"""
npm:
  - name: routes
    versions:
      - min_version: "5.0.0"
        docs_version: "5.x"
        source: {{type: git, url: "{url}", docs_path: content/5x}}
      - min_version: "4.0.0"
        max_version: "5.0.0"
        docs_version: "4.x"
        source: {{type: git, url: "{url}", docs_path: content, exclude_paths: ["5x/**", "blog/**"]}}
      - min_version: "3.0.0"
        max_version: "4.0.0"
        docs_version: "3.x"
        source: {{type: git, url: "{url}", ref: v3-docs, docs_path: content/3x}}
      - min_version: "1.0.0"
        max_version: "3.0.0"
        docs_version: "1.x"
        source: {{type: git, url: "{url}", ref: v1-docs}}
"""))
    four = build_definition(defs[0], "4.21.2", tmp_path / "out", embed=False)
    m = meta(four.path)
    assert (m["version"], m["docs_version"]) == ("4.21.2", "4.x")
    assert m["docs_ref"] == m["source_commit"] == git(site, "rev-parse", "main").strip()
    assert doc_paths(four.path) == {"content/4x/routing.md"}
    five = build_definition(defs[0], "5.1.0", tmp_path / "out", embed=False)
    assert "Routes in 5x" in contents(five.path) and meta(five.path)["docs_version"] == "5.x"
    three = build_definition(defs[0], "3.21.0", tmp_path / "out", embed=False)
    assert meta(three.path)["docs_ref"] == git(site, "rev-parse", "v3-docs").strip()
    assert "app.get registers a route" in contents(three.path)
    with pytest.raises(MissingRef, match="no branch or tag 'v1-docs'"):
        build_definition(defs[0], "1.2.0", tmp_path / "out", embed=False)


def test_versioned_definition_needs_a_version(tmp_path: Path) -> None:
    defs = load_definitions(write_yaml(tmp_path / "packages.yaml", """
pip:
  - name: demo
    source: {type: pypi}
"""))
    with pytest.raises(DefinitionError, match="give a version"):
        build_definition(defs[0], None, tmp_path / "out", embed=False)


def test_cli_build_picks_the_newest_release_and_names_the_file(artefacts: Artefacts,
                                                               tmp_path: Path) -> None:
    serve_pypi(artefacts)
    path = write_yaml(tmp_path / "packages.yaml", "pip:\n  - name: demo\n    source: {type: pypi}\n")
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["build", "pip/demo", "--out", str(out), "-d", str(path),
                                  "--no-embed"])
    assert r.exit_code == 0, r.output
    assert "Built pip/demo@1.1:" in r.output
    assert (out / "pip__demo__1.1.db").exists()
    r = CliRunner().invoke(main, ["build", "pip/demo", "1.0", "--out", str(out), "-d", str(path),
                                  "--no-embed"])
    assert r.exit_code == 0 and (out / "pip__demo__1.0.db").exists()


def test_cli_build_errors_are_one_line(artefacts: Artefacts, tmp_path: Path) -> None:
    serve_pypi(artefacts)
    path = write_yaml(tmp_path / "packages.yaml", "pip:\n  - name: demo\n    source: {type: pypi}\n")
    runner = CliRunner()
    for args, message in (
        (["build", "pip/nope"], "no definition for pip/nope"),
        (["build", "pip/demo", "7.0"], "no version 7.0 of demo on PyPI"),
        (["build", "demo"], "REGISTRY/NAME"),
    ):
        r = runner.invoke(main, [*args, "--out", str(tmp_path / "out"), "-d", str(path),
                                 "--no-embed"])
        assert r.exit_code != 0
        assert message in r.output, r.output
        assert "Traceback" not in r.output


def test_find_definition_for_scoped_npm_names(tmp_path: Path) -> None:
    defs = load_definitions(write_yaml(tmp_path / "p.yaml", """
npm:
  - name: "@acme/widgets"
    source: {type: npm}
"""))
    assert find_definition(defs, "npm/@acme/widgets").name == "@acme/widgets"


def test_embedding_is_on_by_default(artefacts: Artefacts, tmp_path: Path) -> None:
    serve_pypi(artefacts, ("1.0",))
    defs = load_definitions(write_yaml(tmp_path / "p.yaml",
                                       "pip:\n  - name: demo\n    source: {type: pypi}\n"))
    result = build_definition(defs[0], "1.0", tmp_path / "out")
    assert result.embedding_model and meta(result.path)["embedding_model"] == result.embedding_model


def test_exclude_paths_never_touch_a_folder_that_was_not_fetched(tmp_path: Path) -> None:
    from context_cli.errors import SourceError
    from context_cli.sources.base import Fetched
    from registry.fetch import drop_excluded

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "keep.md").write_text("# Mine\n")
    users = Fetched(source_type="folder", source_url="docs", folder=tmp_path / "docs")
    with pytest.raises(SourceError, match="fetched copy"):
        drop_excluded(users, ("*.md",))
    assert (tmp_path / "docs" / "keep.md").exists()


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_has_help_and_docs(name: str) -> None:
    out = CliRunner().invoke(main, [name, "--help"]).output
    assert "Usage:" in out and len(out.splitlines()) > 3
    docs = (Path(__file__).resolve().parents[1] / "docs" / "registry.md").read_text()
    assert f"context-registry {name}" in docs
