"""`context sync` end to end: the real CLI, the real registry server, a PyPI/npm stand-in
serving real artefacts, a real git repository; nothing reaches the internet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sync_fixtures import World, world, world_parts  # noqa: F401

from context_cli.store.store import Store
from context_cli.surfaces.cli import cli
from context_cli.sync.scope import find_docs_lock, project_specs


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["sync", *args], catch_exceptions=False)
    return result.exit_code, result.output


def sync_json(*args: str) -> tuple[int, dict]:
    code, out = run(*args, "--json")
    return code, json.loads(out)


def by_label(data: dict) -> dict[str, dict]:
    return {f"{r['registry']}/{r['name']}@{r['version']}": r for r in data["rows"]}


def npm_project(root: Path, deps: dict[str, str], lock_entries: dict[str, str]) -> Path:
    """A package.json plus a package-lock.json v3 installing `lock_entries` (name -> version)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps({"name": "app", "dependencies": deps}))
    packages = {"": {"name": "app", "dependencies": deps}}
    for name, version in lock_entries.items():
        packages[f"node_modules/{name}"] = {"version": version,
                                            "resolved": f"https://registry.npmjs.org/{name}/-/x-{version}.tgz"}
    (root / "package-lock.json").write_text(json.dumps({"name": "app", "lockfileVersion": 3, "packages": packages}))
    return root


def installed() -> set[str]:
    return {i.id.qualified for i in Store().installed()}


def test_sync_downloads_builds_records_then_is_a_no_op(world: World, tmp_path: Path):
    project = npm_project(tmp_path / "app", {"zod": "^3.23.0", "@tanstack/react-query": "^5.40.0",
                                             "readme-only": "^1.0.0", "local": "file:../local"},
                          {"zod": "3.23.8", "@tanstack/react-query": "5.40.0", "readme-only": "1.0.0"})
    (project / "requirements.txt").write_text("httpx==0.27.2\ndemo_lib==1.0.0 ; python_version >= '3'\n")
    code, data = sync_json(str(project))
    assert code == 0, json.dumps(data["rows"], indent=1)
    rows = by_label(data)
    assert rows["npm/zod@3.23.8"]["action"] == "downloaded"
    assert rows["npm/zod@3.23.8"]["source"] == world.server.url
    assert rows["npm/@tanstack/react-query@5.40.0"]["action"] == "downloaded"
    assert rows["pip/httpx@0.27.2"]["action"] == "downloaded"
    assert rows["pip/demo-lib@1.0.0"]["action"] == "built"
    assert rows["pip/demo-lib@1.0.0"]["source"] == "pypi:demo-lib==1.0.0"
    readme = rows["npm/readme-only@1.0.0"]
    assert readme["action"] == "built" and readme["source"] == "https://github.com/acme/readme-only.git#v1.0.0"
    assert readme["docs"] == "docs" and not readme["notes"]
    assert rows["npm/local@None"]["action"] == "skip" and rows["npm/local@None"]["notes"] == ["path: file:../local"]
    # filed under pip/npm, never local; exactly the locked versions (the server also has httpx 0.28.1)
    assert installed() == {"npm/zod@3.23.8", "npm/@tanstack/react-query@5.40.0", "npm/readme-only@1.0.0",
                           "pip/httpx@0.27.2", "pip/demo-lib@1.0.0"}
    # the git tag's docs folder was built, not the README
    with Store().open("npm/readme-only@1.0.0") as pkg:
        assert {c[0] for c in pkg.db.execute("SELECT doc_path FROM chunks")} == {"docs/guide.md"}

    lock = project / ".context" / "docs.lock"
    text = lock.read_text()
    entries = json.loads(text)["packages"]
    assert [(e["registry"], e["name"], e["version"]) for e in entries] == sorted(
        (e["registry"], e["name"], e["version"]) for e in entries)
    assert all(len(e["sha256"]) == 64 and e["size"] > 0 for e in entries)
    assert not list((project / ".context").glob("*.partial"))

    world.index.log.clear()
    code, out = run(str(project))
    assert code == 0 and "5 up to date" in out
    assert world.index.log == []  # nothing asked of the index
    assert lock.read_text() == text  # byte-identical, not rewritten
    (project / "src" / "deep").mkdir(parents=True)
    assert find_docs_lock(project / "src" / "deep") == lock
    assert project_specs(lock) == sorted(f"{e['registry']}/{e['name']}@{e['version']}" for e in entries)


