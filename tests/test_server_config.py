"""`context server add/list/remove`: config.json in Neuledge Context's format, used by install."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner
from registry_fixtures import AUTH, live_server, make_package, package_url  # noqa: F401

from context_cli.remote.config import get_server
from context_cli.surfaces.cli import cli


def run(*args: str, ok: bool = True):
    result = CliRunner().invoke(cli, list(args))
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.fixture(autouse=True)
def no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONTEXT_REGISTRY_URL", raising=False)


def config(home: Path) -> dict:
    return json.loads((home / "config.json").read_text())


def test_add_list_remove_write_contexts_format(context_home: Path) -> None:
    assert "neuledge\thttps://context.neuledge.com\t(default)" in run("server", "list").output
    run("server", "add", "team", "https://docs.example.com/", "--default")
    assert config(context_home) == {"servers": [
        {"name": "neuledge", "url": "https://context.neuledge.com"},
        {"name": "team", "url": "https://docs.example.com", "default": True}]}
    assert get_server().name == "team"
    run("server", "add", "team", "https://docs2.example.com")  # re-pointed, still the default
    assert get_server().name == "team" and get_server("team").url == "https://docs2.example.com"
    out = run("server", "remove", "neuledge").output
    assert "the default is now team" in out
    assert config(context_home) == {"servers": [{"name": "team", "url": "https://docs2.example.com",
                                                 "default": True}]}
    listed = json.loads(run("server", "list", "--json").output)
    assert listed == {"servers": [{"name": "team", "url": "https://docs2.example.com", "default": True}],
                      "override": None}


def test_other_tools_keys_in_config_json_are_kept(context_home: Path) -> None:
    (context_home / "config.json").write_text(json.dumps({"servers": [], "telemetry": False}))
    run("server", "add", "team", "http://127.0.0.1:9")
    assert config(context_home)["telemetry"] is False


@pytest.mark.parametrize("args", [
    ("server", "add", "team", "ftp://example.com"),
    ("server", "add", "../evil", "https://example.com"),
    ("server", "add", "x" * 200, "https://example.com"),
    ("server", "remove", "nobody"),
])
def test_bad_server_input_is_one_line_and_changes_nothing(context_home: Path, args: tuple[str, ...]) -> None:
    run("server", "add", "team", "https://docs.example.com")
    before = (context_home / "config.json").read_bytes()
    result = run(*args, ok=False)
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert result.exit_code != 0 and len(lines) == 1 and lines[0].startswith("Error:"), result.output
    assert (context_home / "config.json").read_bytes() == before


def test_a_broken_config_json_is_named_and_kept(context_home: Path) -> None:
    (context_home / "config.json").write_text("{not json")
    result = run("server", "add", "team", "https://docs.example.com", ok=False)
    assert "config.json" in result.output and "fix or remove it" in result.output
    assert (context_home / "config.json").read_text() == "{not json"


def test_install_uses_the_server_added_as_default(live_server, tmp_path: Path) -> None:
    pkg = make_package(tmp_path / "zod.db", "zod", "3.1.0")
    r = requests.post(live_server.url + package_url("npm", "zod", "3.1.0"), data=pkg.read_bytes(),
                      headers=AUTH, timeout=10)
    assert r.status_code in (200, 201), r.text
    assert "no registry server named 'team'" in run("install", "npm/zod", "--server", "team", ok=False).output
    run("server", "add", "team", live_server.url, "--default")
    assert "Installed npm/zod@3.1.0" in run("install", "npm/zod").output
