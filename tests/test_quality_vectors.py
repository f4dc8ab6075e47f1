"""The second, optional vector set: its embedders (the ONNX quality model, an OpenAI-compatible
endpoint), how packages carry it, and how `context add --quality` makes it."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from quality_fixtures import (
    TINY_DIM,
    EmbeddingServer,
    configure_endpoint,
    embedding_server,
    expected,
    quality_model,  # noqa: F401  (a fixture)
    text_vector,
    write_tiny_model,
)

from context_cli.build import BuildOptions, build
from context_cli.document import Chunk
from context_cli.embed.endpoint import EndpointConfig, EndpointEmbedder
from context_cli.embed.quality import load_settings, quality_text, query_embedder
from context_cli.embed.quality_model import (
    ENV_VAR,
    QUALITY_MODEL,
    WHEEL_MODULE,
    clear_cache,
    file_fingerprint,
    load_quality_model,
    locate,
)
from context_cli.errors import ModelUnavailable
from context_cli.package.quality import load_quality
from context_cli.package.reader import open_package
from context_cli.package.vectors import QualitySet
from context_cli.package.writer import write_package
from context_cli.sources.resolve import fetch_folder
from context_cli.surfaces.cli import cli


def _chunks(n: int = 3) -> list[Chunk]:
    return [Chunk(doc_path=f"p{i}.md", doc_title=f"Page {i}", section_title="Intro", content=f"text {i}", tokens=3,
                  has_code=False)
            for i in range(n)]


# --- the ONNX quality model ------------------------------------------------------------------


def test_encode_is_mean_pooling_over_the_mask_then_unit_length(quality_model: Path) -> None:
    model = load_quality_model()
    texts = ["How do I cancel the pipeline?", "retry", "", "stop a pipeline halfway with a timeout " * 5]
    got = model.encode(texts)
    assert got.shape == (4, TINY_DIM) and got.dtype == np.float32
    for row, text in zip(got, texts, strict=True):  # padding in a batch changes nothing
        assert np.allclose(row, expected(text), atol=1e-5)
    assert np.allclose(model.encode("retry"), got[1:2], atol=1e-6)  # one text alone, as in a batch
    assert model.name == QUALITY_MODEL and model.dim == TINY_DIM
    assert model.fingerprint == file_fingerprint(quality_model / "model.onnx")


def test_the_model_is_found_in_the_home_models_folder_and_an_installed_wheel(
        tmp_path: Path, context_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    monkeypatch.delenv(ENV_VAR, raising=False)
    clear_cache()
    with pytest.raises(ModelUnavailable, match="make_quality_model.py --install"):
        load_quality_model()
    wheel_root = tmp_path / "site"
    write_tiny_model(wheel_root / WHEEL_MODULE / "model")
    (wheel_root / WHEEL_MODULE / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(wheel_root))
    assert locate() == wheel_root / WHEEL_MODULE / "model"
    home_model = write_tiny_model(context_home / "models" / QUALITY_MODEL)
    assert locate() == home_model  # the home's own copy first
    assert load_quality_model().encode(["run"]).shape == (1, TINY_DIM)
    assert WHEEL_MODULE not in sys.modules  # found, never imported


def test_a_folder_that_is_not_a_model_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    folder = write_tiny_model(tmp_path / "broken")
    (folder / "model.onnx").write_bytes(b"not onnx at all")
    monkeypatch.setenv(ENV_VAR, str(folder))
    clear_cache()
    with pytest.raises(ModelUnavailable, match="cannot read the quality model in"):
        load_quality_model()


# --- the endpoint ----------------------------------------------------------------------------


def test_endpoint_vectors_come_back_in_input_order_in_batches_with_the_key() -> None:
    with embedding_server(EmbeddingServer(mode="reverse", key="s3cret")) as server:
        texts = [f"text number {i}" for i in range(150)]
        got = EndpointEmbedder(EndpointConfig(server.url, "team-embed", key="s3cret")).encode(texts)
    assert [len(batch) for batch in server.inputs] == [64, 64, 22]
    assert set(server.models) == {"team-embed"}
    want = np.asarray([text_vector(t) for t in texts], dtype=np.float32)
    assert np.allclose(got, want / np.linalg.norm(want, axis=1, keepdims=True), atol=1e-6)


def test_endpoint_settings_come_from_config_json(context_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().endpoint is None and not load_settings().build
    configure_endpoint(context_home, "http://127.0.0.1:9/v1", build=True)
    monkeypatch.setenv("CONTEXT_QUALITY_KEY", "from-env")
    settings = load_settings()
    assert settings.build and settings.source == "openai"
    assert settings.endpoint == EndpointConfig("http://127.0.0.1:9/v1", "team-embed", "from-env")
    (context_home / "config.json").write_text(json.dumps({"quality": {"endpoint": {"url": "ftp://x"}}}))
    with pytest.raises(ModelUnavailable, match="needs a \"url\" and a \"model\""):
        load_settings()


def test_endpoint_prefixes_come_from_config_json_and_are_checked(context_home: Path) -> None:
    configure_endpoint(context_home, "http://127.0.0.1:9/v1", query_prefix="search_query: ",
                       document_prefix="search_document: ")
    assert load_settings().prefixes == ("search_query: ", "search_document: ")
    configure_endpoint(context_home, "http://127.0.0.1:9/v1", query_prefix=7)  # type: ignore[arg-type]
    with pytest.raises(ModelUnavailable, match="query_prefix"):
        load_settings()
    configure_endpoint(context_home, "http://127.0.0.1:9/v1", document_prefix="x" * 201)
    with pytest.raises(ModelUnavailable, match="at most 200 characters"):
        load_settings()


def test_an_asymmetric_models_prefixes_are_sent_and_recorded(docs_folder: Path, tmp_path: Path,
                                                              context_home: Path) -> None:
    """nomic-embed-text wants "search_document: " before each section and "search_query: "
    before a question: the build sends the first, the package records both, and search sends
    the package's query prefix whatever config.json now says."""
    with embedding_server() as server:
        configure_endpoint(context_home, server.url, build=True, query_prefix="search_query: ",
                           document_prefix="search_document: ")
        build(fetch_folder(docs_folder), tmp_path / "a.db", BuildOptions(name="mylib", version="1"))
        sent = [t for batch in server.inputs for t in batch]
        assert sent and all(t.startswith("search_document: ") for t in sent)
        configure_endpoint(context_home, server.url, query_prefix="query: ")
        server.inputs.clear()
        with open_package(tmp_path / "a.db") as pkg:
            assert (pkg.meta["quality_query_prefix"], pkg.meta["quality_document_prefix"]) == (
                "search_query: ", "search_document: ")
            found, note = load_quality(pkg)
            ids, matrix = pkg.quality_vectors()
            first = dict(pkg.chunks())[int(ids[0])]
        assert found is not None and note is None
        question = found.model.encode(["how do I close a sink"])
    assert server.inputs == [["search_query: how do I close a sink"]]
    assert np.allclose(question[0], np.asarray(text_vector("search_query: how do I close a sink")) /
                       np.linalg.norm(text_vector("search_query: how do I close a sink")), atol=1e-6)
    want = np.asarray(text_vector("search_document: " + quality_text(first)))
    assert float(matrix[0] @ want / np.linalg.norm(want)) > 0.999


