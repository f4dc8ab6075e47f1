"""Property-based fuzzing (hypothesis) of the parsers strangers feed: the query path, the
`--batch` reader, the package reader and the registry definitions parser.

Examples are few and deadlines off (a busy 2-core CI machine); each property is the
promise itself: an answer or one of our own errors, never anything else.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from context_cli.errors import ContextError, InvalidPackage
from context_cli.package.reader import open_package
from context_cli.search.engine import SearchOptions, search
from context_cli.store.store import Installed, Store

from . import hostile_packages as hp
from .runner import assert_ok, run

FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# Lone surrogates are issue 11 #9 (tested on their own); everything else is fair game here.
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=300)
WORDS = st.sampled_from(["streaming", "cancellation", "foo.bar", "ERR_X", "NEAR", "AND", "OR", "NOT", "*", '"',
                         "^", "-", "(", ")", ":", "col:", "{a b}", "\u00b2", "ｓｔｒｅａｍ", "the", "a" * 70])
QUERIES = st.one_of(TEXT, st.lists(WORDS, min_size=1, max_size=12).map(" ".join))


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> list[Installed]:
    """A store with the good package and an FTS5-only one (a Context-style package)."""
    root = tmp_path_factory.mktemp("fuzz-store")
    store = Store(root / "packages")
    store.install(hp.good_package(root / "good.db"))
    store.install(hp.lexical_only(hp.base_package(root / "fts.db", name="ftsonly")))
    return store.installed()


@FUZZ
@given(query=QUERIES, budget=st.integers(1, 5000), limit=st.integers(1, 20))
def test_query_path_answers_or_refuses(installed: list[Installed], query: str, budget: int, limit: int) -> None:
    try:
        answer = search(query, installed, SearchOptions(budget=budget, limit=limit))
    except ContextError:
        return
    json.dumps(answer, allow_nan=False)
    assert len(answer["results"]) <= limit


@settings(max_examples=4, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(lines=st.lists(st.one_of(
    st.builds(lambda i, q: json.dumps({"id": i, "query": q}), st.one_of(st.integers(), TEXT, st.none()), QUERIES),
    st.builds(lambda q: json.dumps({"query": q}), st.one_of(st.integers(), st.lists(st.integers()), st.none())),
    TEXT.filter(lambda t: "\n" not in t and "\r" not in t),
    st.binary(max_size=80).filter(lambda b: b"\n" not in b and b"\r" not in b),
), min_size=1, max_size=25))
def test_batch_reader_one_line_out_per_line_in(home: Path, tmp_path: Path, lines: list[str | bytes]) -> None:
    data = b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n"
    path = tmp_path / "batch.jsonl"
    path.write_bytes(data)
    # what the reader sees: UTF-8 with replacement, universal newlines, blank lines skipped
    expected = [x for x in io.StringIO(data.decode("utf-8", "replace"), newline=None) if x.strip()]
    o = run(["search", "--batch", str(path)], home, timeout=60)
    assert_ok(o)
    out = o.json_lines()
    assert len(out) == len(expected), o
    for item in out:
        assert isinstance(item, dict) and "id" in item and ("results" in item or "error" in item), item


@pytest.fixture(scope="module")
def package_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hp.base_package(tmp_path_factory.mktemp("fuzz-pkg") / "p.db")


@FUZZ
@given(seed=st.integers(0, 2**32 - 1), flips=st.integers(1, 40))
def test_package_reader_on_mutated_packages(package_file: Path, tmp_path: Path, seed: int, flips: int) -> None:
    """Random bytes of a real package overwritten: the reader refuses it with InvalidPackage,
    or it opens, and then a search over it answers or raises one of our errors."""
    rng = random.Random(seed)
    data = bytearray(package_file.read_bytes())
    for _ in range(flips):
        data[rng.randrange(len(data))] = rng.randrange(256)
    path = tmp_path / f"m{seed}.db"
    path.write_bytes(bytes(data))
    try:
        pkg = open_package(path, deep=True)
    except InvalidPackage:
        return
    pkg.close()
    root = tmp_path / f"store{seed}"
    try:
        inst = Store(root).install(path)
    except InvalidPackage:
        return
    try:
        json.dumps(search("evil streaming cancellation", [inst]), allow_nan=False)
    except ContextError:
        pass


DEF_KEYS = st.sampled_from(["name", "description", "repository", "versions", "source", "min_version",
                            "max_version", "tag_pattern", "type", "url", "docs_path", "ref", "lang",
                            "exclude_paths", "package", "docs_version", "site", "bogus"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), TEXT,
                    st.sampled_from(["git", "zip", "pypi", "npm", "v{version}", "1.0.0", "../..", "\u00b2"]))
YAML_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(DEF_KEYS, inner, max_size=5)),
                           max_leaves=25)


@FUZZ
@given(doc=st.dictionaries(st.sampled_from(["npm", "pip", "maven", "hex", "NPM", "../x", "1"]),
                           st.one_of(st.lists(st.dictionaries(DEF_KEYS, YAML_VALUES, max_size=6), max_size=3),
                                     YAML_VALUES), max_size=3))
def test_definitions_parser_reports_never_raises(tmp_path: Path, doc: dict) -> None:
    from registry.definitions import load

    path = tmp_path / "packages.yaml"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), "utf-8")
    result = load(path)
    assert result.definitions or result.errors
    for problem in result.errors:
        str(problem)


@FUZZ
@given(text=TEXT)
def test_definitions_parser_on_raw_text(tmp_path: Path, text: str) -> None:
    from registry.definitions import load

    path = tmp_path / "packages.yaml"
    path.write_text(text, "utf-8")
    load(path)


# Lockfile and manifest parsers (`context sync`, DESIGN §5) are not on this branch yet; when
# they land, fuzz them here the same way (see lockfile_fuzz_placeholder.py).
