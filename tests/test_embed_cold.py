"""A cold query reads the model without `tokenizers` or `safetensors`, and gets the same vectors.

The model folder's tokenizer.json is read as plain JSON (TokenizerJson) and its weights are
memory-mapped (read_safetensors); these tests hold both to what the libraries themselves read.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model2vec import StaticModel
from model2vec.model import quantize_model
from safetensors.numpy import load_file
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from context_cli.adding import AddRequest, add_source
from context_cli.embed import model as model_module
from context_cli.embed.model import DEFAULT_MODEL_DIR, TokenizerJson, clear_cache, load_model, read_safetensors
from context_cli.errors import ModelUnavailable

WORDS = ["[PAD]", "[UNK]", "the", "cat", "sat", "on", "mat", "##s", "é"]


@pytest.fixture(autouse=True)
def fresh_models():
    clear_cache()
    yield
    clear_cache()


def wordpiece(added: list[str] = (), special: list[str] = ()) -> Tokenizer:
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.add_tokens(list(added))
    tok.add_special_tokens(list(special))
    return tok


@pytest.mark.parametrize("tokenizer", [
    Tokenizer.from_file(str(DEFAULT_MODEL_DIR / "tokenizer.json")),
    wordpiece(),
    wordpiece(added=["newword", "cat"], special=["[UNK]", "[MASK]"]),  # some new, some already in the vocabulary
], ids=["shipped", "tiny", "added-tokens"])
def test_tokenizer_json_knows_what_tokenizers_knows(tokenizer: Tokenizer) -> None:
    facts = TokenizerJson.parse(tokenizer.to_str())
    assert facts is not None
    assert facts.size == len(facts.tokens) == tokenizer.get_vocab_size()
    assert sorted(facts.tokens) == sorted(tokenizer.get_vocab())
    assert facts.unk_id == tokenizer.token_to_id("[UNK]")


def test_tokenizer_json_leaves_other_models_to_tokenizers() -> None:
    bpe = Tokenizer(models.BPE({"a": 0, "b": 1, "ab": 2}, [("a", "b")]))
    assert TokenizerJson.parse(bpe.to_str()) is None
    with pytest.raises(ValueError):
        TokenizerJson.parse(json.dumps({"model": {"type": "WordPiece", "vocab": {"a": "zero"}, "unk_token": "a"}}))


def tiny_model(**kwargs) -> StaticModel:
    vectors = np.random.default_rng(3).normal(size=(len(WORDS), 6)).astype(np.float32)
    return StaticModel(vectors, wordpiece(), **{"normalize": True, **kwargs})


@pytest.mark.parametrize("variant", ["float32", "float16", "int8", "vocabulary-quantised"])
def test_read_safetensors_gives_what_the_library_reads(tmp_path: Path, variant: str) -> None:
    model = {
        "float32": tiny_model,
        "float16": lambda: quantize_model(tiny_model(), quantize_to="float16"),
        "int8": lambda: quantize_model(tiny_model(), quantize_to="int8"),
        "vocabulary-quantised": lambda: StaticModel(
            np.random.default_rng(5).normal(size=(3, 6)).astype(np.float32), wordpiece(), normalize=True,
            weights=np.linspace(0.5, 1.5, len(WORDS)).astype(np.float32),
            token_mapping=np.arange(len(WORDS)) % 3),
    }[variant]()
    model.save_pretrained(tmp_path / variant)
    path = tmp_path / variant / "model.safetensors"
    theirs, ours = load_file(str(path)), read_safetensors(path)
    assert sorted(ours) == sorted(theirs)
    for key, array in theirs.items():
        assert ours[key].dtype == array.dtype and ours[key].shape == array.shape
        assert np.array_equal(ours[key], array)
        assert not ours[key].flags.writeable  # a view of the file, never a copy to change


def test_damaged_weights_are_refused_with_one_line(tmp_path: Path) -> None:
    tiny_model().save_pretrained(tmp_path / "good")
    good = (tmp_path / "good" / "model.safetensors").read_bytes()
    (n,) = struct.unpack("<Q", good[:8])
    header = json.loads(good[8:8 + n])
    key = next(k for k in header if k != "__metadata__")
    header[key]["data_offsets"][1] += 4  # a tensor that claims more bytes than its shape needs
    longer = json.dumps(header).encode()
    damaged = {
        "truncated": good[:-10],
        "header-past-end": struct.pack("<Q", 10**9) + good[8:],
        "header-not-json": struct.pack("<Q", 4) + b"{{{{" + good[12:],
        "tensor-misfit": struct.pack("<Q", len(longer)) + longer + good[8 + n:] + b"\0" * 4,
        "tiny": b"\x01\x02",
        "unknown-dtype": good.replace(b'"dtype":"F32"', b'"dtype":"X32"'),
    }
    for name, data in damaged.items():
        folder = tmp_path / name
        tiny_model().save_pretrained(folder)
        (folder / "model.safetensors").write_bytes(data)
        with pytest.raises(ValueError):
            read_safetensors(folder / "model.safetensors")
        with pytest.raises(ModelUnavailable, match=r"^cannot read embedding model in .*") as e:
            load_model(str(folder))
        assert "\n" not in str(e.value)


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=80)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(TEXT | st.sampled_from(["naïve café", "[UNK] token", "x" * 120, "ÅNGSTRÖM units", "日本語のテキスト",
                                        "How do I add a custom template filter?", "get_or_create()", "\x00\x0b"]),
                min_size=1, max_size=4))
def test_the_query_path_gives_the_tokenizers_vectors(texts: list[str]) -> None:
    """Read as JSON and tokenized in Python where it can, the shipped model embeds any text
    (non-ASCII, control characters, added tokens) exactly as through `tokenizers`."""
    quick = load_model()
    ids, vectors = quick._token_ids(texts), quick.encode(texts)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(model_module, "FAST_TOKENIZER_AFTER", 10**9)  # `tokenizers` does every text
        slow = model_module.load_folder(DEFAULT_MODEL_DIR)
        assert slow._token_ids(texts) == ids
        assert np.array_equal(slow.encode(texts), vectors)


def test_long_texts_are_cut_as_model2vec_cuts_them() -> None:
    """Texts over max_length characters are cut at max_length x the median token length,
    which the JSON reading computes from the same tokens as `tokenizers`' vocabulary."""
    text = "documentation " * 400
    theirs = StaticModel.from_pretrained(DEFAULT_MODEL_DIR).encode([text])
    np.testing.assert_allclose(load_model().encode([text], normalize=None), theirs, atol=1e-6)


