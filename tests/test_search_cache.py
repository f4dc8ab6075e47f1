"""What a warm process keeps per open package (page map, section sizes, page token totals,
BM25 postings) never outlives the file: a package reinstalled or removed meanwhile is searched
as it is now."""

from helpers import make_package

from context_cli.search.engine import SearchOptions, search
from context_cli.store.store import Store


def _sections(word: str, n: int) -> list[tuple[str, str, str]]:
    return [(f"{word}/{i}.md", f"{word.title()} {i}", f"{word} appears here. " * (5 + 10 * i)) for i in range(n)]


def test_reinstalled_package_is_searched_as_it_is_now(tmp_path):
    store = Store()
    first = store.install(make_package(tmp_path / "a.db", name="lib", sections=_sections("streaming", 2)))
    before = search("streaming", [first])
    assert {r["source"] for r in before["results"]} == {"streaming/0.md", "streaming/1.md"}

    # Same name and version, other pages of other sizes: installed over it while warm.
    again = store.install(make_package(tmp_path / "b.db", name="lib", sections=_sections("streaming", 4)[2:]))
    assert again.path == first.path
    after = search("streaming", [again])
    assert {r["source"] for r in after["results"]} == {"streaming/2.md", "streaming/3.md"}
    assert all(r["content"].count("streaming") >= 25 for r in after["results"])
    assert after["tokens"] <= after["budget"]


def test_removed_package_is_no_longer_searched(tmp_path):
    store = Store()
    a = store.install(make_package(tmp_path / "a.db", name="alpha", sections=_sections("streaming", 2)))
    b = store.install(make_package(tmp_path / "b.db", name="beta", sections=_sections("streaming", 2)))
    assert set(search("streaming", store.installed())["searched"]) == {a.label, b.label}
    store.remove("beta")
    answer = search("streaming", store.installed())
    assert set(answer["searched"]) == {a.label}
    assert {r["library"] for r in answer["results"]} == {a.label}


def test_a_warm_package_reads_its_whole_section_map_once(tmp_path):
    """A cold package's search reads the sections it ranks, and stays cold; made warm (as a
    server does), the whole map is read in one scan, and later searches read no section map
    at all, and answer as before."""
    from context_cli.search.searcher import open_searcher

    store = Store()
    lib = store.install(make_package(tmp_path / "a.db", name="lib",
                                     sections=_sections("streaming", 6) + _sections("caching", 6)))
    s = open_searcher(lib)
    maps: list[str] = []
    s.pkg.db.set_trace_callback(lambda sql: maps.append(sql) if "length(content)" in sql else None)
    first = search("streaming", [lib])
    second = search("caching", [lib])
    assert len(maps) == 2 and all("WHERE id IN" in m for m in maps) and not s.is_warm
    warm = SearchOptions(warm=True)
    assert search("streaming", [lib], warm) == first
    assert len(maps) == 3 and "WHERE id IN" not in maps[2] and s.is_warm
    assert search("caching", [lib], warm) == second and search("caching", [lib]) == second
    search("appears here", [lib], warm)
    assert len(maps) == 3


def test_a_package_too_slow_for_its_whole_map_keeps_to_parts(tmp_path, monkeypatch):
    """Warming is tried once: a package whose whole map runs past its time limit fails that
    one search (as any slow package does) and is then read in parts again, never stalled twice."""
    import pytest

    from context_cli.errors import InvalidPackage
    from context_cli.package import reader
    from context_cli.search.searcher import open_searcher

    store = Store()
    lib = store.install(make_package(tmp_path / "a.db", name="lib",
                                     sections=_sections("streaming", 150) + _sections("caching", 150)))
    first = search("streaming", [lib])
    monkeypatch.setattr(reader, "LOAD_DEADLINE_S", 0.0)  # every whole-table read is now too slow
    warm = SearchOptions(warm=True)
    with pytest.raises(InvalidPackage, match="too slow"):
        search("caching", [lib], warm)
    s = open_searcher(lib)
    assert not s.is_warm
    assert search("caching", [lib], warm)["results"] and search("streaming", [lib], warm) == first
    assert not s.is_warm


