"""Git sources against real repositories made in temp dirs and cloned over file://."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from web_fixtures import Route, Site, serve

from context_cli.build import BuildOptions, build
from context_cli.errors import SourceError
from context_cli.package.reader import open_package
from context_cli.sources.git import clean_url, newest_tag, parse_git_url, repo_name, version_from_ref
from context_cli.sources.resolve import SourceOptions, fetch_source


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def page(version: str) -> str:
    return (f"# Widgets {version}\n\nThe widget library at version {version} renders widgets quickly.\n\n"
            f"## Configure\n\nSet `widget.mode = \"v{version}-mode\"` before rendering any widget.\n")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("git") / "widgets"
    (root / "docs").mkdir(parents=True)
    (root / "src").mkdir()
    git(root.parent, "init", "-q", "-b", "main", str(root))
    (root / "pyproject.toml").write_text('[project]\nname = "widgets"\n')
    (root / "src" / "big.py").write_text("x = 1\n" * 1000)
    for version, tag in (("1.0.0", "v1.0.0"), ("2.0.0", "v2.0.0"), ("3.0.0-rc1", "v3.0.0-rc1")):
        (root / "docs" / "index.md").write_text(page(version))
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"docs {version}")
        git(root, "tag", tag)
    return root


def url(path: Path) -> str:
    return path.as_uri()


def test_no_tag_picks_newest_stable_and_says_so(repo: Path) -> None:
    fetched = fetch_source(url(repo))
    try:
        assert fetched.source_type == "git"
        assert fetched.version == "2.0.0"
        assert any("v2.0.0" in n for n in fetched.notes)
        assert fetched.name == "widgets"
        assert fetched.source_url == "widgets"  # never a local absolute path
        assert fetched.source_commit == git(repo, "rev-parse", "v2.0.0^{commit}").strip()
        text = (fetched.folder / "docs" / "index.md").read_text()
        assert "version 2.0.0" in text
        assert not (fetched.folder / "src").exists()  # sparse: only the docs folder
        tmp = fetched.temp_dirs[0]
    finally:
        fetched.cleanup()
    assert not tmp.exists()


def test_docs_path_at_the_root_checks_out_every_folder(repo: Path) -> None:
    # commander's docs are its README plus docs/: a definition's docs_path "." is the whole
    # tree, not the root's own files (which a cone-mode `sparse-checkout set .` would give)
    fetched = fetch_source(url(repo), SourceOptions(tag="v2.0.0", path="."))
    try:
        assert "version 2.0.0" in (fetched.folder / "docs" / "index.md").read_text()
        assert (fetched.folder / "src" / "big.py").is_file()
        assert (fetched.folder / "pyproject.toml").is_file()
    finally:
        fetched.cleanup()


def test_tag_picks_that_version_and_builds_its_content(repo: Path, tmp_path: Path) -> None:
    fetched = fetch_source(url(repo), SourceOptions(tag="v1.0.0"))
    try:
        assert fetched.version == "1.0.0"
        assert fetched.source_commit == git(repo, "rev-parse", "v1.0.0^{commit}").strip()
        result = build(fetched, tmp_path / "w.db", BuildOptions(embed=False))
    finally:
        fetched.cleanup()
    with open_package(result.path) as pkg:
        assert pkg.meta["version"] == "1.0.0"
        assert pkg.meta["source_type"] == "git"
        assert pkg.meta["source_url"] == "widgets"
        assert pkg.meta["source_commit"] == fetched.source_commit
        contents = " ".join(r[0] for r in pkg.db.execute("SELECT content FROM chunks"))
        paths = {r[0] for r in pkg.db.execute("SELECT doc_path FROM chunks")}
    assert "v1.0.0-mode" in contents and "2.0.0" not in contents
    assert paths == {"docs/index.md"}


def test_prerelease_only_when_asked(repo: Path) -> None:
    fetched = fetch_source(url(repo), SourceOptions(tag="v3.0.0-rc1"))
    try:
        assert fetched.version == "3.0.0-rc1"
        assert "3.0.0-rc1" in (fetched.folder / "docs" / "index.md").read_text()
    finally:
        fetched.cleanup()


def test_full_commit_id_as_ref(repo: Path) -> None:
    sha = git(repo, "rev-parse", "v1.0.0^{commit}").strip()
    fetched = fetch_source(url(repo), SourceOptions(tag=sha))
    try:
        assert fetched.source_commit == sha and fetched.version == sha[:12]
        assert "version 1.0.0" in (fetched.folder / "docs" / "index.md").read_text()
    finally:
        fetched.cleanup()


def test_path_option_narrows_checkout(repo: Path) -> None:
    fetched = fetch_source(url(repo), SourceOptions(tag="v2.0.0", path="src"))
    try:
        assert fetched.docs_path == "src"
        assert (fetched.folder / "src" / "big.py").exists()
    finally:
        fetched.cleanup()


def test_untagged_repo_builds_default_branch_as_latest(tmp_path: Path) -> None:
    root = tmp_path / "notags"
    (root / "docs").mkdir(parents=True)
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    (root / "docs" / "guide.md").write_text(page("0.0.1"))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "docs")
    fetched = fetch_source(url(root))
    try:
        assert fetched.version == "latest"
        assert any("no version tags" in n for n in fetched.notes)
        assert fetched.source_commit == git(root, "rev-parse", "HEAD").strip()
    finally:
        fetched.cleanup()


def test_monorepo_tags(tmp_path: Path) -> None:
    root = tmp_path / "mono"
    root.mkdir()
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    (root / "README.md").write_text(page("x"))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "docs")
    for tag in ("pkg@1.2.3", "pkg@1.10.0", "other@9.0.0-beta.1"):
        git(root, "tag", tag)
    fetched = fetch_source(url(root))
    try:
        assert fetched.version == "1.10.0"
    finally:
        fetched.cleanup()


def test_unknown_tag_is_one_clear_line(repo: Path) -> None:
    with pytest.raises(SourceError) as e:
        fetch_source(url(repo), SourceOptions(tag="v9.9.9"))
    msg = str(e.value)
    assert "v9.9.9" in msg and "\n" not in msg and str(repo.parent) not in msg


def test_a_server_missing_a_docs_file_is_said_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A partial clone whose checkout needs a blob the server lacks (a trimmed mirror): one line
    that says so, not "no branch named None"."""
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "docs" / "index.md").write_text(page("1.0.0"))
    (work / "docs" / "video.bin").write_bytes(b"frames" * 100)
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "docs")
    server = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(server))
    git(work, "push", "-q", str(server), "main")  # a few objects arrive loose
    blob = git(work, "rev-parse", "HEAD:docs/video.bin").strip()
    (server / "objects" / blob[:2] / blob[2:]).unlink()
    config = tmp_path / "gitconfig"
    config.write_text("[uploadpack]\n\tallowFilter = true\n\tallowAnySHA1InWant = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    with pytest.raises(SourceError) as e:
        fetch_source(url(server), SourceOptions(tag="main", path="docs"))
    assert str(e.value).startswith("server: the server cannot send object")  # the repository, no temp dir
    assert "None" not in str(e.value)


def test_a_docs_trees_media_are_never_fetched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Screenshots and recordings are no pages: a trimmed mirror that lacks one (vitest's demo
    GIF, cva's 4K wallpaper) still gives the docs; a folder named like a glob is read literally."""
    work = tmp_path / "work"
    (work / "docs" / "public").mkdir(parents=True)
    (work / "docs" / "[lang]").mkdir()
    (work / "docs" / "index.md").write_text(page("1.0.0"))
    (work / "docs" / "[lang]" / "guide.md").write_text(page("1.0.0"))
    (work / "docs" / "public" / "demo.GIF").write_bytes(b"GIF89a" * 100)
    (work / "docs" / "public" / "shot.Png").write_bytes(b"\x89PNG" * 100)
    (work / "docs" / "public" / "logo.svg").write_text("<svg/>")
    (work / "docs" / "l").mkdir()  # what an unescaped `docs/[lang]` glob would also take
    (work / "docs" / "l" / "x.md").write_text("# x\n")
    (work / "README.md").write_text("# widgets\n")
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "docs")
    server = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(server))
    git(work, "push", "-q", str(server), "main")
    for media in ("demo.GIF", "shot.Png"):
        blob = git(work, "rev-parse", f"HEAD:docs/public/{media}").strip()
        (server / "objects" / blob[:2] / blob[2:]).unlink()
    config = tmp_path / "gitconfig"
    config.write_text("[uploadpack]\n\tallowFilter = true\n\tallowAnySHA1InWant = true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    for path in ("docs", "docs/[lang]"):
        fetched = fetch_source(url(server), SourceOptions(tag="main", path=path))
        try:
            files = {p.relative_to(fetched.folder).as_posix() for p in fetched.folder.rglob("*")
                     if p.is_file() and ".git" not in p.parts}
            assert "README.md" in files and "docs/[lang]/guide.md" in files
            assert ("docs/l/x.md" in files) == (path == "docs")
            assert "docs/public/demo.GIF" not in files and "docs/public/shot.Png" not in files
            assert ("docs/public/logo.svg" in files) == (path == "docs")
        finally:
            fetched.cleanup()


def test_folder_that_is_not_a_repo(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.md").write_text("# A\n\ntext text text text text text text text text\n")
    with pytest.raises(SourceError) as e:
        fetch_source(url(plain))
    assert "not a git repository" in str(e.value)
    assert "\n" not in str(e.value)


def test_repo_without_docs_fails_to_build(tmp_path: Path) -> None:
    root = tmp_path / "nodocs"
    (root / "src").mkdir(parents=True)
    git(tmp_path, "init", "-q", "-b", "main", str(root))
    (root / "src" / "main.py").write_text("print('hi')\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "code")
    fetched = fetch_source(url(root))
    try:
        with pytest.raises(SourceError) as e:
            build(fetched, tmp_path / "out.db", BuildOptions(embed=False))
    finally:
        fetched.cleanup()
    assert "no documentation" in str(e.value)
    assert not (tmp_path / "out.db").exists()


def test_private_http_repo_fails_fast_without_prompting(tmp_path: Path) -> None:
    site = Site()
    site.routes["/private.git/info/refs"] = Route(
        b"auth", status=401, content_type="text/plain", headers={"WWW-Authenticate": 'Basic realm="git"'})
    with serve(site) as base:
        with pytest.raises(SourceError) as e:
            fetch_source(base + "/private.git", SourceOptions(tag="v1"))
    assert "denied" in str(e.value) or "credentials" in str(e.value)


def test_parse_forge_urls() -> None:
    s = parse_git_url("https://github.com/pallets/flask/tree/3.0.x/docs")
    assert (s.url, s.ref, s.path) == ("https://github.com/pallets/flask.git", "3.0.x", "docs")
    s = parse_git_url("https://gitlab.com/group/sub/proj/-/tree/v2.1.0/doc/api")
    assert (s.url, s.ref, s.path) == ("https://gitlab.com/group/sub/proj.git", "v2.1.0", "doc/api")
    s = parse_git_url("https://bitbucket.org/team/repo/src/main/docs")
    assert (s.url, s.ref, s.path) == ("https://bitbucket.org/team/repo.git", "main", "docs")
    s = parse_git_url("https://codeberg.org/forgejo/forgejo/src/branch/forgejo/docs")
    assert (s.url, s.ref, s.path) == ("https://codeberg.org/forgejo/forgejo.git", "forgejo", "docs")
    assert parse_git_url("git@github.com:pallets/flask.git").url == "git@github.com:pallets/flask.git"
    assert parse_git_url("ssh://git@example.com/x/y.git").url == "ssh://git@example.com/x/y.git"
    assert parse_git_url("https://git.example.com/x/y.git").url == "https://git.example.com/x/y.git"
    assert parse_git_url("https://docs.example.com/guide/") is None
    assert parse_git_url("pypi:flask") is None


def test_clean_url_and_names() -> None:
    assert clean_url("https://user:token@github.com/o/r.git?x=1") == "https://github.com/o/r.git"
    assert clean_url("file:///home/me/secret/project/widgets") == "widgets"
    assert repo_name("git@github.com:pallets/Flask.git") == "flask"


@pytest.mark.parametrize("ref,version", [
    ("v1.2.3", "1.2.3"), ("pkg@1.2.3", "1.2.3"), ("@scope/pkg@2.0.0", "2.0.0"),
    ("release-1.2", "1.2"), ("foo2-1.0", "1.0"), ("v3.0.0-rc1", "3.0.0-rc1"),
    ("python-3.12.0", "3.12.0"), ("main", None), ("dev1", None),
])
def test_version_from_ref(ref: str, version: str | None) -> None:
    assert version_from_ref(ref) == version


def test_newest_tag_prefers_stable() -> None:
    assert newest_tag(["v1.9.0", "v1.10.0", "v2.0.0rc1", "nightly"])[:2] == ("v1.10.0", "1.10.0")
    assert newest_tag(["v2.0.0rc1", "v2.0.0rc2"]) == ("v2.0.0rc2", "2.0.0rc2", True)
    assert newest_tag(["nightly"]) is None


def test_an_untrusted_clone_fetches_the_docs_under_the_same_guard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The partial clone fetches the files' contents only when the checkout is narrowed to the
    docs tree: that step's git processes (and the fetch they start) carry the untrusted options
    too, read here from git's own trace of its config parameters."""
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "docs" / "index.md").write_text(page("1.0.0"))
    git(tmp_path, "init", "-q", "-b", "main", str(work))
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", "docs")
    config = tmp_path / "gitconfig"
    config.write_text("[uploadpack]\n\tallowFilter = true\n\tallowAnySHA1InWant = true\n")
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("CONTEXT_GIT_ALLOW_PROTOCOL", "file")
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    monkeypatch.setenv("GIT_TRACE2_CONFIG_PARAMS", "http.followRedirects")
    fetch_source(url(work), SourceOptions(tag="main", untrusted=True))
    import json

    events = [json.loads(line) for line in trace.read_text().splitlines()]
    guarded = {e["sid"] for e in events if e.get("event") == "def_param"
               and e.get("param", "").lower() == "http.followredirects" and e.get("value") == "false"}
    steps = {e["sid"]: e["argv"] for e in events if e.get("event") == "start"
             and ("sparse-checkout" in e["argv"] or "fetch" in e["argv"])}
    assert any("sparse-checkout" in argv for argv in steps.values())
    assert steps and set(steps) <= guarded, {sid: argv for sid, argv in steps.items() if sid not in guarded}