def test_not_available_lists_versions_and_never_installs_another(world: World, tmp_path: Path):
    project = npm_project(tmp_path / "app", {"zod": "3.0.0", "nowhere": "1.0.0"},
                          {"zod": "3.0.0", "nowhere": "1.0.0"})
    code, data = sync_json(str(project), "--no-build")
    assert code == 1
    rows = by_label(data)
    assert rows["npm/zod@3.0.0"]["action"] == "not available"
    assert "the registry server has 3.23.8, 3.22.4" in rows["npm/zod@3.0.0"]["notes"]
    assert rows["npm/nowhere@1.0.0"]["action"] == "not available"
    assert installed() == set()
    assert json.loads((project / ".context" / "docs.lock").read_text())["packages"] == []


def test_build_failure_is_not_available_and_the_rest_still_sync(world: World, tmp_path: Path):
    project = tmp_path / "py"
    project.mkdir()
    (project / "requirements.txt").write_text("httpx==0.27.2\ndemo-lib==1.1.0\nhttpx==0.26.0\n")
    code, data = sync_json(str(project))
    assert code == 1
    rows = by_label(data)
    assert rows["pip/httpx@0.27.2"]["action"] == "downloaded"
    bad = rows["pip/demo-lib@1.1.0"]
    assert bad["action"] == "not available" and any("no sdist" in n for n in bad["notes"])
    # what was tried and why each step failed, not a list of versions that holds the one asked for
    said = " ".join(bad["notes"])
    for step in ("registry server: does not have it", "definition: none in the catalogue",
                 "repository: the index names no source repository", "artefact:", "site:"):
        assert step in said
    assert "1.1.0, 1.0.0" not in said
    assert installed() == {"pip/httpx@0.27.2"}
    missing = rows["pip/httpx@0.26.0"]  # not on the server, not on the index: both say what they have
    assert missing["action"] == "not available"
    assert "the registry server has 0.28.1, 0.27.2" in missing["notes"]


