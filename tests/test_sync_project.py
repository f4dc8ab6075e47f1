"""Finding and reading a project's dependency files: lockfiles over manifests, workspaces,
nested projects, and hostile files read in bounded time."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from context_cli.sync.model import LockfileError
from context_cli.sync.project import NoDependencyFiles, read_project

FIX = Path(__file__).parent / "fixtures" / "lockfiles"


def names(project_deps: list) -> set[tuple[str, str, str | None]]:
    return {(d.registry, d.name, d.version) for d in project_deps if not d.skip}


def test_uv_workspace_member_is_read_through_the_root_lock():
    project = read_project(FIX / "uv")
    assert project.files == ["uv.lock"]
    assert ("pip", "pydantic", "2.9.2") in names(project.deps)
    assert all(d.direct for d in project.deps)
    every = read_project(FIX / "uv", transitive=True)
    assert {("pip", "anyio", "4.6.2.post1"), ("pip", "sniffio", "1.3.1")} <= names(every.deps)


def test_poetry_pipenv_pdm_use_their_manifests_for_direct():
    assert read_project(FIX / "poetry").files == ["poetry.lock", "pyproject.toml"]
    assert ("pip", "asgiref", "3.7.2") not in names(read_project(FIX / "poetry").deps)
    assert read_project(FIX / "pipenv").files == ["Pipfile", "Pipfile.lock"]
    assert names(read_project(FIX / "pdm").deps) == {("pip", "fastapi", "0.110.0"), ("pip", "sqlalchemy", "2.0.28"),
                                                     ("pip", "pytest-asyncio", "0.23.5")}


def test_yarn_berry_workspace_manifests_found_from_the_root():
    project = read_project(FIX / "yarn-berry")
    assert project.files == ["yarn.lock"]
    assert names(project.deps) == {("npm", "lodash", "4.17.21"), ("npm", "fastify", "4.28.1"),
                                   ("npm", "dayjs", "1.10.0"), ("npm", "axios", "1.7.2")}


def test_mix_project():
    project = read_project(FIX / "mix")
    assert project.files == ["mix.exs", "mix.lock"]
    assert ("hex", "phoenix", "1.7.14") in names(project.deps)


def test_nested_projects_each_read_same_library_at_two_versions(tmp_path):
    root = tmp_path / "repo"
    shutil.copytree(FIX / "pnpm-v9", root / "web")
    shutil.copytree(FIX / "uv", root / "api")
    (root / "node_modules" / "x").mkdir(parents=True)  # installed packages are never read
    (root / "node_modules" / "x" / "package-lock.json").write_text("garbage")
    project = read_project(root)
    assert project.files == ["api/uv.lock", "web/pnpm-lock.yaml", "web/pnpm-workspace.yaml"]
    got = names(project.deps)
    assert {("npm", "zod", "3.22.4"), ("npm", "zod", "3.23.8"), ("pip", "httpx", "0.27.2")} <= got


def test_package_manager_field_picks_the_lockfile(tmp_path):
    shutil.copytree(FIX / "yarn-classic", tmp_path, dirs_exist_ok=True)
    (tmp_path / "package-lock.json").write_text('{"lockfileVersion": 3, "packages": {"": {}}}')
    assert read_project(tmp_path).files == ["yarn.lock"]  # pnpm, yarn, bun, then npm by default
    manifest = json.loads((tmp_path / "package.json").read_text())
    (tmp_path / "package.json").write_text(json.dumps({**manifest, "packageManager": "npm@10.8.1"}))
    assert read_project(tmp_path).files == ["package-lock.json"]


def test_manifest_without_lockfile_gives_ranges(tmp_path):
    (tmp_path / "package.json").write_text(json.dumps({"workspaces": ["pkgs/*"], "dependencies": {"react": "^18"}}))
    (tmp_path / "pkgs" / "a").mkdir(parents=True)
    (tmp_path / "pkgs" / "a" / "package.json").write_text(json.dumps(
        {"name": "a", "dependencies": {"vue": "~3.4.0", "b": "workspace:*"}}))
    project = read_project(tmp_path)
    assert {(d.name, d.wanted) for d in project.deps if not d.skip} == {("react", "^18"), ("vue", "~3.4.0")}
    assert project.files == ["package.json", "pkgs/a/package.json"]


def test_nothing_to_read(tmp_path):
    (tmp_path / "README.md").write_text("hi")
    with pytest.raises(NoDependencyFiles, match=r"looked for uv.lock, poetry.lock, .*package.json, mix.lock"):
        read_project(tmp_path)


def test_deeply_nested_json_is_refused_quickly(tmp_path):
    (tmp_path / "package-lock.json").write_text('{"lockfileVersion": 3, "packages": ' + "[" * 200_000
                                                + "]" * 200_000 + "}")
    start = time.monotonic()
    with pytest.raises(LockfileError, match="package-lock.json"):
        read_project(tmp_path)
    assert time.monotonic() - start < 5


def test_deeply_nested_yaml_is_refused_quickly(tmp_path):
    (tmp_path / "pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\nimporters: " + "[" * 50_000 + "]" * 50_000)
    start = time.monotonic()
    with pytest.raises(LockfileError, match="pnpm-lock.yaml"):
        read_project(tmp_path)
    assert time.monotonic() - start < 10


def test_50_mb_lockfile_is_read_in_bounded_time(tmp_path):
    filler = "x" * (50 * 1024 * 1024)
    (tmp_path / "package-lock.json").write_text(json.dumps(
        {"lockfileVersion": 3, "packages": {"": {"dependencies": {"a": "^1"}},
                                            "node_modules/a": {"version": "1.0.0", "description": filler}}}))
    start = time.monotonic()
    assert names(read_project(tmp_path).deps) == {("npm", "a", "1.0.0")}
    assert time.monotonic() - start < 10


def test_oversized_lockfile_is_refused_without_reading(tmp_path):
    with open(tmp_path / "yarn.lock", "wb") as f:
        f.truncate(65 * 1024 * 1024)  # sparse: costs no disk
    with pytest.raises(LockfileError, match=r"^yarn.lock: is \d+ bytes, over the"):
        read_project(tmp_path)


def test_requirements_folder_layout(tmp_path):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements" / "base.txt").write_text("Django==5.0.6\n")
    (tmp_path / "requirements" / "dev.txt").write_text("-r base.txt\npytest==8.2.0\n")
    project = read_project(tmp_path)
    assert project.files == ["requirements/base.txt", "requirements/dev.txt"]
    assert names(project.deps) == {("pip", "django", "5.0.6"), ("pip", "pytest", "8.2.0")}


def test_binary_bun_lockb_is_said_and_package_json_ranges_used(tmp_path):
    (tmp_path / "bun.lockb").write_bytes(b"#!/usr/bin/env bun\nbun-lockfile-format-v0\n\x00\x01\x02")
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"hono": "^4.4.0"}}))
    project = read_project(tmp_path)
    assert [(d.name, d.wanted) for d in project.deps] == [("hono", "^4.4.0")]
    assert project.notes and project.notes[0].startswith("bun.lockb is binary and not read")


def test_npm_shrinkwrap_is_read_like_package_lock(tmp_path):
    shutil.copy(FIX / "npm-v1" / "package-lock.json", tmp_path / "npm-shrinkwrap.json")
    shutil.copy(FIX / "npm-v1" / "package.json", tmp_path / "package.json")
    project = read_project(tmp_path)
    assert project.files == ["npm-shrinkwrap.json"]
    assert names(project.deps) == {("npm", "express", "4.17.1"), ("npm", "lodash-es", "4.17.21"),
                                   ("npm", "mocha", "8.4.0")}


def test_test_fixture_and_ignored_trees_are_skipped_unless_included(tmp_path: Path):
    """poetry's own tests/fixtures/incompatible_lock/poetry.lock is no dependency of poetry."""
    from context_cli.sync.project import read_project

    (tmp_path / "requirements.txt").write_text("click==8.1.7\n")
    bad = tmp_path / "tests" / "fixtures" / "incompatible_lock"
    bad.mkdir(parents=True)
    (bad / "poetry.lock").write_text("this is [not toml\n")
    (tmp_path / "examples" / "demo").mkdir(parents=True)
    (tmp_path / "examples" / "demo" / "requirements.txt").write_text("flask==3.0.0\n")
    (tmp_path / "examples" / "demo" / "uv.lock").write_text("version = 1\n")
    (tmp_path / "generated" / "app").mkdir(parents=True)
    (tmp_path / "generated" / "app" / "requirements.txt").write_text("django==5.0\n")
    (tmp_path / "generated" / "app" / "poetry.lock").write_text("")
    (tmp_path / ".gitignore").write_text("# out\n/generated/\n")
    project = read_project(tmp_path)
    assert [d.name for d in project.deps] == ["click"] and not project.notes
    project = read_project(tmp_path, include=("tests",))  # the fixture is a sub-project: a note, not an error
    assert [d.name for d in project.deps] == ["click"]
    assert len(project.notes) == 1 and project.notes[0].startswith("tests/fixtures/incompatible_lock/ left out: ")
    assert read_project(tmp_path, include=("generated/*",)).notes[0].startswith("generated/app/ left out: ")
    assert read_project(tmp_path, exclude=("nothing",)).files == ["requirements.txt"]
