"""Hostile docs sites and definitions on the ladder's site step: each costs one line for its
own dependency, and the README is still built (tests/docsite_fixtures.py serves them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from docsite_fixtures import World, world, world_parts  # noqa: F401 - fixtures

from context_cli.sources.docsources.ladder import resolve
from registry.definitions import load


def _site_reason(name: str) -> str:
    got = resolve("npm", name, "1.2.0")
    got.fetched.cleanup()
    assert got.step == "readme" and got.readme_only
    [line] = [str(a) for a in got.attempts if a.step == "site"]
    assert "\n" not in line and len(line) < 600
    return line


def test_a_metadata_site_on_a_private_address_is_never_asked(world: World):
    before = len(world.site.requests)
    assert "127.0.0.1 is a loopback address" in _site_reason("meta-site")
    assert len(world.site.requests) == before


def test_a_redirect_loop_is_one_line_and_the_readme_stands(world: World):
    assert "redirect" in _site_reason("looping")


@pytest.mark.parametrize("site,why", [
    ('"file:///etc/passwd"', "site.url: 'file:///etc/passwd' is not an http(s) URL"),
    ("{url: 'https://x.example', latest: 'yes'}", "site.latest: must be true or false"),
    ("[1, 2]", "site: must be a URL or a mapping"),
    ("{latest: true}", "site.url: required"),
])
def test_a_broken_site_in_a_definition_is_named_with_its_field(tmp_path: Path, site: str, why: str):
    path = tmp_path / "packages.yaml"
    path.write_text(f"npm:\n  - name: a\n    source: {{type: npm}}\n    site: {site}\n")
    result = load(path)
    assert not result.definitions and why in str(result.errors[0])
