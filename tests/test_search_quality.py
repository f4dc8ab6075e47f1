"""Search uses a package's quality vectors (docs/quality-vectors.md) as its dense side when this
machine can embed queries for them, and says so when it falls back to the static vectors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from quality_fixtures import (
    EmbeddingServer,
    configure_endpoint,
    embedding_server,
    quality_model,  # noqa: F401  (a fixture)
    text_vector,
)

import context_cli as cx
from context_cli.build import BuildOptions, build
from context_cli.embed.quality_model import ENV_VAR, clear_cache
from context_cli.search.engine import answer, rank
from context_cli.search.searcher import open_searcher
from context_cli.sources.resolve import fetch_folder

QUESTION = "how do I stop a running pipeline halfway"


def installed(path: Path) -> cx.Installed:
    return cx.open(path)


def test_the_quality_set_is_the_dense_side_when_its_endpoint_answers(docs_folder: Path, tmp_path: Path,
                                                                        context_home: Path) -> None:
    with embedding_server() as server:
        configure_endpoint(context_home, server.url, build=True)
        build(fetch_folder(docs_folder), tmp_path / "q.db", BuildOptions(name="mylib", version="1"))
        server.inputs.clear()
        found = answer(QUESTION, [installed(tmp_path / "q.db")])
        assert server.inputs == [[QUESTION]]  # the question was embedded by the endpoint
        s = open_searcher(installed(tmp_path / "q.db"))
        assert s.quality() is not None and found.searched == {"mylib@1": "hybrid"} and not found.notes
        model, index = s.quality()
        assert index.matrix.shape[1] == len(text_vector("x"))
        q = np.asarray(text_vector(QUESTION))
        assert model.encode([QUESTION])[0] @ (q / np.linalg.norm(q)) > 0.999


def test_an_endpoint_that_stops_answering_falls_back_to_the_static_vectors(docs_folder: Path, tmp_path: Path,
                                                                          context_home: Path) -> None:
    server = EmbeddingServer()
    with embedding_server(server):
        configure_endpoint(context_home, server.url, build=True)
        build(fetch_folder(docs_folder), tmp_path / "q.db", BuildOptions(name="mylib", version="1"))
        s = open_searcher(installed(tmp_path / "q.db"))
        rank(QUESTION, [s], "hybrid")
        assert s.quality() is not None
        server.mode = "error"
        found = answer(QUESTION, [installed(tmp_path / "q.db")])
    assert found.searched == {"mylib@1": "hybrid"} and found.results
    (note,) = found.notes
    assert "model not loaded" in note and note.endswith("searched with the static vectors")
    assert s.quality() is None
    assert answer(QUESTION, [installed(tmp_path / "q.db")]).notes == [note]  # (from now on, and said each time)


def test_a_package_whose_model_is_not_here_says_so_and_is_searched_as_before(
        docs_folder: Path, tmp_path: Path, context_home: Path, quality_model: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    build(fetch_folder(docs_folder), tmp_path / "q.db", BuildOptions(name="mylib", version="1", quality=True))
    build(fetch_folder(docs_folder), tmp_path / "plain.db", BuildOptions(name="mylib", version="1"))
    monkeypatch.delenv(ENV_VAR)
    clear_cache()
    found = answer(QUESTION, [installed(tmp_path / "q.db")])
    (note,) = found.notes
    assert "is not on this machine" in note and note.endswith("searched with the static vectors")
    plain = answer(QUESTION, [installed(tmp_path / "plain.db")])
    assert [r.content for r in found.results] == [r.content for r in plain.results]


def test_a_search_without_quality_vectors_never_imports_onnxruntime(docs_folder: Path, tmp_path: Path) -> None:
    build(fetch_folder(docs_folder), tmp_path / "plain.db", BuildOptions(name="mylib", version="1"))
    code = ("import sys; from pathlib import Path; from context_cli.search.engine import answer; "
            "import context_cli as cx; "
            f"answer({QUESTION!r}, [cx.open(Path({str(tmp_path / 'plain.db')!r}))]); "
            "print('onnxruntime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_dense_ranking_mixes_both_sets_z_scores() -> None:
    """Each candidate of either model's best gets share x its quality z plus the rest x its
    static z (0 where a model has no vector for it); its own z signal stays the static one."""
    from context_cli.search.dense import DenseHits, VectorIndex, standardise
    from context_cli.search.quality import MixedHits

    def hits(ids: list[int], cosines: list[float]) -> DenseHits:
        index = VectorIndex(ids=np.array(ids, dtype=np.int64), matrix=np.eye(len(ids), dtype=np.float32))
        scores = np.array(cosines)
        return DenseHits(index, standardise(scores, [(0, len(scores))])[0], object(), float(scores.max()), index.first)

    static = hits([1, 2, 3, 4], [0.9, 0.1, 0.5, 0.2])
    quality = hits([1, 2, 3, 5], [0.2, 0.9, 0.6, 0.1])  # (4 has no quality vector, 5 no static one)
    mixed = MixedHits(static, quality, 0.5)
    ids, z = mixed.top(2)
    sz, qz = static.stats.z(), quality.stats.z()
    want = {1: (sz[0] + qz[0]) / 2, 2: (sz[1] + qz[1]) / 2, 3: (sz[2] + qz[2]) / 2}
    assert ids.tolist() == sorted(want, key=lambda c: -want[c])[:2] and np.allclose(z, sorted(want.values())[::-1][:2])
    assert MixedHits(static, quality, 0.0).top(2)[0].tolist() == static.top(2)[0].tolist()
    assert MixedHits(static, quality, 1.0).top(2)[0].tolist() == quality.top(2)[0].tolist()
    assert mixed.z_of(1) == static.z_of(1) and mixed.best_cosine == quality.best_cosine


def test_a_question_nothing_matches_is_judged_on_the_static_side(docs_folder: Path, tmp_path: Path,
                                                                 context_home: Path) -> None:
    """The honest empty answer's noise floor was measured on the static model: a package with
    quality vectors is judged on its static side (this raised before: the mixed hits have no
    one index to probe)."""
    with embedding_server() as server:
        configure_endpoint(context_home, server.url, build=True)
        build(fetch_folder(docs_folder), tmp_path / "q.db", BuildOptions(name="mylib", version="1"))
        found = answer("qqzzx vvwwbb", [installed(tmp_path / "q.db")])
        assert open_searcher(installed(tmp_path / "q.db")).quality() is not None
    assert not found.results and any(n.startswith("nothing matched") for n in found.notes)
