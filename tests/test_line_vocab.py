"""The remembered vocabulary read as its lines (embed/line_vocab.py) gives every token the id
the dict of the same lines gives, found in the text or, after FIND_BEFORE_DICT lookups, from
the dict; and a cold query's lookups never build the dict."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from context_cli.embed import line_vocab
from context_cli.embed.line_vocab import FIND_BEFORE_DICT, LineVocab
from context_cli.embed.model import DEFAULT_MODEL_DIR, TokenizerJson, clear_cache, load_model


def shipped_tokens() -> list[str]:
    spec = json.loads((DEFAULT_MODEL_DIR / "tokenizer.json").read_text("utf-8"))
    return list(spec["model"]["vocab"])


def test_every_token_found_in_the_text_has_its_dict_id() -> None:
    tokens = shipped_tokens()
    want = dict(zip(tokens, range(len(tokens)), strict=True))
    asked = [*tokens[:20], *tokens[-20:], *tokens[5000:5020], "naïve", "##ing", "", "a\nb", "\n", "not-a-token", "[UNK]"]
    found = []
    for token in asked:
        vocab = LineVocab("\n".join(tokens), len(tokens))  # fresh: each one found in the text
        found.append(vocab.get(token))
        assert vocab._dict is None
    assert found == [want.get(t) for t in asked]
    assert sum(t is not None for t in found) > 60


def test_after_enough_lookups_the_dict_answers_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(line_vocab, "FIND_BEFORE_DICT", 3)
    tokens = shipped_tokens()
    want = dict(zip(tokens, range(len(tokens)), strict=True))
    vocab = LineVocab("\n".join(tokens), len(tokens))
    asked = ["the", "cat", "##s", "zzzq", "naïve", "a\nb", "[SEP]"]
    assert [vocab.get(t) for t in asked] == [want.get(t) for t in asked]
    assert vocab._dict is not None
    assert len(vocab) == len(want) and list(vocab.items()) == list(want.items())
    assert ("cat" in vocab, "zzzq" in vocab, 3 in vocab) == (True, False, False)
    with pytest.raises(KeyError):
        vocab["zzzq"]


@pytest.mark.parametrize("from_dict", [False, True])
def test_a_repeated_token_has_its_first_lines_id_either_way(from_dict: bool) -> None:
    vocab = LineVocab("[UNK]\ncat\nsat\ncat", 4)
    for _ in range(FIND_BEFORE_DICT + 1 if from_dict else 0):
        vocab.get("sat")
    assert (vocab._dict is not None) == from_dict
    assert (vocab.get("cat"), vocab["sat"], vocab.get("dog", -1)) == (1, 2, -1)
    assert list(vocab) == ["[UNK]", "cat", "sat"]


def test_a_cold_query_finds_its_tokens_without_the_dict(context_home: Path) -> None:
    """The model as a query loads it a second time (its vocabulary remembered): embedding one
    question and checking the tokenizer build no dict, and give the same vector."""
    clear_cache()
    first = load_model().encode(["how do I add a custom template filter"])
    clear_cache()
    model = load_model()
    vocab = model._json.vocab  # type: ignore[union-attr]
    assert isinstance(vocab, LineVocab)
    again = model.encode(["how do I add a custom template filter"])
    assert vocab._dict is None and (again == first).all()
    parsed = TokenizerJson.parse((DEFAULT_MODEL_DIR / "tokenizer.json").read_text("utf-8"))
    assert parsed is not None and model._json is not None
    assert (model._json.size, model._json.unk_id) == (parsed.size, parsed.unk_id)
    assert vocab._dict is None