def test_another_document_prefix_embeds_every_section_again(docs_folder: Path, tmp_path: Path,
                                                             context_home: Path) -> None:
    with embedding_server() as server:
        configure_endpoint(context_home, server.url, build=True)
        first = build(fetch_folder(docs_folder), tmp_path / "a.db", BuildOptions(name="mylib", version="1"))
        with open_package(tmp_path / "a.db") as pkg:
            assert not any(k in pkg.meta for k in ("quality_query_prefix", "quality_document_prefix"))
        configure_endpoint(context_home, server.url, build=True, document_prefix="passage: ")
        server.inputs.clear()
        build(fetch_folder(docs_folder), tmp_path / "b.db",
              BuildOptions(name="mylib", version="1", previous=tmp_path / "a.db"))
    assert sum(map(len, server.inputs)) == first.chunks  # none of the unprefixed vectors kept


# --- the package format ----------------------------------------------------------------------


def test_a_package_carries_the_set_beside_the_static_vectors(tmp_path: Path, quality_model: Path) -> None:
    model = load_quality_model()
    chunks = _chunks()
    matrix = model.encode([quality_text(c) for c in chunks])
    path = write_package(tmp_path / "q.db", {"name": "q", "version": "1"}, chunks,
                         vectors=np.eye(3, 4, dtype=np.float32),
                         quality=QualitySet(matrix, "onnx", model.name, model.fingerprint))
    with open_package(path, deep=True) as pkg:
        assert pkg.has_vectors and pkg.has_quality
        assert {k: pkg.meta[k] for k in pkg.meta if k.startswith("quality_")} == {
            "quality_source": "onnx", "quality_model": QUALITY_MODEL, "quality_fingerprint": model.fingerprint,
            "quality_dim": str(TINY_DIM), "quality_dtype": "int8"}
        found, note = load_quality(pkg)
    assert note is None and found is not None and found.model is model
    assert found.ids.tolist() == [1, 2, 3]
    assert (found.matrix * matrix).sum(axis=1).min() > 0.999  # int8, as the static set is stored
    # Neuledge Context's client reads our packages with plain SQL over its three tables.
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'name'").fetchone() == ("q",)
        assert db.execute("SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'text'").fetchone() == (3,)


def test_a_package_without_the_set_has_no_note(tmp_path: Path) -> None:
    path = write_package(tmp_path / "plain.db", {"name": "plain", "version": "1"}, _chunks())
    with open_package(path) as pkg:
        assert not pkg.has_quality and load_quality(pkg) == (None, None)


