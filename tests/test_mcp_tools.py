"""The MCP tools as plain functions: catalog scoping, schemas, arguments, errors, hostile input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_fixtures import build_package, damage, make_home, publish, registry_server

from context_cli.errors import NotInstalled
from context_cli.mcp_server import tools
from context_cli.mcp_server.tools import Catalog, ToolError
from context_cli.store.store import Store


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


def catalog(home: Path, *specs: str) -> Catalog:
    return Catalog(Store(home / "packages"), specs)


def test_choices_list_every_version_newest_first(home: Path) -> None:
    assert catalog(home).choices() == ["mylib@2.0.0", "mylib@1.0.0", "other@0.3"]


def test_get_docs_schema_has_the_enum_and_requires_only_topic(home: Path) -> None:
    specs = {s["name"]: s for s in tools.tool_specs(catalog(home))}
    assert list(specs) == ["get_docs", "search_packages", "download_package"]
    schema = specs["get_docs"]["inputSchema"]
    assert schema["properties"]["library"]["enum"] == ["mylib@2.0.0", "mylib@1.0.0", "other@0.3"]
    assert schema["required"] == ["topic"]
    assert schema["properties"]["tokens"] == {**schema["properties"]["tokens"], "type": "integer",
                                              "default": 2000, "minimum": 100, "maximum": 20000}
    assert specs["search_packages"]["inputSchema"]["required"] == ["registry", "name"]
    assert specs["download_package"]["inputSchema"]["required"] == ["registry", "name", "version"]


def test_descriptions_teach_the_workflow(home: Path) -> None:
    specs = {s["name"]: s["description"] for s in tools.tool_specs(catalog(home))}
    for word in ("search_packages", "download_package", "context add"):
        assert word in specs["get_docs"]
    assert "download_package" in specs["search_packages"] and "context add" in specs["search_packages"]
    assert "get_docs" in specs["download_package"]


def test_with_nothing_installed_library_is_a_plain_string_saying_so(tmp_path: Path) -> None:
    empty = catalog(make_home(tmp_path, []))
    library = tools.tool_specs(empty)[0]["inputSchema"]["properties"]["library"]
    assert "enum" not in library and library["type"] == "string"
    assert "No libraries are installed" in library["description"]
    with pytest.raises(ToolError, match="No libraries are installed.*search_packages"):
        tools.get_docs(empty, {"topic": "cancel"})


def test_bare_name_means_highest_version(home: Path) -> None:
    answer = tools.get_docs(catalog(home), {"library": "mylib", "topic": "cancel a pipeline"})
    assert answer["library"] == "mylib@2.0.0" and answer["version"] == "2.0.0"
    assert answer["results"][0]["title"].startswith("Cancelling a pipeline > Stopping halfway")
    assert tools.get_docs(catalog(home), {"library": "mylib@1.0.0", "topic": "cancel"})["library"] == "mylib@1.0.0"


def test_omitting_library_searches_every_visible_package(home: Path) -> None:
    answer = tools.get_docs(catalog(home), {"topic": "streaming cancellation pipelines"})
    assert "library" not in answer
    assert set(answer["searched"]) == {"mylib@2.0.0", "mylib@1.0.0", "other@0.3"}
    assert {r["library"] for r in answer["results"]} >= {"other@0.3"}


@pytest.mark.parametrize("budget", [100, 150, 400])
def test_tokens_budget_is_honoured(home: Path, budget: int) -> None:
    answer = tools.get_docs(catalog(home), {"library": "mylib", "topic": "pipeline sink retries", "tokens": budget})
    assert answer["budget"] == budget
    assert 0 < answer["tokens"] <= budget
    assert sum(r["tokens"] for r in answer["results"]) == answer["tokens"]


def test_default_budget_is_2000(home: Path) -> None:
    assert tools.get_docs(catalog(home), {"library": "mylib", "topic": "pipeline"})["budget"] == 2000


@pytest.mark.parametrize("args, message", [
    ({}, "topic is required"),
    ({"topic": "   "}, "topic is empty"),
    ({"topic": 42}, "topic is required"),
    ({"topic": "x", "tokens": 5}, "tokens must be a whole number from 100 to 20000"),
    ({"topic": "x", "tokens": 10**9}, "tokens must be"),
    ({"topic": "x", "tokens": "many"}, "tokens must be"),
    ({"topic": "x", "tokens": True}, "tokens must be"),
    ({"topic": "x", "tokens": 250.5}, "tokens must be"),
    ({"topic": "x", "library": ["mylib"]}, "library must be a string"),
    ({"topic": "x", "library": "a" * 5000}, "library is too long"),
    ({"topic": "x", "library": "nope"}, r"Package not found: nope\. Installed: mylib@2\.0\.0.*search_packages"),
    ({"topic": "x", "library": "mylib@9.9"}, "Installed versions: mylib@2.0.0, mylib@1.0.0"),
])
def test_bad_arguments_are_one_line_tool_errors(home: Path, args: dict, message: str) -> None:
    with pytest.raises(ToolError, match=message) as e:
        tools.get_docs(catalog(home), args)
    assert "\n" not in str(e.value)


def test_integral_float_tokens_are_accepted(home: Path) -> None:
    assert tools.get_docs(catalog(home), {"topic": "pipeline", "tokens": 300.0})["budget"] == 300


@pytest.mark.parametrize("topic", [
    'NOT AND OR NEAR "unbalanced', "cancel*", "-pipeline", "content:cancel", "a OR b NOT c", "(((",
    "Pipeline.cancel()", "\"\"", "💥 パイプライン キャンセル", "naïve café résumé", "cancel\x00pipeline",
    "pipeline " * 2000, "x" * 10_000, "'; DROP TABLE chunks; --", "NEAR(cancel pipeline, 2)",
])
def test_hostile_topics_answer_instead_of_failing(home: Path, topic: str) -> None:
    answer = tools.get_docs(catalog(home), {"library": "mylib", "topic": topic})
    assert answer["library"] == "mylib@2.0.0"
    json.dumps(answer)
    if not answer["results"]:
        assert "No documentation found" in answer["message"]


def test_no_results_carry_guidance(home: Path) -> None:
    answer = tools.get_docs(catalog(home), {"library": "other", "topic": "graphql federation"})
    assert answer["results"] == [] and "No documentation found" in answer["message"]


def test_libs_bare_name_allows_all_versions_and_nothing_else(home: Path) -> None:
    pinned = catalog(home, "mylib")
    pinned.check_specs()
    assert pinned.locked and pinned.choices() == ["mylib@2.0.0", "mylib@1.0.0"]
    assert [s["name"] for s in tools.tool_specs(pinned)] == ["get_docs"]
    with pytest.raises(ToolError, match="other is not available in this session"):
        tools.get_docs(pinned, {"library": "other", "topic": "pipeline"})
    assert set(tools.get_docs(pinned, {"topic": "pipeline"})["searched"]) == {"mylib@2.0.0", "mylib@1.0.0"}


def test_libs_with_version_allows_exactly_that_one(home: Path) -> None:
    pinned = catalog(home, "mylib@1.0.0", "other")
    assert pinned.choices() == ["mylib@1.0.0", "other@0.3"]
    assert tools.get_docs(pinned, {"library": "mylib", "topic": "cancel"})["library"] == "mylib@1.0.0"
    with pytest.raises(ToolError, match="mylib@2.0.0 is not available in this session"):
        tools.get_docs(pinned, {"library": "mylib@2.0.0", "topic": "cancel"})


def test_unknown_libs_spec_is_refused(home: Path) -> None:
    with pytest.raises(NotInstalled, match="--libs nope@1: not installed"):
        catalog(home, "mylib", "nope@1").check_specs()


def test_registry_tools_refuse_in_a_pinned_session(home: Path) -> None:
    for fn in (tools.search_packages, tools.download_package):
        with pytest.raises(ToolError, match="not available in this session"):
            fn(catalog(home, "mylib"), {"registry": "npm", "name": "x", "version": "1"})


def test_catalog_sees_packages_installed_later(home: Path, tmp_path: Path) -> None:
    cat = catalog(home)
    assert "late@1.0" not in cat.choices()
    cat.store.install(build_package(tmp_path / "late.db", "late", "1.0"))
    assert "late@1.0" in cat.choices()
    assert tools.get_docs(cat, {"library": "late", "topic": "streaming"})["library"] == "late@1.0"


def test_a_request_without_refresh_sees_the_listing_as_last_read(home: Path, tmp_path: Path) -> None:
    """What the server does on its event loop: it checks `fresh()` first, then resolves
    without touching package files (a change is re-read in a worker thread)."""
    cat = catalog(home)
    assert not cat.fresh()  # never listed
    cat.all()
    assert cat.fresh()
    cat.store.install(build_package(tmp_path / "late.db", "late", "1.0"))
    assert not cat.fresh()
    with pytest.raises(ToolError, match="Package not found: late"):
        tools.docs_request(cat, {"library": "late", "topic": "streaming"}, refresh=False)
    assert "late@1.0" not in [p.label for p in cat.visible(refresh=False)]
    assert tools.docs_request(cat, {"library": "late", "topic": "streaming"}).packages[0].label == "late@1.0"
    assert cat.fresh()


def test_a_damaged_package_is_a_one_line_tool_error(home: Path, tmp_path: Path) -> None:
    cat = catalog(home)
    sections = [("p.md", "Page", f"S{i}", f"word{i} pipeline content " * 80) for i in range(100)]
    damage(cat.store.install(build_package(tmp_path / "broken.db", "broken", "1.0", sections)).path)
    with pytest.raises(ToolError, match="damaged|Package not found: broken") as e:
        tools.get_docs(cat, {"library": "broken", "topic": "pipeline"})
    assert "\n" not in str(e.value)
    assert tools.tool_specs(cat)[0]["name"] == "get_docs"  # listing tools still works


@pytest.mark.parametrize("args, message", [
    ({"name": "x"}, "registry is required"),
    ({"registry": "npm"}, "name is required"),
    ({"registry": "npm", "name": 3}, "name must be a string"),
])
def test_registry_tools_check_arguments(home: Path, args: dict, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        tools.search_packages(catalog(home), args)


def test_download_needs_a_version(home: Path) -> None:
    with pytest.raises(ToolError, match="version is required"):
        tools.download_package(catalog(home), {"registry": "npm", "name": "x"})


def test_unreachable_registry_is_one_line(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("CONTEXT_HOME", str(home))
    (home / "config.json").write_text(json.dumps({"servers": [{"name": "t", "url": f"http://127.0.0.1:{port}"}]}))
    monkeypatch.setattr("context_cli.remote.client.BACKOFF", 0.01)
    with pytest.raises(Exception) as e:
        tools.search_packages(catalog(home), {"registry": "npm", "name": "react"})
    assert "cannot reach registry server" in str(e.value) and "\n" not in str(e.value)


def test_search_then_download_from_a_registry(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with registry_server(tmp_path / "registry") as url:
        publish(url, build_package(tmp_path / "g.db", "gamma", "3.1.0", registry="npm"), "npm", "gamma", "3.1.0")
        monkeypatch.setenv("CONTEXT_HOME", str(home))
        (home / "config.json").write_text(json.dumps({"servers": [{"name": "t", "url": url, "default": True}]}))
        cat = catalog(home)
        found = tools.search_packages(cat, {"registry": "npm", "name": "gamma"})
        assert found["count"] == 1 and found["results"][0]["version"] == "3.1.0"
        missing = tools.search_packages(cat, {"registry": "npm", "name": "nothere"})
        assert missing["count"] == 0 and "context add" in missing["message"]
        done = tools.download_package(cat, {"registry": "npm", "name": "gamma", "version": "3.1.0"})
        assert done["success"] and done["package"]["library"] == "gamma@3.1.0"
        assert "gamma@3.1.0" in cat.choices()
        with pytest.raises(Exception, match="not on"):
            tools.download_package(cat, {"registry": "npm", "name": "gamma", "version": "9.9.9"})


def test_catalog_resolves_through_the_store_within_what_the_session_sees(home: Path, tmp_path: Path) -> None:
    pinned = catalog(home, "mylib@1.0.0", "other")
    assert pinned.resolve("mylib").label == "mylib@1.0.0"  # the highest *visible* version
    store = Store(home / "packages")
    assert store.resolve("mylib", among=pinned.visible()).label == "mylib@1.0.0"
    assert store.resolve("mylib").label == "mylib@2.0.0"
    with pytest.raises(ToolError, match="not available in this session"):
        pinned.resolve("mylib@2.0.0")
    store.install(build_package(tmp_path / "npm-other.db", "other", "0.3", registry="npm"))
    with pytest.raises(ToolError, match="several registries: local/other, npm/other; name one"):
        catalog(home).resolve("other")
    assert catalog(home).resolve("npm/other").id.registry == "npm"
