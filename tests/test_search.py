"""Search: lexical now, the pack rules, hostile queries, several packages in one call."""

import shutil

import pytest
from helpers import PEER_DB, make_package
from test_fts import HOSTILE

from context_cli.adding import AddRequest, add_source
from context_cli.errors import ContextError, InvalidPackage
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


def test_another_package_fills_no_budget_with_sections_of_none_of_the_words(tmp_path):
    """Searched together, each package offers its own "best" section: one of the unrelated
    package's, holding none of the question's words, is not packed however much room is left."""
    def folder(name: str, pages: dict[str, str]) -> str:
        root = tmp_path / name
        root.mkdir()
        for page, text in pages.items():
            (root / page).write_text(text, "utf-8")
        return str(root)

    web = folder("web", {"blueprints.md": "# Blueprints\n\n## Registering\n\nRegister a blueprint on the app "
                         "with a URL prefix: `app.register_blueprint(bp, url_prefix='/admin')`.\n"})
    topics = ["A byte stream releases its socket when closed.", "Keep-alive connections per host.",
              "Retries back off exponentially after a timeout.", "Proxies are read from the environment.",
              "Certificates are verified against the system store.", "Cookies persist across requests.",
              "Compressed bodies are decoded as they arrive.", "Events fire before and after each request."]
    streams = folder("streams", {f"topic{i}.md": f"# Topic {i}\n\n## Detail\n\n{text}\n"
                                 for i, text in enumerate(topics)})
    libraries = [add_source(AddRequest(source=src, name=name, version="1.0.0")).installed
                 for name, src in (("web", web), ("streams", streams))]
    found = search("register a blueprint with a url prefix", libraries, SearchOptions(budget=5000))
    assert {r["library"] for r in found["results"]} == {"web@1.0.0"}
    alone = search("close the byte stream", libraries, SearchOptions(budget=5000))
    assert alone["results"][0]["library"] == "streams@1.0.0"


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


def test_pack_keeps_the_merges_that_fit_when_one_would_overflow():
    # Each merge adds a "## S.." heading (2 tokens); the budget leaves room for one of them.
    ranked = [cand(1, 99), cand(2, 99), cand(5, 99, "b.md"), cand(6, 99, "b.md")]
    chosen = pack(ranked, budget=398, limit=10)
    assert [c.section_title for c in chosen] == ["S1 + S2", "S5", "S6"]
    assert sum(c.tokens for c in chosen) <= 398


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


def test_budget_counts_the_text_returned_not_the_packages_claim(tmp_path):
    """A 4.9 MB section that declares 1 token must not come back whole under a budget of 100."""
    from context_cli.document import Chunk
    from context_cli.package.writer import write_package

    huge = "streaming pipeline details. " * 175_000  # ~4.9 MB
    liar = Chunk(doc_path="big.md", doc_title="Big", section_title="Streaming", content=huge, tokens=1,
                  has_code=False)
    small = Chunk(doc_path="small.md", doc_title="Small", section_title="Streaming", content="streaming pipeline", has_code=False,
                  tokens=1)
    path = write_package(tmp_path / "liar.db", {"name": "liar", "version": "1.0.0"}, [liar, small])
    answer = search("streaming pipeline", [Store().install(path)], SearchOptions(budget=100))
    assert answer["tokens"] <= 100
    assert sum(len(r["content"]) for r in answer["results"]) <= 100 * 4 + 100
    assert all(r["tokens"] == (len(r["content"]) + 3) // 4 for r in answer["results"])


def test_nan_vectors_never_reach_json(docs_folder, tmp_path):
    """A package whose vectors are NaN: scores and signals stay finite, strict JSON holds."""
    import json
    import math
    import sqlite3

    from context_cli.search.answer import dumps

    built = add_source(AddRequest(source=str(docs_folder), name="nanlib", version="1.0.0")).installed
    hostile = tmp_path / "nan.db"
    hostile.write_bytes(built.path.read_bytes())
    db = sqlite3.connect(hostile)
    dim = int(db.execute("SELECT value FROM meta WHERE key = 'embedding_dim'").fetchone()[0])
    db.execute("UPDATE meta SET value = 'float16' WHERE key = 'embedding_dtype'")
    db.execute("UPDATE vectors SET vector = ?", (b"\x00\x7e" * dim,))  # float16 NaN
    db.commit()
    db.close()
    store = Store()
    with pytest.raises(InvalidPackage, match="not finite"):
        store.install(hostile)  # refused at install ...
    shutil.copyfile(hostile, built.path)  # ... and one that got in before is searched lexically
    answer = search("stop the pipeline halfway", [built])
    assert answer["results"]
    text = dumps(answer)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"{c} in JSON"))
    assert all(math.isfinite(r["score"]) for r in answer["results"])
    with pytest.raises(ValueError):
        dumps({"score": float("nan")})


def test_a_package_that_fails_is_skipped_with_a_note_and_the_others_answer(docs_folder, tmp_path):
    """Text that is not UTF-8 in one package (it got in before such checks): the search over
    both names it in `notes` as skipped and answers from the other; alone, it is one error."""
    from adversarial import hostile_packages as hp

    good = add_source(AddRequest(source=str(docs_folder), name="goodlib", version="1.0.0", embed=False)).installed
    bad = Store().install(hp.base_package(tmp_path / "evil.db"))
    shutil.copyfile(hp.surrogate_text(tmp_path / "evil2.db"), bad.path)  # tampered after install
    answer = search("evil streaming cancellation", [good, bad])
    assert answer["searched"][bad.label] == "skipped"
    assert any(n.startswith(bad.label) and n.endswith("skipped") for n in answer["notes"])
    assert {r["library"] for r in answer["results"]} == {good.label}
    with pytest.raises(ContextError, match=bad.label):
        search("evil streaming cancellation", [bad])


@pytest.mark.parametrize(("identifier", "text", "found"), [
    ("log", "Write a log line.", True), ("log", "The catalog lists items.", False),
    ("send_file", "Use send_files()", False), ("send_file", "flask.send_file(path)", True),
    ("$http", "inject $http here", True), ("z.string", "call z.string().email()", True)])
def test_an_identifier_counts_as_found_only_as_a_whole_name(identifier, text, found):
    """An exact identifier makes a section STRONG: `log` inside `catalog` is no such match."""
    from context_cli.search.pack import names_verbatim

    assert names_verbatim(identifier, text) is found
