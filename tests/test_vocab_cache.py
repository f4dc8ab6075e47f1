"""A WordPiece vocabulary read once is remembered in the home (`embed.model.VOCABS`), so a
cold query splits lines instead of parsing the whole tokenizer.json; what it reads back is
exactly what the file says, and a changed, odd or unwritable case falls back to the file."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from context_cli.embed.model import (
    DEFAULT_MODEL_DIR,
    VOCABS,
    TokenizerJson,
    clear_cache,
    load_model,
    read_tokenizer_json,
)
from context_cli.embed.wordpiece import AsciiWordPiece

TEXTS = ["How do I add a custom manager method?", "select_related() vs prefetch_related", "naïve café ünïcode"]


def remembered(home: Path) -> list[Path]:
    return sorted((home / "models" / VOCABS).glob("*.txt"))


def assert_same(got: TokenizerJson | None, text: str) -> None:
    want = TokenizerJson.parse(text)
    assert got is not None and want is not None
    assert got.spec == want.spec
    assert list(got.vocab.items()) == list(want.vocab.items())  # the order too: it is the id order
    assert (got.added, got.unk_token, got.read()) == (want.added, want.unk_token, text)


def wordpiece(words: list[str]) -> str:
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok.to_str()


def test_the_shipped_vocabulary_read_back_is_the_files_own(tmp_path: Path, context_home: Path) -> None:
    path = tmp_path / "tokenizer.json"
    shutil.copyfile(DEFAULT_MODEL_DIR / "tokenizer.json", path)
    text = path.read_text("utf-8")
    assert_same(read_tokenizer_json(path), text)  # parsed, and remembered
    assert len(remembered(context_home)) == 1
    again = read_tokenizer_json(path)
    assert_same(again, text)
    fast, slow = AsciiWordPiece.of(again.spec), AsciiWordPiece.of(text)  # type: ignore[union-attr]
    assert fast is not None and slow is not None
    assert [fast.ids(t) for t in TEXTS[:2]] == [slow.ids(t) for t in TEXTS[:2]]


def test_what_is_remembered_is_what_a_fresh_read_uses(tmp_path: Path, context_home: Path) -> None:
    """Proof that the second read comes from the home: a remembered file edited by hand (two
    tokens swapped, the key kept) is what it returns."""
    path = tmp_path / "tokenizer.json"
    path.write_text(wordpiece(["[UNK]", "cat", "sat"]), "utf-8")
    read_tokenizer_json(path)
    (store,) = remembered(context_home)
    store.write_bytes(store.read_bytes().replace(b"\ncat\nsat", b"\nsat\ncat"))
    assert read_tokenizer_json(path).vocab == {"[UNK]": 0, "sat": 1, "cat": 2}  # type: ignore[union-attr]


def test_a_changed_tokenizer_is_read_again(tmp_path: Path, context_home: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_text(wordpiece(["[UNK]", "cat"]), "utf-8")
    read_tokenizer_json(path)
    changed = wordpiece(["[UNK]", "dog", "cat"])
    path.write_text(changed, "utf-8")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))  # a new mtime even on a coarse clock
    assert_same(read_tokenizer_json(path), changed)
    assert_same(read_tokenizer_json(path), changed)  # and that is what is remembered now
    assert len(remembered(context_home)) == 1  # one file per tokenizer path, replaced


@pytest.mark.parametrize("damage", [b"", b"garbage", b"\n\n\n", b"KEY\n{}\na\nb"])
def test_a_damaged_remembered_file_is_ignored(tmp_path: Path, context_home: Path, damage: bytes) -> None:
    path = tmp_path / "tokenizer.json"
    text = wordpiece(["[UNK]", "cat", "sat"])
    path.write_text(text, "utf-8")
    read_tokenizer_json(path)
    (store,) = remembered(context_home)
    store.write_bytes(damage.replace(b"KEY", store.read_bytes().split(b"\n", 1)[0]))
    assert_same(read_tokenizer_json(path), text)


def test_a_token_count_that_is_not_an_integer_is_damage(tmp_path: Path, context_home: Path) -> None:
    path = tmp_path / "tokenizer.json"
    text = wordpiece(["[UNK]", "cat", "sat"])
    path.write_text(text, "utf-8")
    read_tokenizer_json(path)
    (store,) = remembered(context_home)
    store.write_bytes(store.read_bytes().replace(b'"tokens": 3,', b'"tokens": 3.0,', 1))
    assert b'"tokens": 3.0,' in store.read_bytes()
    got = read_tokenizer_json(path)
    assert_same(got, text)
    assert got is not None and len(got.vocab) == 3


@pytest.mark.parametrize(("token", "kept"), [("a\rb", True), ("x y", True), ("a\nb", False), ("", True)])
def test_tokens_that_are_not_plain_words(tmp_path: Path, context_home: Path, token: str, kept: bool) -> None:
    """Tokens are stored one per line: a line break in one means the file is parsed every time."""
    path = tmp_path / "tokenizer.json"
    text = wordpiece(["[UNK]", token, "cat"])
    path.write_text(text, "utf-8")
    assert_same(read_tokenizer_json(path), text)
    assert_same(read_tokenizer_json(path), text)
    assert len(remembered(context_home)) == int(kept)


def test_a_home_that_cannot_be_written_only_costs_the_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("CONTEXT_HOME", str(tmp_path / "file" / "home"))
    path = tmp_path / "tokenizer.json"
    shutil.copyfile(DEFAULT_MODEL_DIR / "tokenizer.json", path)
    assert_same(read_tokenizer_json(path), path.read_text("utf-8"))


def test_a_model_with_a_remembered_vocabulary_embeds_the_same(context_home: Path) -> None:
    """Vectors, ASCII (plain-Python WordPiece) and not (`tokenizers`, from the file's text)."""
    clear_cache()
    first = load_model().encode(TEXTS)
    assert len(remembered(context_home)) == 1
    clear_cache()
    np.testing.assert_array_equal(load_model().encode(TEXTS), first)


@pytest.mark.parametrize("where", ["vocab", "added"])
def test_ids_that_are_not_integers_are_refused_read_or_remembered(tmp_path: Path, context_home: Path,
                                                                   where: str) -> None:
    """The file's vocabulary is checked when parsed; the remembered one is not checked again
    (its ids are its line numbers), but its added tokens still are."""
    import json

    spec = json.loads(wordpiece(["[UNK]", "cat", "sat"]))
    spec["added_tokens"] = [{"id": 0, "content": "[UNK]", "special": True}]
    path = tmp_path / "tokenizer.json"
    if where == "vocab":
        spec["model"]["vocab"]["cat"] = "1"
        path.write_text(json.dumps(spec), "utf-8")
        with pytest.raises(ValueError, match="integer ids"):
            read_tokenizer_json(path)
        assert not remembered(context_home)
        return
    path.write_text(json.dumps(spec), "utf-8")
    read_tokenizer_json(path)
    (store,) = remembered(context_home)
    damaged = store.read_bytes().replace(b'"id": 0', b'"id": "0"')
    assert damaged != store.read_bytes()
    store.write_bytes(damaged)
    assert read_tokenizer_json(path).added == {"[UNK]": 0}  # type: ignore[union-attr]  # the file read instead
