"""Version discovery against recorded registry answers served on loopback."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from click.testing import CliRunner
from quiet_servers import QuietHTTPServer

from context_cli.errors import SourceError
from context_cli.sources import artefact
from registry.cli import main
from registry.definitions import load_definitions
from registry.discovery import DiscoveredVersion, discover, discover_for

ANSWERS = Path(__file__).parent / "fixtures" / "registry_answers"


class Answers:
    """Routes for the loopback server: path -> responses, the last one repeating."""

    def __init__(self) -> None:
        self.routes: dict[str, list[tuple[int, bytes, dict[str, str]]]] = {}
        self.log: list[str] = []
        self.url = ""

    def add(self, path: str, *responses: tuple[int, bytes | str | dict, dict[str, str]]) -> None:
        out = []
        for status, body, headers in responses:
            if isinstance(body, dict):
                body = json.dumps(body)
            out.append((status, body.encode() if isinstance(body, str) else body, headers))
        self.routes[path] = out

    def answer(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        queue = self.routes.get(path.split("?")[0])
        if not queue:
            return 404, b'{"error": "Not found"}', {}
        return queue.pop(0) if len(queue) > 1 else queue[0]


@pytest.fixture
def server():
    answers = Answers()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            answers.log.append(self.path)
            status, body, headers = answers.answer(self.path)
            self.send_response(status)
            for k, v in {"Content-Type": "application/json", **headers}.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = QuietHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    answers.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield answers
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    """Retries sleep through `artefact._sleep`; record instead of waiting."""
    slept: list[float] = []
    monkeypatch.setattr(artefact, "_sleep", slept.append)
    for env, _ in artefact.DEFAULT_URLS.values():
        monkeypatch.delenv(env, raising=False)
    return slept


def recorded(name: str) -> bytes:
    return (ANSWERS / name).read_bytes()


def versions(found: list[DiscoveredVersion]) -> list[str]:
    return [d.version for d in found]


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


# ---- the four registries ---------------------------------------------------------------


def test_npm_stable_newest_patch_per_minor(server):
    server.add("/zod", (200, recorded("npm_zod.json"), {}))
    found = discover("npm", "zod", base_urls={"npm": server.url})
    assert versions(found) == ["4.6.7", "4.1.13", "4.0.17", "3.23.8", "3.22.4"]
    assert found[0].released_at == datetime(2026, 10, 12, 16, 29, 37, tzinfo=UTC)
    assert server.log == ["/zod"]


def test_npm_base_url_from_environment_and_scoped_names(server, monkeypatch):
    doc = json.loads(recorded("npm_zod.json"))
    server.add("/@scope%2Fpkg", (200, doc, {}))
    monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", server.url + "/")
    assert versions(discover("npm", "@scope/pkg", latest=1)) == ["4.6.7"]
    assert server.log == ["/@scope%2Fpkg"]


def test_pypi_prereleases_dropped_and_dates_from_uploads(server):
    server.add("/pypi/flask/json", (200, recorded("pypi_flask.json"), {}))
    found = discover("pip", "flask", base_urls={"pypi": server.url})
    assert versions(found) == ["3.1.3", "3.0.3", "2.3.3", "2.0.0"]
    assert found[0].released_at == datetime(2026, 2, 19, 5, 0, 56, 27585, tzinfo=UTC)


def test_pypi_yanked_releases_are_skipped(server):
    doc = json.loads(recorded("pypi_flask.json"))
    for f in doc["releases"]["3.1.3"]:
        f["yanked"] = True
    server.add("/pypi/flask/json", (200, doc, {}))
    assert versions(discover("pypi", "flask", base_urls={"pypi": server.url}))[0] == "3.1.2"


def test_since_and_latest(server):
    server.add("/pypi/flask/json", (200, recorded("pypi_flask.json"), {}))
    urls = {"pypi": server.url}
    now = utc("2026-03-01T00:00:00")
    assert versions(discover("pip", "flask", since_days=365, now=now, base_urls=urls)) == ["3.1.3"]
    assert versions(discover("pip", "flask", since_days=800, now=now, base_urls=urls)) == [
        "3.1.3", "3.0.3"
    ]
    assert versions(discover("pip", "flask", latest=2, base_urls=urls)) == ["3.1.3", "3.0.3"]
    assert discover("pip", "flask", since_days=1, now=now, base_urls=urls) == []


def test_maven_versions_from_metadata_dates_from_search(server):
    server.add("/io/micrometer/micrometer-core/maven-metadata.xml",
               (200, recorded("maven_micrometer-core_metadata.xml"), {"Content-Type": "text/xml"}))
    server.add("/solrsearch/select", (200, recorded("maven_micrometer-core_search.json"), {}))
    urls = {"maven": server.url, "maven_search": server.url}
    found = discover("maven", "io.micrometer:micrometer-core", base_urls=urls)
    assert versions(found) == ["1.13.0", "1.12.13", "1.11.5", "1.10.13", "1.9.17"]
    assert found[0].released_at == utc("2024-05-13T09:00:00")
    assert 'q=g%3A%22io.micrometer%22+AND+a%3A%22micrometer-core%22' in server.log[1]
    assert "core=gav" in server.log[1]
    recent = discover("maven", "io.micrometer:micrometer-core", base_urls=urls,
                      since_days=200, now=utc("2025-01-01T00:00:00"))
    assert versions(recent) == ["1.12.13"]


def test_maven_search_down_means_no_dates_not_failure(server):
    server.add("/io/micrometer/micrometer-core/maven-metadata.xml",
               (200, recorded("maven_micrometer-core_metadata.xml"), {}))
    server.add("/solrsearch/select", (503, "down", {}))
    found = discover("maven", "io.micrometer:micrometer-core",
                     base_urls={"maven": server.url, "maven_search": server.url}, since_days=1)
    assert versions(found)[0] == "1.13.0" and found[0].released_at is None


def test_maven_name_must_be_group_and_artifact(server):
    with pytest.raises(SourceError, match="Maven names are groupId:artifactId, not 'junit'"):
        discover("maven", "junit", base_urls={"maven": server.url})


def test_hex_retired_and_prereleases_dropped(server):
    server.add("/api/packages/phoenix", (200, recorded("hex_phoenix.json"), {}))
    found = discover("hex", "phoenix", base_urls={"hex": server.url})
    assert versions(found) == ["1.7.14", "1.6.15", "1.5.14", "1.4.18"]
    assert found[0].released_at == utc("2024-06-18T17:49:41")


def test_unsupported_registry():
    with pytest.raises(SourceError) as err:
        discover("python", "python")
    assert str(err.value) == (
        "no version discovery for registry 'python' (supported: hex, maven, npm, pip, pypi); "
        "list explicit versions in the definition"
    )


# ---- retries and refusals ----------------------------------------------------------------


def test_5xx_then_success_is_retried(server, no_waiting):
    server.add("/zod", (503, "busy", {"Retry-After": "7"}), (502, "", {}),
               (200, recorded("npm_zod.json"), {}))
    found = discover("npm", "zod", base_urls={"npm": server.url})
    assert versions(found)[0] == "4.6.7"
    assert server.log == ["/zod"] * 3
    assert no_waiting == [7.0, 2.0]  # Retry-After honoured, then exponential backoff


def test_429_is_retried_and_long_retry_after_is_capped(server, no_waiting):
    server.add("/zod", (429, "slow down", {"Retry-After": "3600"}), (200, recorded("npm_zod.json"), {}))
    discover("npm", "zod", base_urls={"npm": server.url})
    assert no_waiting == [artefact.MAX_RETRY_AFTER]


def test_5xx_retries_are_bounded(server, no_waiting):
    server.add("/zod", (500, "boom", {}))
    with pytest.raises(SourceError) as err:
        discover("npm", "zod", base_urls={"npm": server.url})
    assert str(err.value) == (
        f"npm registry failed with HTTP 500 after 4 attempts ({server.url}/zod); try again later"
    )
    assert len(server.log) == 4 and no_waiting == [1.0, 2.0, 4.0]


def test_404_stops_at_once_with_a_clear_message(server):
    with pytest.raises(SourceError, match=r"^no such package on npm: nope$"):
        discover("npm", "nope", base_urls={"npm": server.url})
    with pytest.raises(SourceError, match=r"^no such package on PyPI: nope$"):
        discover("pip", "nope", base_urls={"pypi": server.url})
    with pytest.raises(SourceError, match=r"^no such package on Hex: nope$"):
        discover("hex", "nope", base_urls={"hex": server.url})
    with pytest.raises(SourceError, match=r"^no such artifact on Maven Central: a.b:c$"):
        discover("maven", "a.b:c", base_urls={"maven": server.url})
    assert len(server.log) == 4


def test_other_4xx_stops_at_once(server, no_waiting):
    server.add("/zod", (403, "forbidden", {}))
    with pytest.raises(SourceError, match=r"npm registry refused .*/zod with HTTP 403"):
        discover("npm", "zod", base_urls={"npm": server.url})
    assert server.log == ["/zod"] and no_waiting == []


def test_network_errors_are_retried_then_reported(no_waiting):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(SourceError, match=rf"^could not reach npm registry at 127.0.0.1:{port}: connection refused$"):
        discover("npm", "zod", base_urls={"npm": f"http://127.0.0.1:{port}"})
    assert no_waiting == [1.0, 2.0, 4.0]


def test_answer_that_is_not_json(server):
    server.add("/zod", (200, "<html>captive portal</html>", {"Content-Type": "text/html"}))
    with pytest.raises(SourceError, match="npm registry sent an answer that is not JSON"):
        discover("npm", "zod", base_urls={"npm": server.url})


# ---- within a definition's ranges --------------------------------------------------------

DEFS = """
npm:
  - name: zod
    versions:
      - min_version: "4.0.0"
        source: {type: git, url: https://github.com/colinhacks/zod}
      - min_version: "3.23.0"
        max_version: "4.0.0"
        tag_pattern: "zod@{version}"
        source: {type: git, url: https://github.com/colinhacks/zod}
  - name: react
    source: {type: git, url: https://github.com/reactjs/react.dev}
python:
  - name: python
    versions:
      - versions: ["3.12", "3.13"]
        source: {type: zip, url: "https://docs.python.org/{version}/python-{version}-docs-html.zip"}
"""


@pytest.fixture
def definitions(tmp_path):
    path = tmp_path / "packages.yaml"
    path.write_text(DEFS)
    return path, {d.key: d for d in load_definitions(path)}


def test_discover_for_applies_ranges(server, definitions):
    _, defs = definitions
    server.add("/zod", (200, recorded("npm_zod.json"), {}))
    found = discover_for(defs["npm/zod"], base_urls={"npm": server.url})
    assert versions(found) == ["4.6.7", "4.1.13", "4.0.17", "3.23.8"]
    assert versions(discover_for(defs["npm/zod"], latest=2, base_urls={"npm": server.url})) == [
        "4.6.7", "4.1.13"
    ]


def test_discover_for_explicit_and_unversioned_need_no_network(definitions):
    _, defs = definitions
    dead = {"npm": "http://127.0.0.1:9", "pypi": "http://127.0.0.1:9"}
    assert versions(discover_for(defs["python/python"], base_urls=dead)) == ["3.13", "3.12"]
    assert discover_for(defs["npm/react"], base_urls=dead) == [DiscoveredVersion("latest")]


def test_versions_cli(server, definitions, monkeypatch):
    path, _ = definitions
    server.add("/zod", (200, recorded("npm_zod.json"), {}))
    monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", server.url)
    runner = CliRunner()
    result = runner.invoke(main, ["versions", "npm/zod", "-d", str(path), "--latest", "3"])
    assert result.exit_code == 0, result.output
    assert [line.split() for line in result.output.splitlines()] == [
        ["4.6.7", "2026-10-12", "v4.6.7"],
        ["4.1.13", "2025-11-24", "v4.1.13"],
        ["4.0.17", "2025-08-10", "v4.0.17"],
    ]
    result = runner.invoke(main, ["versions", "npm/zod", "-d", str(path), "--json"])
    rows = json.loads(result.output)
    assert rows[-1] == {"version": "3.23.8", "released_at": "2024-05-16T06:28:01.438000+00:00",
                        "source": "git", "tag": "zod@3.23.8"}
    # Without a definition: plain discovery.
    elsewhere = path.parent / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(main, ["versions", "npm/zod", "--latest", "1"])
    assert result.output.split() == ["4.6.7", "2026-10-12"]


def test_versions_cli_errors_are_one_line(server, monkeypatch, tmp_path):
    monkeypatch.setenv("CONTEXT_NPM_REGISTRY_URL", server.url)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["versions", "npm/nope"])
    assert result.exit_code == 1
    assert result.output == "Error: no such package on npm: nope\n"
    result = CliRunner().invoke(main, ["versions", "zod"])
    assert result.exit_code == 2 and "REGISTRY/NAME" in result.output
