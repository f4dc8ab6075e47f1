"""Hybrid search with the shipped model: vectors in packages, fusion, degradation, verdicts."""

import sqlite3

import pytest
from helpers import PEER_DB

from context_cli.adding import AddRequest, add_source
from context_cli.search.engine import SearchOptions, search
from context_cli.store.store import Store


@pytest.fixture
def hybrid_lib(docs_folder):
    return add_source(AddRequest(source=str(docs_folder), name="mylib", version="1.0.0")).installed


def test_package_carries_vectors_and_model(hybrid_lib):
    meta = hybrid_lib.meta
    assert meta["embedding_model"] == "context-minilm-distilled-256"
    assert meta["embedding_dim"] == "256" and meta["embedding_dtype"] == "int8"
    assert len(meta["embedding_fingerprint"]) == 16
    db = sqlite3.connect(hybrid_lib.path)
    n_chunks, n_vectors, size = db.execute(
        "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM vectors), (SELECT max(length(vector)) FROM vectors)"
    ).fetchone()
    assert n_chunks == n_vectors and size == 256


def test_hybrid_search_finds_paraphrase(hybrid_lib):
    answer = search("abort a running job before it finishes", [hybrid_lib])
    assert answer["searched"] == {"mylib@1.0.0": "hybrid"}
    assert answer["results"][0]["source"] == "guide/cancel.md"


def test_verdicts(hybrid_lib):
    assert search("ERR_SINK_CLOSED", [hybrid_lib])["results"][0]["verdict"] == "STRONG"
    assert search("configure kubernetes ingress tls certificates", [hybrid_lib])["verdict"] == "WEAK"


def test_peer_package_and_ours_in_one_call(hybrid_lib):
    peer = Store().install(PEER_DB)
    answer = search("how do I stream responses and cancel a pipeline", [hybrid_lib, peer], SearchOptions(budget=3000))
    assert answer["searched"] == {"mylib@1.0.0": "hybrid", "anthropic-docs@2024.7.0": "lexical"}
    assert {r["library"] for r in answer["results"]} == {"mylib@1.0.0", "anthropic-docs@2024.7.0"}
    assert any("anthropic-docs@2024.7.0" in n and "lexically" in n for n in answer["notes"])


def test_unknown_model_degrades_to_lexical_with_a_message(docs_folder, tmp_path):
    built = add_source(AddRequest(source=str(docs_folder), name="other", version="1.0.0", save=tmp_path / "o.db"))
    Store().remove("other")
    db = sqlite3.connect(tmp_path / "o.db")
    db.execute("UPDATE meta SET value = 'someone/unknown-model' WHERE key = 'embedding_model'")
    db.commit()
    db.close()
    installed = Store().install(tmp_path / "o.db")
    answer = search("cancel a pipeline", [installed])
    assert built.installed.meta["embedding_model"] != "someone/unknown-model"
    assert answer["searched"] == {"other@1.0.0": "lexical"}
    assert "searched lexically only" in answer["notes"][0] and "not on this machine" in answer["notes"][0]
    assert answer["results"]


def test_fingerprint_mismatch_degrades_to_lexical(docs_folder, tmp_path):
    add_source(AddRequest(source=str(docs_folder), name="fp", version="1.0.0", save=tmp_path / "fp.db"))
    Store().remove("fp")
    db = sqlite3.connect(tmp_path / "fp.db")
    db.execute("UPDATE meta SET value = '0000000000000000' WHERE key = 'embedding_fingerprint'")
    db.commit()
    db.close()
    answer = search("cancel a pipeline", [Store().install(tmp_path / "fp.db")])
    assert answer["searched"] == {"fp@1.0.0": "lexical"}
