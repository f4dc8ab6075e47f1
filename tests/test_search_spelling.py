"""Spelling correction against a package's own vocabulary (search/spelling.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from helpers import make_package
from hypothesis import given
from hypothesis import strategies as st

from context_cli.package.bm25 import stemmer
from context_cli.search.spelling import Vocabulary, allowed_distance, distance, plausible

FIXTURE = Path(__file__).parent / "fixtures" / "eval" / "click-docs"


VOCAB = Vocabulary.of({"parallel": 40, "middlewar": 25, "session": 60, "templat": 90, "temple": 3,
                     "foreign": 12, "widget": 30, "rare": 1, "rarely": 1, "shadow": 9, "shallow": 8,
                     "connect": 50, "track": 20}.items())


def test_corrects_real_typos_to_frequent_terms() -> None:
    assert VOCAB.correct("parralel") == "parallel"  # two edits, long word
    assert VOCAB.correct("sesion") == "session"  # one deletion
    assert VOCAB.correct("widgit") == "widget"  # one substitution
    assert VOCAB.correct("foriegn") == "foreign"  # one transposition
    assert VOCAB.correct("middlwar") == "middlewar"  # porter stems both sides


def test_leaves_known_short_and_identifier_terms_alone() -> None:
    assert VOCAB.correct("session") is None  # in the vocabulary
    assert VOCAB.correct("sesn") is None  # too short to correct
    assert VOCAB.correct("utf8") is None and allowed_distance("widg3t") == 0  # digits
    assert allowed_distance("max_length") == 0  # an identifier
    assert VOCAB.correct("2024") is None


def test_never_corrects_to_a_rare_term_or_across_the_first_letter() -> None:
    assert VOCAB.correct("rarelly") is None  # "rarely" is in one section only
    assert VOCAB.correct("connekt") == "connect"
    assert VOCAB.correct("xonnect") is None  # first letters differ
    assert VOCAB.correct("reconnect") is None  # a known word with a prefix: a compound
    assert VOCAB.correct("ontrack") is None


def test_close_rivals_make_no_correction() -> None:
    assert VOCAB.correct("shadlow") is None  # one edit from "shadow" and "shallow", as frequent
    assert VOCAB.correct("tempalte") == "templat"  # the frequent one beats "temple"


def test_a_real_package_vocabulary(tmp_path: Path) -> None:
    """The rows a package built by our writer stores (bm25_terms), queried as stems."""
    pages = sorted(FIXTURE.glob("*.md"))
    db_path = make_package(tmp_path / "p.db", "click",
                           sections=[(p.name, "Intro", p.read_text()) for p in pages])
    with sqlite3.connect(db_path) as db:
        vocab = Vocabulary.of(db.execute("SELECT term, df FROM bm25_terms"))
    stem = stemmer().tokens(["comand", "paramters", "command"])
    assert vocab.correct(stem["comand"][0]) == stem["command"][0]
    assert vocab.correct(stem["paramters"][0]) == stemmer().tokens(["parameters"])["parameters"][0]


words = st.text(alphabet="abcdefghij", min_size=0, max_size=9)


@given(words, words)
def test_distance_is_symmetric_and_bounded(a: str, b: str) -> None:
    d = distance(a, b, 3)
    assert d == distance(b, a, 3)
    assert (d == 0) == (a == b)
    assert d <= 4


@given(words, st.integers(0, 8), st.sampled_from("abcdefghij"))
def test_distance_counts_one_edit(a: str, at: int, c: str) -> None:
    at = min(at, len(a))
    assert distance(a, a[:at] + c + a[at:], 2) == 1  # an insertion
    if at + 1 < len(a) and a[at] != a[at + 1]:
        assert distance(a, a[:at] + a[at + 1] + a[at] + a[at + 2:], 2) == 1  # a transposition


@given(st.sampled_from(sorted(t for t, n in VOCAB.df.items() if n >= 3 and len(t) >= 5)),
       st.integers(1, 10), st.sampled_from("dis"), st.sampled_from("bkqvz"))
def test_one_edit_after_the_first_letter_is_found(term: str, at: int, op: str, c: str) -> None:
    at = 1 + (at - 1) % (len(term) - 1)
    typo = {"d": term[:at] + term[at + 1:], "i": term[:at] + c + term[at:], "s": term[:at] + c + term[at + 1:]}[op]
    fixed = VOCAB.correct(typo)
    if typo in VOCAB.df or allowed_distance(typo) == 0 or typo in term or not plausible(typo, term):
        return
    if fixed is None:  # near terms of like frequency tie, and a tie is no correction (`correct`)
        d = distance(typo, term, 2)
        assert any(t != term and n >= 3 and distance(typo, t, 2) <= d for t, n in VOCAB.df.items())
        return
    assert distance(typo, fixed, 2) <= distance(typo, term, 2)


def test_a_search_adds_the_correction_beside_the_word_and_says_so(tmp_path: Path) -> None:
    """A word the package lacks is also searched as the package's own word a typo away; a real
    English word it lacks is meant as typed and searched alone (docs/search.md, step 1)."""
    import context_cli as cx
    from context_cli.search.engine import answer, rank
    from context_cli.search.searcher import open_searcher

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "threads.md").write_text("# Threads\n\n## Work in parallel\n\nRun the workers in parallel; parallel "
                                     "runs share one parallel pool.\n", "utf-8")
    for name in ("queues", "limits", "tasks"):  # (a correction must be a term of 3 sections)
        (docs / f"{name}.md").write_text(f"# {name.title()}\n\n## Parallel {name}\n\nSome {name} run in "
                                         "parallel.\n", "utf-8")
    (docs / "about.md").write_text("# About\n\n## Workers\n\nThe workers read the queue.\n", "utf-8")
    installed = cx.build(docs, tmp_path / "p.db", name="p", version="1.0.0", embed=False)
    found = answer("a parralel pool", [installed])
    assert found.results[0].source == "threads.md"
    assert any("also searched for 'parallel' (for 'parralel')" in n for n in found.notes)
    assert found.results[0].signals["missingTerms"] == ["parralel"]  # (honest: the word itself is not there)
    _, notes, _ = rank("a parallelism pool", [open_searcher(installed)], "lexical")
    assert not any("also searched" in n for n in notes)  # "parallelism": an English word, meant as typed


def test_one_correction_in_several_packages_is_one_note_naming_them(tmp_path: Path) -> None:
    import context_cli as cx
    from context_cli.search.engine import answer

    packages = []
    for name in ("p", "q"):
        docs = tmp_path / name
        docs.mkdir()
        for page in ("queues", "limits", "tasks"):
            (docs / f"{page}.md").write_text(f"# {page.title()}\n\n## Parallel {page}\n\nSome {page} of {name} run "
                                             "in parallel.\n", "utf-8")
        packages.append(cx.build(docs, tmp_path / f"{name}.db", name=name, version="1.0.0", embed=False))
    notes = [n for n in answer("a parralel pool", packages).notes if "also searched" in n]
    assert notes == ["p@1.0.0, q@1.0.0: also searched for 'parallel' (for 'parralel')"]


def test_corrections_only_for_words_the_package_lacks() -> None:
    from context_cli.search.query import Query
    from context_cli.search.spelling import corrections

    q = Query.of("sesion widgit readers foriegn")
    asked: list[int] = []

    def vocabulary(first: str) -> Vocabulary:
        asked.append(1)
        return VOCAB

    assert corrections(q, [None, object(), None, None], vocabulary) == [("sesion", "session"), ("foriegn", "foreign")]
    assert len(asked) == 2  # (one read a word to correct)
    assert corrections(q, [object()] * 4, vocabulary) == [] and len(asked) == 2  # (nothing lacking: nothing read)
    assert corrections(q, [None, object(), None, None], vocabulary, held={"sesion"}) == [("foriegn", "foreign")]
