"""Hostile input from the user's own side of the fence, which still comes from strangers:
a `--batch` file an agent wrote, query text pasted from a web page, a `packages.yaml`
from a pull request. Real CLIs in child processes, bounded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .runner import REGISTRY, Outcome, assert_bounded, assert_ok, assert_one_line_error, run


def batch(home: Path, tmp_path: Path, lines: list[str | bytes]) -> Outcome:
    path = tmp_path / "batch.jsonl"
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return run(["search", "--batch", str(path)], home, timeout=30)


def assert_batch_answers(o: Outcome, expected: int) -> list[dict]:
    """Exit 0 and one strict-JSON line per input line, each an answer or an error."""
    assert_ok(o)
    out = o.json_lines()
    assert len(out) == expected, o
    for item in out:
        assert isinstance(item, dict) and "id" in item and ("results" in item or "error" in item), item
    return out  # type: ignore[return-value]


def test_batch_bad_lines_get_error_lines(home: Path, tmp_path: Path) -> None:
    lines: list[str | bytes] = [
        json.dumps({"id": 1, "query": "streaming"}),
        "not json at all",
        "[1, 2, 3]",
        json.dumps({"id": 4, "query": 42}),
        json.dumps({"id": {"nested": [1, 2]}, "query": "cancellation"}),
        b"\xff\xfe\xfd invalid utf-8",
        json.dumps({"id": 7, "query": "x" * 1_000_000}),
        json.dumps({"id": 8, "query": '"NEAR(a b)" OR * ^ - : ( ) {col}: AND NOT'}),
        json.dumps({"id": 9, "query": "   "}),
        json.dumps({"id": 10, "query": "cancellation"}),
    ]
    out = assert_batch_answers(batch(home, tmp_path, lines), len(lines))
    assert out[0]["id"] == 1 and out[0]["results"]
    assert out[-1]["id"] == 10 and out[-1]["results"]
    assert "error" in out[1] and "error" in out[3]


def test_batch_lone_surrogate_line(home: Path, tmp_path: Path) -> None:
    lines: list[str | bytes] = [json.dumps({"id": 1, "query": "streaming"}),
                                '{"id": 2, "query": "a\\ud800b streaming"}',
                                json.dumps({"id": 3, "query": "cancellation"})]
    out = assert_batch_answers(batch(home, tmp_path, lines), 3)
    assert [x["id"] for x in out] == [1, 2, 3]


def test_batch_deeply_nested_line(home: Path, tmp_path: Path) -> None:
    lines: list[str | bytes] = [json.dumps({"id": 1, "query": "streaming"}), "[" * 100_000,
                                json.dumps({"id": 3, "query": "cancellation"})]
    assert_batch_answers(batch(home, tmp_path, lines), 3)


@pytest.mark.parametrize("topic", [
    "x" * 100_000,
    '"unbalanced NEAR( OR * ^ col: -',
    "\u202e\u0000\u200b zero width and bidi",
    "ｓｔｒｅａｍｉｎｇ ＣＡＮＣＥＬ",
    "a." * 5000,
], ids=["100k_chars", "fts_syntax", "bidi_nul_zero_width", "fullwidth", "5000_dots"])
def test_search_topic_text_is_never_syntax(topic: str, home: Path) -> None:
    o = run(["search", topic.replace("\u0000", ""), "--format", "json"], home, timeout=20)
    assert_ok(o)
    o.json()


@pytest.mark.parametrize("lib", ["../../etc/passwd", "@", "", pytest.param("x" * 5000, id="long"),
                                 "npm/", "/", "a@b@c"])
def test_search_bad_lib_spec_one_line(lib: str, home: Path) -> None:
    assert_one_line_error(run(["search", "streaming", "--lib", lib], home, timeout=20))


def _laughs(depth: int) -> str:
    text = "a: &a [x, x, x, x, x, x, x, x, x]\n"
    prev = "a"
    for i in range(1, depth):
        text += f"l{i}: &l{i} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
        prev = f"l{i}"
    return text + f"npm:\n  - name: boom\n    description: *{prev}\n    source: {{type: npm}}\n"


def validate(path: Path, home: Path) -> Outcome:
    return run(["validate", str(path)], home, timeout=6, program=REGISTRY)


@pytest.mark.parametrize("text", [
    "npm: [",
    "- just\n- a list\n",
    "npm:\n  - name: ../../x\n    source: {type: git, url: 'file:///etc'}\n",
    "npm:\n  - {name: a, versions: [{min_version: '\u00b2', source: {type: npm}}]}\n",
    "!!python/object/apply:os.system ['echo pwned']\n",
    "npm: " + "[" * 3000 + "]" * 3000 + "\n",
    "npm:\n  - {name: a, versions: [{min_version: '1.0', docs_version: '1.x', source: "
    "{type: git, url: 'https://x.test/a', ref: '--upload-pack=touch pwned'}}]}\n",
    "npm:\n  - {name: a, versions: [{min_version: '1.0', docs_version: \"1.x\\n../\", source: "
    "{type: git, url: 'https://x.test/a'}}]}\n",
], ids=["broken", "list", "traversal", "unicode_digit", "python_tag", "deep", "ref_option", "docs_version_newline"])
def test_definitions_validate_reports_problems(text: str, tmp_path: Path, home: Path) -> None:
    path = tmp_path / "packages.yaml"
    path.write_text(text, "utf-8")
    o = validate(path, home)
    assert_bounded(o)
    assert o.rc != 0, o
    assert "Traceback" not in o.stderr and "internal error" not in o.stderr, o
    assert not (tmp_path / "pwned").exists()


def test_definitions_billion_laughs_bounded(tmp_path: Path, home: Path) -> None:
    path = tmp_path / "packages.yaml"
    path.write_text(_laughs(10), "utf-8")
    o = validate(path, home)
    assert_bounded(o)
