"""The registry's package page lists a release's API by module, with signatures."""

from __future__ import annotations

from pathlib import Path

from apiref_fixtures import install_release
from registry_fixtures import app_client, publish  # noqa: F401 - a fixture


def test_package_page_lists_the_api(app_client, tmp_path: Path) -> None:  # noqa: F811
    path = install_release(tmp_path / "store", "2.2.0", tmp_path / "scratch")
    assert publish(app_client, path, "pip", "itsdangerous", "2.2.0").status_code in (200, 201)
    page = app_client.get("/docs/pip/itsdangerous/2.2.0")
    assert page.status_code == 200
    assert '<h2 id="api">API' in page.text and "<code>itsdangerous.signer</code>" in page.text
    assert "<code>Signer.sign(value: str | bytes) -&gt; bytes</code>" in page.text


def test_a_package_without_api_has_no_listing(app_client, tmp_path: Path) -> None:  # noqa: F811
    from registry_fixtures import make_package

    path = make_package(tmp_path / "p.db", "plain", "1.0.0", registry="npm")
    assert publish(app_client, path, "npm", "plain", "1.0.0").status_code in (200, 201)
    assert 'id="api"' not in app_client.get("/docs/npm/plain/1.0.0").text
