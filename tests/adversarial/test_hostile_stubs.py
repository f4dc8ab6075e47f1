"""Hostile names and indexes on the ladder's `runtime` step (a stubs package's library): a name
that maps onto no plain package name is never asked for, a broken index of the library costs one
line, and the stubs package is built as it was (tests/sync_fixtures.py's local world)."""

from __future__ import annotations

import hashlib
import json

import pytest
from helpers import targz
from sync_fixtures import World, world, world_parts  # noqa: F401 - fixtures

from context_cli.sources.docsources.ladder import NoDocs, resolve
from context_cli.sources.docsources.stubs import runtime_of

HOSTILE = [
    ("npm", "@types/.."), ("npm", "@types/../../etc/passwd"), ("npm", "@types/..__.."), ("npm", "@types/..__x"),
    ("npm", "@types/__proto__"), ("npm", "@types/a__"), ("npm", "@types/a__b/../c"), ("npm", "@types/%2e%2e"),
    ("npm", "@types/React"), ("npm", "@types/x\n"), ("npm", "@types/"), ("npm", "@types/types__node"),
    ("npm", "@types/" + "a" * 300), ("pip", "types-.."), ("pip", "types-../../x"), ("pip", "../x-stubs"),
    ("pip", "types-types-requests"), ("pip", "types-"), ("pip", "-stubs"), ("pip", "types-a/b"),
]


@pytest.mark.parametrize("registry,name", HOSTILE)
def test_a_name_that_maps_onto_no_plain_package_is_no_stubs_package(registry: str, name: str):
    assert runtime_of(registry, name, "1.0.0") is None


def _types_package(world: World, name: str, library: str, library_doc: object) -> None:
    tarball = targz({"package/package.json": json.dumps({"name": name}),
                     "package/README.md": f"# Summary\nThis package contains type definitions for {library}.\n"})
    world.index.add(f"/tarballs/{library}-types.tgz", tarball)
    world.index.add(f"/{name.replace('/', '%2F')}", {"name": name, "versions": {"1.0.2": {
        "dist": {"tarball": f"{world.index.url}/tarballs/{library}-types.tgz",
                 "shasum": hashlib.sha1(tarball).hexdigest()}}}})
    if library_doc is not None:
        world.index.add(f"/{library}", library_doc if isinstance(library_doc, dict) else json.dumps(library_doc).encode())


@pytest.mark.parametrize("library,doc,why", [
    ("absent-lib", None, "no such package on npm: absent-lib"),
    ("listed-lib", ["1.0.0"], "the npm index sent an unexpected answer for listed-lib"),
    ("list-lib", {"versions": ["1.0.0"]}, "list-lib has no release 1.0.x"),
    ("huge-lib", {"versions": {"1.0." + "9" * 5000: {}}}, "huge-lib has no release 1.0.x"),
    ("broken-lib", {"versions": {"1.0.0": "not a release", "1.0.1": {"dist": {"tarball": "file:///etc/passwd"}}}},
     "no docs for npm/broken-lib@1.0.1"),
])
def test_a_broken_library_index_is_one_line_and_the_stubs_readme_stands(world: World, library: str,
                                                                         doc: object, why: str):
    _types_package(world, f"@types/{library}", library, doc)
    got = resolve("npm", f"@types/{library}", "1.0.2")
    got.fetched.cleanup()
    assert got.step == "readme" and "docs_version" not in got.fetched.meta
    [line] = [str(a) for a in got.attempts if a.step == "runtime"]
    assert why in line and "\n" not in line and len(line) < 700


@pytest.mark.parametrize("name", ["@types/..__..", "@types/..", "@types/__proto__"])
def test_a_hostile_stubs_name_asks_the_index_for_nothing_else(world: World, name: str):
    world.index.log.clear()
    with pytest.raises(NoDocs) as e:
        resolve("npm", name, "1.0.0")
    assert not [a for a in e.value.attempts if a.step == "runtime"]
    assert world.index.log and all(p.startswith("/@types%2F") for p in world.index.log), world.index.log
