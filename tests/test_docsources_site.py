"""The ladder's site step against real local servers (tests/docsite_fixtures.py): a site's
build of the version wins; the site as it is now only where the definition says
`latest: true`, and then the package says so."""

from __future__ import annotations

from docsite_fixtures import World, world, world_parts  # noqa: F401 - fixtures

from context_cli.sources.docsources.ladder import resolve


def _text(fetched) -> str:
    return "\n".join(b.text for d in fetched.documents for b in d.blocks)


def test_the_sites_build_of_the_exact_version_wins(world: World):
    got = resolve("npm", "exact", "1.2.0")
    try:
        assert got.step == "site" and not got.readme_only
        assert "version 1.2.0 of the guide" in _text(got.fetched) and "new in 2.0" not in _text(got.fetched)
        assert "docs_version" not in got.fetched.meta
        assert got.fetched.meta["docs_ref"] == f"{world.site.base}/v1.2.0/docs/"
        assert "definition: has only a README" in got.tried()
    finally:
        got.fetched.cleanup()


def test_an_unversioned_site_is_latest_only_where_the_definition_allows_it(world: World):
    got = resolve("npm", "latest-ok", "1.2.0")
    try:
        assert got.step == "site" and got.fetched.version == "1.2.0"
        assert got.fetched.meta["docs_version"] == "latest" and got.fetched.meta["docs_ref"].startswith(world.bare.base)
        assert {d.path for d in got.fetched.documents} >= {"guide.md", "api.md"}
        assert any("latest" in n for n in got.fetched.notes)
    finally:
        got.fetched.cleanup()
    strict = resolve("npm", "strict", "1.2.0")
    try:
        assert strict.step == "readme" and strict.readme_only
        assert "has no build of 1.2.0; an unversioned site is used only where a definition allows it" in strict.tried()
    finally:
        strict.fetched.cleanup()


def test_a_site_that_answers_any_version_is_no_exact_build(world: World):
    world.site.add("/v0.0.0-no-such-version/docs/", "<html><body><h1>Anything</h1></body></html>")
    try:
        got = resolve("npm", "exact", "1.2.0")
        got.fetched.cleanup()
        assert got.step == "readme" and "has no build of 1.2.0" in got.tried()
    finally:
        del world.site.routes["/v0.0.0-no-such-version/docs/"]
