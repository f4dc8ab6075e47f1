"""Python dependency files: each format read from a fixture shaped like a real project's."""

from __future__ import annotations

from pathlib import Path

import pytest

from context_cli.sync import python as py
from context_cli.sync.model import Dep, LockfileError

FIX = Path(__file__).parent / "fixtures" / "lockfiles"


def rows(deps: list[Dep]) -> set[tuple[str, str | None, bool]]:
    return {(d.name, d.version, d.direct) for d in deps if not d.skip}


def skipped(deps: list[Dep]) -> dict[str, str]:
    return {d.name: d.skip for d in deps if d.skip}


def test_pep503_names():
    assert py.normalise("Flask_SQLAlchemy") == "flask-sqlalchemy"
    assert py.normalise("zope.interface") == "zope-interface"
    assert py.normalise("A__b-.C") == "a-b-c"


def test_uv_lock_workspace_members_say_what_is_direct():
    deps = py.uv_lock_deps(FIX / "uv" / "uv.lock", "uv.lock")
    assert rows(deps) == {
        ("httpx", "0.27.2", True), ("numpy", "1.26.4", True), ("numpy", "2.1.3", True),
        ("rich", "13.9.4", True), ("pytest", "8.3.3", True), ("pydantic", "2.9.2", True),
        ("anyio", "4.6.2.post1", False), ("sniffio", "1.3.1", False),
    }
    skips = skipped(deps)
    assert skips["mylib"].startswith("git: https://github.com/acme/mylib")
    assert skips["acme-core"] == "workspace member"
    assert "acme-api" not in {d.name for d in deps}  # the project itself is no dependency


def test_uv_lock_unknown_version_is_refused(tmp_path):
    lock = tmp_path / "uv.lock"
    lock.write_text('version = 2\n\n[[package]]\nname = "x"\nversion = "1"\n')
    with pytest.raises(LockfileError, match=r"uv.lock: lockfile version 2 is not supported"):
        py.uv_lock_deps(lock, "uv.lock")


def test_truncated_uv_lock_names_file_and_line(tmp_path):
    text = (FIX / "uv" / "uv.lock").read_text()
    lock = tmp_path / "uv.lock"
    lock.write_text(text[: text.index("sdist = {") + 20])
    with pytest.raises(LockfileError) as e:
        py.uv_lock_deps(lock, "uv.lock")
    assert str(e.value).startswith("uv.lock line 59: invalid TOML")


def test_poetry_lock_with_pyproject_direct_names():
    direct = {d.name for d in py.pyproject_deps(FIX / "poetry" / "pyproject.toml", "pyproject.toml")}
    assert direct == {"django", "requests", "internal-tools", "local-helpers", "pytest"}
    deps = py.poetry_lock_deps(FIX / "poetry" / "poetry.lock", "poetry.lock", direct)
    assert rows(deps) == {("django", "4.2.7", True), ("requests", "2.31.0", True),
                          ("pytest", "7.4.3", True), ("asgiref", "3.7.2", False)}
    assert skipped(deps) == {"internal-tools": "git: https://github.com/acme/internal-tools.git",
                             "local-helpers": "directory: ../helpers"}


def test_poetry_pyproject_ranges_exact_and_sources():
    deps = {d.name: d for d in py.pyproject_deps(FIX / "poetry" / "pyproject.toml", "pyproject.toml")}
    assert deps["django"].wanted == "^4.2" and deps["django"].version is None
    assert deps["requests"].wanted == "^2.31"
    assert deps["pytest"].version == "7.4.3"  # a bare Poetry version is exact
    assert deps["internal-tools"].skip == "git: https://github.com/acme/internal-tools.git"
    assert deps["local-helpers"].skip == "path: ../helpers"


def test_poetry_lock_version_3_is_refused(tmp_path):
    lock = tmp_path / "poetry.lock"
    lock.write_text('[metadata]\nlock-version = "3.0"\n')
    with pytest.raises(LockfileError, match="lock-version '3.0' is not supported"):
        py.poetry_lock_deps(lock, "poetry.lock", None)


