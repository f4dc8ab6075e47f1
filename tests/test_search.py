"""Search: lexical now, the pack rules, hostile queries, several packages in one call."""

import pytest
from helpers import PEER_DB, make_package
from test_fts import HOSTILE

from context_cli.adding import AddRequest, add_source
from context_cli.errors import ContextError
from context_cli.search.engine import SearchOptions, search
from context_cli.search.pack import Candidate, pack
from context_cli.store.store import Store


@pytest.fixture
def lib(docs_folder):
    return add_source(AddRequest(source=str(docs_folder), name="mylib", version="1.0.0", embed=False)).installed


def test_natural_question_finds_section_without_all_words(lib):
    answer = search("how can I stop my pipeline halfway through?", [lib])
    assert answer["results"][0]["title"].startswith("Cancelling a pipeline > Stopping halfway")
    assert answer["library"] == "mylib@1.0.0" and answer["version"] == "1.0.0"


def test_exact_identifier_is_strong(lib):
    answer = search("ERR_SINK_CLOSED", [lib])
    assert answer["results"][0]["title"] == "Errors > ERR_SINK_CLOSED"
    assert answer["results"][0]["verdict"] == "STRONG"


def test_absent_topic_is_weak(lib):
    answer = search("kubernetes helm chart ingress", [lib])
    assert answer["verdict"] == "WEAK"


@pytest.mark.parametrize("q", [q for q in HOSTILE if q.strip()])
def test_hostile_queries_answer_cleanly(lib, q):
    answer = search(q, [lib])
    assert isinstance(answer["results"], list)


def test_empty_query_is_a_clean_error(lib):
    with pytest.raises(ContextError, match="empty"):
        search("   ", [lib])


def test_budget_is_honoured_and_saved_percent_reported(lib):
    answer = search("pipeline", [lib], SearchOptions(budget=60))
    assert 0 < answer["tokens"] <= 60
    assert 0 <= answer["savedPercent"] <= 1


def test_peer_and_our_package_in_one_call(lib):
    peer = Store().install(PEER_DB)
    answer = search("streaming responses pipeline", [lib, peer], SearchOptions(budget=4000))
    libraries = {r["library"] for r in answer["results"]}
    assert libraries == {"mylib@1.0.0", "anthropic-docs@2024.7.0"}
    assert "library" not in answer


def cand(i, tokens, page="a.md", lib="x@1"):
    return Candidate(library=lib, chunk_id=i, doc_path=page, doc_title="A", section_title=f"S{i}",
                     content=("word " * (tokens * 4 // 5))[: tokens * 4], tokens=tokens, url=None, score=1.0 / i)


def test_pack_skips_a_section_that_does_not_fit_and_tries_the_next():
    chosen = pack([cand(1, 500, "a.md"), cand(5, 900, "b.md"), cand(9, 300, "c.md")], budget=1000, limit=10)
    assert [c.chunk_id for c in chosen] == [1, 9]


def test_pack_trims_an_oversized_top_section():
    big = cand(1, 5000)
    big.content = "\n\n".join(f"paragraph {i} " + "word " * 100 for i in range(40))
    chosen = pack([big], budget=500, limit=10)
    assert len(chosen) == 1 and chosen[0].tokens <= 500 and "trimmed" in chosen[0].content


def test_pack_merges_adjacent_sections_of_one_page():
    chosen = pack([cand(2, 50), cand(3, 50), cand(7, 50, "b.md")], budget=1000, limit=10)
    assert [c.section_title for c in chosen] == ["S2 + S3", "S7"]


def test_pack_caps_sections_per_page():
    chosen = pack([cand(i * 2, 10) for i in range(1, 8)], budget=1000, limit=10)
    assert len(chosen) == 3


def test_pack_budget_never_broken_by_merging():
    ranked = [cand(i, 99) for i in range(1, 4)]
    assert sum(c.tokens for c in pack(ranked, budget=300, limit=10)) <= 300


def test_lexical_package_says_so(lib):
    answer = search("pipeline", [lib], SearchOptions(mode="hybrid"))
    assert answer["searched"] == {"mylib@1.0.0": "lexical"}
    assert any("lexically" in n for n in answer["notes"])


def test_several_versions_searched_by_spec(tmp_path):
    store = Store()
    store.install(make_package(tmp_path / "1.db", "lib", "1.0.0", [("a.md", "Old", "the old streaming api is here")]))
    store.install(make_package(tmp_path / "2.db", "lib", "2.0.0", [("a.md", "New", "the new streaming api is here")]))
    answer = search("streaming api", [store.resolve("lib")])
    assert answer["library"] == "lib@2.0.0" and answer["results"][0]["title"] == "A > New"