def _with_vectors(path, sections: list[tuple[str, str, str]]):
    """A package like `make_package`'s, with vectors from the shipped model."""
    from context_cli.build import model_meta
    from context_cli.document import Chunk, estimate_tokens
    from context_cli.embed.model import load_model
    from context_cli.embed.text import embed_text
    from context_cli.package.writer import write_package

    chunks = [Chunk(doc_path=p, doc_title=p.rsplit(".", 1)[0].title(), section_title=t, content=c,
                    tokens=estimate_tokens(c), has_code=False) for p, t, c in sections]
    model = load_model(None)
    vectors = model.encode([embed_text(c) for c in chunks])
    return write_package(path, {"name": "lib", "version": "1.0.0", **model_meta(model)}, chunks, vectors=vectors)


def test_vectors_too_slow_to_load_are_tried_once(tmp_path, monkeypatch):
    """A package whose vectors take longer than their load limit fails that one search; later
    searches find it lexically, with a note, instead of waiting for the vectors again."""
    import pytest

    from context_cli.errors import InvalidPackage
    from context_cli.package import reader

    lib = Store().install(_with_vectors(tmp_path / "a.db", _sections("streaming", 300)))
    monkeypatch.setattr(reader, "LOAD_DEADLINE_S", 0.0)  # the vectors' read is now too slow
    with pytest.raises(InvalidPackage, match="too slow"):
        search("streaming", [lib])
    monkeypatch.undo()  # quick again: the vectors would load now, but are not read again
    answer = search("streaming", [lib])
    assert answer["results"] and answer["searched"] == {"lib@1.0.0": "lexical"}
    assert any("too long to load" in note for note in answer["notes"])


def test_a_bm25_index_too_slow_to_load_is_tried_once(tmp_path, monkeypatch):
    """The same for the BM25 index (loaded within the search's own limit): FTS5 ranks the
    package from then on, starting with that search."""
    from context_cli.package import deadline
    from context_cli.search import searcher
    from context_cli.search.searcher import open_searcher

    lib = Store().install(make_package(tmp_path / "a.db", name="lib", sections=_sections("streaming", 20)))
    expected = search("streaming", [Store().install(make_package(tmp_path / "b.db", name="other",
                                                                 sections=_sections("streaming", 20)))])
    monkeypatch.setattr(deadline, "PROGRESS_OPS", 1)  # the clock is read at every step: even 3 rows take too long
    monkeypatch.setattr(searcher, "LOAD_DEADLINE_S", 0.0)
    first = search("streaming", [lib])
    monkeypatch.undo()
    s = open_searcher(lib)
    with s.lock:
        assert s.bm25 is None
    assert [r["title"] for r in first["results"]] == [r["title"] for r in expected["results"]]


def test_the_servers_make_the_packages_they_search_warm(tmp_path):
    """MCP `get_docs` and the registry's page search serve many questions: each makes the
    packages it searches warm, as a Python caller can ask; a one-off search (the CLI's)
    leaves them cold."""
    import context_cli as cx
    from context_cli.mcp_server.tools import Catalog, get_docs
    from context_cli.search.searcher import open_searcher
    from registry_server.page_search import search_package

    store = Store()
    mcp, pages, python, cli = (store.install(make_package(tmp_path / f"{name}.db", name=name,
                                                          sections=_sections("streaming", 3)))
                               for name in ("alpha", "beta", "gamma", "delta"))
    assert get_docs(Catalog(store), {"library": mcp.label, "topic": "streaming"})["results"]
    assert search_package(pages.path, pages.id, "streaming").results
    assert cx.search("streaming", [python], warm=True).results
    assert search("streaming", [cli])["results"]
    assert [open_searcher(p).is_warm for p in (mcp, pages, python, cli)] == [True, True, True, False]