def test_a_cold_query_loads_neither_tokenizers_nor_safetensors(docs_folder: Path, context_home: Path) -> None:
    """`context query` on a package with vectors: hybrid search, and the import list of the
    process holds no `tokenizers`, `safetensors`, model2vec, MCP or parser module."""
    add_source(AddRequest(source=str(docs_folder), name="mylib", version="1.0.0"))
    env = {**os.environ, "CONTEXT_HOME": str(context_home), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "context_cli", "query", "mylib",
                           "how do I stop a pipeline halfway"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["searched"] == {"mylib@1.0.0": "hybrid"}
    assert answer["results"][0]["source"] == "guide/cancel.md"
    imported = {line.rsplit("|", 1)[1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    for heavy in ("tokenizers", "safetensors", "model2vec", "mcp", "docutils", "markdown_it", "requests"):
        assert heavy not in imported
    assert "numpy" in imported  # the search itself needs it: the check above saw real imports


def test_a_weights_fingerprint_is_hashed_once_and_again_when_the_file_changes(tmp_path: Path,
                                                                            context_home: Path) -> None:
    """A fresh process finds the fingerprint recorded by an earlier one (no hashing, not even
    hashlib imported); new weights in the same folder are hashed again."""
    folder = tmp_path / "tiny"
    tiny_model().save_pretrained(folder)
    first = load_model(str(folder)).fingerprint
    recorded = json.loads((context_home / "models" / model_module.FINGERPRINTS).read_text())
    assert list(recorded.values()) == [first]
    code = ("import sys\nfrom context_cli.embed.model import load_model\n"
            f"m = load_model({str(folder)!r})\nprint(m.fingerprint, 'hashlib' in sys.modules)\n")
    env = {**os.environ, "CONTEXT_HOME": str(context_home)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == [first, "False"]
    clear_cache()
    StaticModel(np.ones((len(WORDS), 6), dtype=np.float32), wordpiece(), normalize=True).save_pretrained(folder)
    again = load_model(str(folder)).fingerprint
    assert again != first
    assert again == model_module.weights_fingerprint(np.ones((len(WORDS), 6), dtype=np.float32))