def test_pdm_lock():
    direct = {d.name for d in py.pyproject_deps(FIX / "pdm" / "pyproject.toml", "pyproject.toml")}
    assert direct == {"fastapi", "sqlalchemy", "pytest-asyncio"}
    deps = py.pdm_lock_deps(FIX / "pdm" / "pdm.lock", "pdm.lock", direct)
    assert rows(deps) == {("fastapi", "0.110.0", True), ("sqlalchemy", "2.0.28", True),
                          ("pytest-asyncio", "0.23.5", True), ("starlette", "0.36.3", False)}


def test_pipfile_lock_with_pipfile():
    direct = py.pipfile_direct(FIX / "pipenv" / "Pipfile", "Pipfile")
    deps = py.pipfile_lock_deps(FIX / "pipenv" / "Pipfile.lock", "Pipfile.lock", direct)
    assert rows(deps) == {("flask", "3.0.0", True), ("werkzeug", "3.0.1", False), ("black", "23.11.0", True)}
    assert skipped(deps) == {"mytool": "git: https://github.com/acme/mytool.git"}


def test_pipfile_lock_truncated(tmp_path):
    lock = tmp_path / "Pipfile.lock"
    lock.write_text((FIX / "pipenv" / "Pipfile.lock").read_text()[:700])
    with pytest.raises(LockfileError, match=r"^Pipfile.lock line \d+: invalid JSON"):
        py.pipfile_lock_deps(lock, "Pipfile.lock", None)


def test_requirements_pins_includes_constraints_extras_markers_hashes():
    root = FIX / "requirements"
    deps = py.requirements_deps(root / "requirements.txt", "requirements.txt", root)
    by_name = {d.name: d for d in deps}
    assert by_name["flask-sqlalchemy"].version == "3.1.1"  # extras and hashes on continuation lines
    assert by_name["requests"].version == "2.32.3" and by_name["requests"].origin == "requirements-base.txt"
    assert by_name["attrs"].version == "24.2.0"  # a range fixed by the -c constraint pin
    assert by_name["uvicorn"].version == "0.30.6"  # extras + marker + constraint
    assert by_name["pywin32"].version == "306"  # a marker does not hide the pin
    assert skipped(deps) == {
        "acme-plugin": "git (editable): git+https://github.com/acme/plugin.git@v1.0#egg=acme-plugin",
        "localpkg": "path: ./vendor/localpkg",
        "mylib": "url: https://example.com/mylib-1.0.tar.gz",
    }
    assert all(d.direct for d in deps)


def test_requirements_range_without_pin_and_bad_line(tmp_path):
    (tmp_path / "requirements.txt").write_text("click>=8\n\nnot a valid ==== line\n")
    with pytest.raises(LockfileError, match=r"^requirements.txt line 3: not a requirement"):
        py.requirements_deps(tmp_path / "requirements.txt", "requirements.txt", tmp_path)
    (tmp_path / "requirements.txt").write_text("click>=8\n-r missing.txt\n")
    with pytest.raises(LockfileError, match=r"^missing.txt: is included but does not exist"):
        py.requirements_deps(tmp_path / "requirements.txt", "requirements.txt", tmp_path)


def test_requirements_include_cycle_terminates(tmp_path):
    (tmp_path / "a.txt").write_text("-r b.txt\nclick==8.1.7\n")
    (tmp_path / "b.txt").write_text("-r a.txt\nrich==13.0.0\n")
    deps = py.requirements_deps(tmp_path / "a.txt", "a.txt", tmp_path)
    assert rows(deps) == {("click", "8.1.7", True), ("rich", "13.0.0", True)}


def test_pep621_ranges():
    deps = {d.name: d for d in py.pyproject_deps(FIX / "pep621" / "pyproject.toml", "pyproject.toml")}
    assert deps["click"].wanted == "<9,>=8.0"
    assert deps["jinja2"].version == "3.1.4"
    assert deps["rich"].wanted == "*"
