"""What a warm process keeps per open package (page map, section sizes, page token totals,
BM25 postings) never outlives the file: a package reinstalled or removed meanwhile is searched
as it is now."""

from helpers import make_package

from context_cli.search.engine import search
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


def test_a_package_searched_again_reads_its_whole_section_map_once(tmp_path):
    """The first search reads the sections it ranks; the second, the whole map in one scan;
    later searches read no section map at all, and answer as before."""
    from context_cli.search.index import open_searchable

    store = Store()
    lib = store.install(make_package(tmp_path / "a.db", name="lib",
                                     sections=_sections("streaming", 6) + _sections("caching", 6)))
    s = open_searchable(lib)
    maps: list[str] = []
    s.pkg.db.set_trace_callback(lambda sql: maps.append(sql) if "length(content)" in sql else None)
    first = search("streaming", [lib])
    assert len(maps) == 1 and "WHERE id IN" in maps[0] and len(s._sections.pages) < 12
    second = search("caching", [lib])
    assert len(maps) == 2 and "WHERE id IN" not in maps[1] and len(s._sections.pages) == 12
    assert search("streaming", [lib]) == first and search("caching", [lib]) == second
    search("appears here", [lib])
    assert len(maps) == 2


def test_a_package_too_slow_for_its_whole_map_keeps_to_parts(tmp_path, monkeypatch):
    """The whole map is tried once: a package whose scan runs past its time limit fails that
    one search (as any slow package does) and is then read in parts again, never stalled twice."""
    import pytest

    from context_cli.errors import InvalidPackage
    from context_cli.package import reader
    from context_cli.search.index import open_searchable

    store = Store()
    lib = store.install(make_package(tmp_path / "a.db", name="lib",
                                     sections=_sections("streaming", 150) + _sections("caching", 150)))
    first = search("streaming", [lib])
    monkeypatch.setattr(reader, "LOAD_DEADLINE_S", 0.0)  # every whole-table read is now too slow
    with pytest.raises(InvalidPackage, match="too slow"):
        search("caching", [lib])
    s = open_searchable(lib)
    assert len(s._sections.pages) < 300
    assert search("caching", [lib])["results"] and search("streaming", [lib]) == first
    assert len(s._sections.pages) < 300