def test_without_the_model_here_search_is_told_to_use_the_static_vectors(
        tmp_path: Path, quality_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = load_quality_model()
    path = write_package(tmp_path / "q.db", {"name": "q", "version": "1"}, _chunks(),
                         quality=QualitySet(model.encode(["a", "b", "c"]), "onnx", model.name, model.fingerprint))
    monkeypatch.delenv(ENV_VAR)
    clear_cache()
    with open_package(path) as pkg:
        found, note = load_quality(pkg)
    assert found is None and "is not on this machine" in str(note) and note.endswith("searched with the static vectors")


def test_endpoint_vectors_are_used_only_where_config_names_that_model(context_home: Path) -> None:
    with pytest.raises(ModelUnavailable, match="does not name"):
        query_embedder("openai", "team-embed", "", 16)
    with embedding_server() as server:
        configure_endpoint(context_home, server.url)
        embedder = query_embedder("openai", "team-embed", "", 16)
        assert embedder.encode(["a question"]).shape == (1, 16)
        configure_endpoint(context_home, server.url, model="another-model")
        with pytest.raises(ModelUnavailable, match="does not name"):
            query_embedder("openai", "team-embed", "", 16)


# --- building --------------------------------------------------------------------------------


def test_add_quality_builds_both_sets(docs_folder: Path, quality_model: Path) -> None:
    result = CliRunner().invoke(cli, ["add", str(docs_folder), "--name", "mylib", "--pkg-version", "1.0", "--quality"])
    assert result.exit_code == 0, result.output
    from context_cli.store.store import Store

    (installed,) = Store().installed()
    with open_package(installed.path) as pkg:
        found, note = load_quality(pkg)
        chunks = pkg.chunks()
        assert pkg.has_vectors and note is None and found is not None
    want = load_quality_model().encode([quality_text(c) for _, c in chunks])
    assert (found.matrix * want).sum(axis=1).min() > 0.999


def test_without_quality_a_build_never_imports_onnxruntime(docs_folder: Path, tmp_path: Path) -> None:
    import subprocess

    code = ("import sys; from context_cli.build import BuildOptions, build; "
            "from context_cli.sources.resolve import fetch_folder; from pathlib import Path; "
            f"build(fetch_folder(Path({str(docs_folder)!r})), Path({str(tmp_path / 'plain.db')!r}), "
            "BuildOptions(name='m', version='1')); "
            "print('onnxruntime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    with open_package(tmp_path / "plain.db") as pkg:
        assert not pkg.has_quality


def test_config_build_true_makes_every_add_compute_the_set_from_the_endpoint(
        docs_folder: Path, tmp_path: Path, context_home: Path) -> None:
    with embedding_server() as server:
        configure_endpoint(context_home, server.url, build=True)
        first = build(fetch_folder(docs_folder), tmp_path / "a.db", BuildOptions(name="mylib", version="1"))
        embedded = sum(map(len, server.inputs))
        assert embedded == first.chunks
        page = docs_folder / "guide" / "errors.md"
        page.write_text(page.read_text() + "\n## Closing\n\nClose every sink when the pipeline is done with it, so "
                        "that buffered items are written out and file handles are released.\n")
        server.inputs.clear()
        build(fetch_folder(docs_folder), tmp_path / "b.db",
              BuildOptions(name="mylib", version="1", previous=tmp_path / "a.db"))
    with open_package(tmp_path / "b.db") as pkg:
        assert pkg.meta["quality_source"] == "openai" and pkg.meta["quality_model"] == "team-embed"
        changed = {c.doc_path for _, c in pkg.chunks() if any(quality_text(c) in b for b in server.inputs)}
        ids, matrix = pkg.quality_vectors()
        by_id = dict(pkg.chunks())
    assert changed == {"guide/errors.md"}  # unchanged sections kept their vectors
    for row, cid in zip(matrix, ids.tolist(), strict=True):
        want = np.asarray(text_vector(quality_text(by_id[cid])))
        assert float(row @ want / np.linalg.norm(want)) > 0.999


def test_the_publisher_builds_the_set_with_quality(tmp_path: Path, quality_model: Path) -> None:
    import subprocess

    from registry.cli import main

    repo = tmp_path / "gadgets"
    (repo / "docs").mkdir(parents=True)
    (repo / "docs" / "index.md").write_text("# Gadgets\n\n## Connecting\n\nGadgets connect over a pipeline.\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "docs"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    defs = tmp_path / "packages.yaml"
    defs.write_text(f'npm:\n  - name: gadgets\n    source: {{type: git, url: "{repo.as_uri()}", docs_path: docs}}\n')
    r = CliRunner().invoke(main, ["build", "npm/gadgets", "--out", str(tmp_path / "out"), "-d", str(defs),
                                  "--quality"])
    assert r.exit_code == 0, r.output
    with open_package(tmp_path / "out" / "npm__gadgets__latest.db") as pkg:
        assert pkg.meta["quality_model"] == QUALITY_MODEL and load_quality(pkg)[0] is not None