def test_range_without_lockfile_takes_newest_on_server(world: World, tmp_path: Path):
    project = tmp_path / "app"
    project.mkdir()
    (project / "package.json").write_text(json.dumps({"dependencies": {"zod": "~3.22.0"}}))
    (project / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["httpx>=0.27,<0.28"]\n')
    code, data = sync_json(str(project))
    assert code == 0
    rows = by_label(data)
    assert rows["npm/zod@3.22.4"]["wanted"] == "~3.22.0"
    assert "resolved from range ~3.22.0" in rows["npm/zod@3.22.4"]["notes"]
    assert rows["pip/httpx@0.27.2"]["action"] == "downloaded"
    code, data = sync_json(str(project), "--check")  # the range is settled by docs.lock, offline
    assert code == 0, data


def test_two_workspace_members_at_two_versions_are_both_synced(world: World, tmp_path: Path):
    project = tmp_path / "mono"
    project.mkdir()
    (project / "pnpm-lock.yaml").write_text(
        "lockfileVersion: '9.0'\n\nimporters:\n\n  apps/a:\n    dependencies:\n      zod:\n"
        "        specifier: ^3.22.0\n        version: 3.22.4\n\n  apps/b:\n    dependencies:\n      zod:\n"
        "        specifier: ^3.23.0\n        version: 3.23.8\n")
    code, data = sync_json(str(project))
    assert code == 0
    assert installed() == {"npm/zod@3.22.4", "npm/zod@3.23.8"}


def test_check_and_dry_run_change_nothing(world: World, tmp_path: Path):
    project = npm_project(tmp_path / "app", {"zod": "^3.23.0"}, {"zod": "3.23.8"})
    code, out = run(str(project), "--dry-run")
    assert code == 0 and "download" in out and "nothing was changed (--dry-run)" in out
    code, out = run(str(project), "--check")
    assert code == 1 and "missing" in out
    assert installed() == set() and not (project / ".context").exists()
    assert run(str(project))[0] == 0
    assert run(str(project), "--check")[0] == 0
    npm_project(project, {"zod": "^3.22.0"}, {"zod": "3.22.4"})  # the lockfile moves on
    code, data = sync_json(str(project), "--check")
    assert code == 1
    assert by_label(data)["npm/zod@3.22.4"]["action"] == "missing"
    assert "installed at 3.23.8 instead" in by_label(data)["npm/zod@3.22.4"]["notes"]
    assert any("docs.lock lists npm/zod@3.23.8" in p for p in data["problems"])


def test_unreachable_server_is_said_and_building_goes_on(world: World, tmp_path: Path, monkeypatch):
    from registry_fixtures import free_port

    monkeypatch.setenv("CONTEXT_REGISTRY_URL", f"http://127.0.0.1:{free_port()}")
    project = tmp_path / "py"
    project.mkdir()
    (project / "requirements.txt").write_text("demo-lib==1.0.0\nhttpx==0.27.2\n")
    code, data = sync_json(str(project))
    assert code == 1
    # said once above the table, not under every row
    assert "cannot reach registry server" in data["registry_server"]
    assert not any("cannot reach registry server" in n for r in data["rows"] for n in r["notes"])
    assert "cannot reach registry server" in run(str(project))[1].split("dependency")[0]
    rows = by_label(data)
    assert rows["pip/demo-lib@1.0.0"]["action"] == "built"
    assert rows["pip/httpx@0.27.2"]["action"] == "not available"
    assert installed() == {"pip/demo-lib@1.0.0"}


def test_parse_error_exit_2_one_line_nothing_changed(world: World, tmp_path: Path):
    project = npm_project(tmp_path / "app", {"zod": "^3.23.0"}, {"zod": "3.23.8"})
    (project / "requirements.txt").write_text("httpx==0.27.2\nthis is === not valid\n")
    code, out = run(str(project))
    assert code == 2
    assert out.strip().splitlines() == [out.strip()]
    assert out.startswith("Error: requirements.txt line 2: not a requirement")
    assert installed() == set() and not (project / ".context").exists()


def test_no_dependency_files_says_what_was_looked_for(tmp_path: Path):
    code, out = run(str(tmp_path))
    assert code == 2
    assert "no dependency files in" in out and "uv.lock" in out and "mix.lock" in out and "package.json" in out


def test_usage_errors_exit_2(tmp_path: Path):
    assert run(str(tmp_path / "nope"))[0] == 2
    assert run(str(tmp_path), "--check", "--dry-run")[0] == 2


@pytest.mark.parametrize("name", ["package-lock.json", "pnpm-lock.yaml", "yarn.lock", "uv.lock", "mix.lock"])
def test_binary_garbage_lockfile_is_one_line_exit_2(tmp_path: Path, name: str):
    (tmp_path / name).write_bytes(bytes(range(256)) * 64)
    code, out = run(str(tmp_path))
    assert code == 2 and out.startswith(f"Error: {name}") and len(out.strip().splitlines()) == 1


def test_mix_lock_installs_from_server_and_builds_from_the_tagged_repository(world: World, tmp_path: Path):
    project = tmp_path / "ex"
    project.mkdir()
    (project / "mix.lock").write_text(
        '%{\n  "jason": {:hex, :jason, "1.4.1", "af15", [:mix], [], "hexpm", "fbb0"},\n'
        '  "tiny_ex": {:hex, :tiny_ex, "1.0.0", "00aa", [:mix], [], "hexpm", "11bb"},\n'
        '  "gone": {:hex, :gone, "0.1.0", "00aa", [:mix], [], "hexpm", "11bb"},\n}\n')
    code, data = sync_json(str(project))
    assert code == 1
    rows = by_label(data)
    assert rows["hex/jason@1.4.1"]["action"] == "downloaded"
    tiny = rows["hex/tiny_ex@1.0.0"]
    assert tiny["action"] == "built" and tiny["source"] == "https://github.com/acme/readme-only.git#v1.0.0"
    assert rows["hex/gone@0.1.0"]["action"] == "not available"
    assert installed() == {"hex/jason@1.4.1", "hex/tiny_ex@1.0.0"}


def test_readme_only_is_the_last_resort_and_monorepo_tags_are_found(world: World, tmp_path: Path):
    project = npm_project(tmp_path / "app", {"readme-big": "2.1.0", "@acme/widgets": "2.0.0"},
                          {"readme-big": "2.1.0", "@acme/widgets": "2.0.0"})
    code, data = sync_json(str(project))
    assert code == 0, json.dumps(data["rows"], indent=1)
    rows = by_label(data)
    big = rows["npm/readme-big@2.1.0"]  # no repository named: the README is all there is
    assert big["action"] == "built" and big["source"] == "npm:readme-big@2.1.0"
    assert big["docs"] == "readme" and any(n.startswith("README only") for n in big["notes"])
    widgets = rows["npm/@acme/widgets@2.0.0"]  # npm `repository.directory` and a `name@version` tag
    assert widgets["action"] == "built" and widgets["source"] == "https://github.com/acme/mono.git#@acme/widgets@2.0.0"
    with Store().open("npm/@acme/widgets@2.0.0") as pkg:
        assert {c[0] for c in pkg.db.execute("SELECT doc_path FROM chunks")} == {"packages/widgets/docs/usage.md"}


def _npm_entry(world: World, name: str, repository: str) -> None:
    """An npm package whose tarball holds only a README, with `repository` in its metadata."""
    import hashlib

    from helpers import targz

    tarball = targz({"package/package.json": json.dumps({"name": name}),
                     "package/README.md": f"# {name}\n\nA parser.\n\n## Usage\n\nCall `load(path)` to read a file.\n"})
    world.index.add(f"/tarballs/{name}-1.0.0.tgz", tarball)
    world.index.add(f"/{name}", {"name": name, "versions": {"1.0.0": {
        "repository": {"type": "git", "url": repository},
        "dist": {"tarball": f"{world.index.url}/tarballs/{name}-1.0.0.tgz",
                 "shasum": hashlib.sha1(tarball).hexdigest()}}}})


def test_metadata_repositories_are_read_safely_and_one_bad_one_sinks_nothing(world: World, tmp_path: Path):
    """An scp-style URL (react-icons') is read as the https URL it means; a file:// or
    loopback repository named by metadata is refused in one line and never fetched."""
    _npm_entry(world, "scp-icons", "git+ssh://git@github.com:acme/readme-only.git")
    _npm_entry(world, "file-repo", f"git+{world.repo.as_uri()}")
    _npm_entry(world, "inner-repo", "git+https://127.0.0.1:9/acme/secret.git")
    deps = {"scp-icons": "1.0.0", "file-repo": "1.0.0", "inner-repo": "1.0.0"}
    project = npm_project(tmp_path / "app", deps, deps)
    code, data = sync_json(str(project))
    rows = by_label(data)
    assert code == 0 and data["docs_lock_written"]
    scp = rows["npm/scp-icons@1.0.0"]
    assert scp["docs"] == "docs" and scp["source"] == "https://github.com/acme/readme-only.git#v1.0.0"
    for name, why in (("file-repo", "only https:// and git:// URLs"), ("inner-repo", "loopback")):
        row = rows[f"npm/{name}@1.0.0"]
        assert row["docs"] == "readme" and any(why in n for n in row["notes"]), row
    assert "README only" in run(str(project), "--rebuild", "readme")[1]


def test_readme_only_is_its_own_outcome_and_the_accept_list_lets_check_pass(world: World, tmp_path: Path):
    project = npm_project(tmp_path / "app", {"readme-big": "2.1.0", "gone": "1.0.0"},
                          {"readme-big": "2.1.0", "gone": "1.0.0"})
    code, out = run(str(project))
    assert code == 1 and "(README only)" in out and "1 of them README only" in out
    entries = json.loads((project / ".context" / "docs.lock").read_text())["packages"]
    assert [e["docs"] for e in entries if e["name"] == "readme-big"] == ["readme"]
    assert run(str(project), "--check")[0] == 1
    (project / ".context" / "config").write_text('accept = ["npm/gone"]\n')
    code, data = sync_json(str(project), "--check")
    assert code == 0 and data["summary"]["accepted without docs"] == 1
    world.index.log.clear()
    code, data = sync_json(str(project), "--rebuild", "readme-big")
    assert code == 0 and by_label(data)["npm/readme-big@2.1.0"]["action"] == "built"
    assert world.index.log  # asked again


def test_a_readme_only_build_is_tried_again_only_with_a_new_definition(world: World, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch):
    """A definition that cannot help (it reads the same README-only tarball) must not rebuild
    the package on every sync; a changed definition is worth one more try."""
    from context_cli.sources.docsources.catalogue import ENV

    catalogue = tmp_path / "packages.yaml"
    catalogue.write_text("npm:\n  - name: readme-big\n    source: {type: npm}\n")
    monkeypatch.setenv(ENV, str(catalogue))
    project = npm_project(tmp_path / "app", {"readme-big": "2.1.0"}, {"readme-big": "2.1.0"})
    code, data = sync_json(str(project))
    assert code == 0 and by_label(data)["npm/readme-big@2.1.0"]["docs"] == "readme"
    (entry,) = json.loads((project / ".context" / "docs.lock").read_text())["packages"]
    assert entry["docs"] == "readme" and len(entry["tried"]) == 16
    code, data = sync_json(str(project))
    assert by_label(data)["npm/readme-big@2.1.0"]["action"] == "up to date"  # the same definition: not again
    catalogue.write_text("npm:\n  - name: readme-big\n    description: docs moved\n    source: {type: npm}\n")
    code, data = sync_json(str(project))
    row = by_label(data)["npm/readme-big@2.1.0"]
    assert row["action"] == "built" and any("definition is new" in n for n in row["notes"])


def test_a_wheel_only_release_gets_its_readme_and_api(world: World, tmp_path: Path):
    """No sdist on the index: the wheel's README (its METADATA) and the API read from its code,
    said as `api`, never as docs, and retried by later syncs as README-only packages are."""
    import hashlib

    wheel = "tomli-2.0.1-py3-none-any.whl"
    data = (Path(__file__).parent / "fixtures" / "wheels" / wheel).read_bytes()
    world.index.add(f"/files/{wheel}", data)
    world.index.add("/pypi/tomli/json", {"info": {"name": "tomli", "summary": "A lil' TOML parser", "version": "2.0.1"},
                                         "releases": {"2.0.1": [{"filename": wheel, "packagetype": "bdist_wheel",
                                                                 "url": f"{world.index.url}/files/{wheel}",
                                                                 "digests": {"sha256": hashlib.sha256(data).hexdigest()}}]}})
    project = tmp_path / "py"
    project.mkdir()
    (project / "requirements.txt").write_text("tomli==2.0.1\n")
    code, data_out = sync_json(str(project))
    row = by_label(data_out)["pip/tomli@2.0.1"]
    assert code == 0 and row["action"] == "built", row
    assert (row["docs"], row["source"]) == ("api", "pypi:tomli==2.0.1")
    entries = json.loads((project / ".context" / "docs.lock").read_text())["packages"]
    assert [e["docs"] for e in entries if e["name"] == "tomli"] == ["api"]
    with Store().open("pip/tomli@2.0.1") as pkg:
        assert pkg.meta["artefact"] == wheel
        assert {c[0] for c in pkg.db.execute("SELECT doc_path FROM chunks")} >= {"README.md"}
