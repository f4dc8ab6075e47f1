"""The embedder: our fast loader must agree with model2vec, and find_model must never guess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import EVAL_CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model2vec import StaticModel
from model2vec.model import quantize_model
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from context_cli.document import Chunk
from context_cli.embed import model as model_module
from context_cli.embed.model import (
    DEFAULT_MODEL_DIR,
    Embedder,
    clear_cache,
    find_model,
    load_model,
    shipped_model_name,
)
from context_cli.embed.text import MAX_CHARS, clean_body, code_gist, embed_text, first_sentence
from context_cli.errors import ModelUnavailable

REPO = Path(__file__).resolve().parent.parent
WORDS = ["[PAD]", "[UNK]", "the", "cat", "sat", "on", "mat", "dog", "ran", "fast", "stream", "##s", "##ing",
         "cancel", "pipe", "##line", "error", "retry", "a", "is"]
TEXTS = ["the cat sat on the mat", "The DOG ran fast!", "", "   ", "zebra quokka", "the zebra sat",
         "streams streaming pipelines", "cancel " * 40, "retry error " * 300]


def tiny_tokenizer() -> Tokenizer:
    """A 20-token lowercasing WordPiece tokenizer, built in memory."""
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return tok


def tiny_model(**kwargs) -> StaticModel:
    vectors = np.random.default_rng(7).normal(size=(len(WORDS), 8)).astype(np.float32)
    return StaticModel(vectors, tiny_tokenizer(), **{"normalize": True, **kwargs})


@pytest.fixture(autouse=True)
def fresh_models():
    clear_cache()
    yield
    clear_cache()


@pytest.fixture
def tiny_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny"
    tiny_model().save_pretrained(folder)
    return folder


def saved(model: StaticModel, folder: Path) -> Path:
    model.save_pretrained(folder)
    return folder


@pytest.mark.parametrize("fast", [False, True], ids=["tokenizers", "python-wordpiece"])
@pytest.mark.parametrize("variant", ["float32", "float16", "int8", "no-normalize", "max-length-4", "no-max-length"])
def test_folder_round_trip_matches_model2vec(tmp_path: Path, variant: str, fast: bool,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_module, "FAST_TOKENIZER_AFTER", 0 if fast else 10**9)
    model = {
        "float32": lambda: tiny_model(),
        "float16": lambda: quantize_model(tiny_model(), quantize_to="float16"),
        "int8": lambda: quantize_model(tiny_model(), quantize_to="int8"),
        "no-normalize": lambda: tiny_model(normalize=False),
        "max-length-4": lambda: tiny_model(max_length=4),
        "no-max-length": lambda: tiny_model(max_length=None),
    }[variant]()
    folder = saved(model, tmp_path / variant)
    theirs = StaticModel.from_pretrained(folder).encode(TEXTS).astype(np.float32)
    ours = load_model(str(folder))
    assert ours.dim == 8
    assert ours.name == variant
    np.testing.assert_allclose(ours.encode(TEXTS, normalize=None), theirs, atol=2e-3 if variant == "float16" else 1e-6)
    assert bool(ours._fast) == fast  # the Python WordPiece served the ASCII texts


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=300)
       | st.lists(st.sampled_from(["[UNK]", "[PAD]", "[unk]", "don't", "x" * 101, "café", "\x0b", " ", "__init__()",
                                   "Pipe", "##s", "a.b", "\t", "--", "`code`"]), max_size=12).map("".join))
def test_python_wordpiece_gives_the_tokenizers_ids(text: str) -> None:
    from context_cli.embed.wordpiece import AsciiWordPiece

    tokenizer = load_model().tokenizer
    fast = AsciiWordPiece.of(tokenizer.to_str())
    assert fast is not None
    if not fast.handles(text):
        assert not text.isascii() or "[UNK]" in text or "[PAD]" in text
        return
    assert fast.ids(text)[:512] == tokenizer.encode(text, add_special_tokens=False).ids


def test_python_wordpiece_on_real_docs_and_other_pipelines() -> None:
    from context_cli.embed.wordpiece import AsciiWordPiece

    tokenizer = load_model().tokenizer
    fast = AsciiWordPiece.of(tokenizer.to_str())
    assert fast is not None
    texts = [part for p in sorted(EVAL_CORPUS.rglob("*.md")) for part in p.read_text("utf-8").split("\n\n")]
    texts += [embed_text(chunk(t)) for t in texts]
    assert sum(fast.handles(t) for t in texts) > len(texts) / 2
    for t in texts:
        if fast.handles(t):
            assert fast.ids(t)[:512] == tokenizer.encode(t, add_special_tokens=False).ids
    other = Tokenizer(models.WordPiece({"a": 0, "[UNK]": 1}, unk_token="[UNK]"))
    other.pre_tokenizer = pre_tokenizers.Whitespace()
    assert AsciiWordPiece.of(other.to_str()) is None  # not the pipeline it reproduces: tokenizers does it


def test_encode_gives_unit_rows_and_zero_rows_for_empty_text(tiny_folder: Path) -> None:
    out = load_model(str(tiny_folder)).encode(["the cat", "", "zebra", "cat"])
    assert out.dtype == np.float32 and out.shape == (4, 8)
    norms = np.linalg.norm(out, axis=1)
    np.testing.assert_allclose(norms[[0, 3]], 1.0, rtol=1e-6)
    assert norms[1] == 0 and norms[2] == 0  # empty, and only unknown tokens
    np.testing.assert_array_equal(load_model(str(tiny_folder)).encode("cat"), out[3:4])


def test_unit_rows_even_when_the_model_does_not_normalise(tmp_path: Path) -> None:
    folder = saved(tiny_model(normalize=False), tmp_path / "raw")
    model = load_model(str(folder))
    np.testing.assert_allclose(np.linalg.norm(model.encode(["the cat sat"]), axis=1), 1.0, rtol=1e-6)
    assert not np.isclose(np.linalg.norm(model.encode(["the cat sat"], normalize=None)), 1.0)


def test_vocabulary_quantised_model_matches_model2vec(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    model = StaticModel(rng.normal(size=(5, 8)).astype(np.float32), tiny_tokenizer(), normalize=True,
                        weights=rng.uniform(0.5, 2, size=len(WORDS)).astype(np.float32),
                        token_mapping=rng.integers(0, 5, size=len(WORDS)))
    folder = saved(model, tmp_path / "vq")
    theirs = StaticModel.from_pretrained(folder).encode(TEXTS)
    np.testing.assert_allclose(load_model(str(folder)).encode(TEXTS, normalize=None), theirs, atol=1e-6)


def test_wrapping_a_static_model_matches_it() -> None:
    model = tiny_model(max_length=3)
    ours = Embedder.from_static_model(model, "tiny")
    np.testing.assert_allclose(ours.encode(TEXTS, normalize=None), model.encode(TEXTS), atol=1e-6)
    assert model.encode(["the cat sat on"]).shape == (1, 8)  # their tokenizer was left alone


def test_load_model_caches_per_spec(tiny_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = load_model(str(tiny_folder))
    assert load_model(str(tiny_folder)) is first
    assert load_model(str(tiny_folder / ".." / "tiny")) is first
    monkeypatch.setenv("CONTEXT_EMBED_MODEL", str(tiny_folder))
    assert load_model() is first


def test_fingerprint_is_stable_across_processes(tiny_folder: Path) -> None:
    here = load_model(str(tiny_folder)).fingerprint
    assert len(here) == 16 and int(here, 16) >= 0
    code = f"from context_cli.embed.model import load_model; print(load_model({str(tiny_folder)!r}).fingerprint)"
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert here == there


def test_fingerprint_changes_with_the_weights(tmp_path: Path) -> None:
    a = load_model(str(saved(tiny_model(), tmp_path / "a")))
    b = load_model(str(saved(quantize_model(tiny_model(), quantize_to="float16"), tmp_path / "b")))
    assert a.fingerprint != b.fingerprint


def test_find_model_in_models_dir(context_home: Path) -> None:
    saved(tiny_model(), context_home / "models" / "tiny")
    model = find_model("tiny", None)
    assert model is not None and model.name == "tiny"
    assert find_model("tiny", model.fingerprint) is model
    assert load_model("tiny") is model


def test_find_model_none_for_unknown_name_and_wrong_fingerprint(context_home: Path) -> None:
    saved(tiny_model(), context_home / "models" / "tiny")
    assert find_model("no-such-model", None) is None
    assert find_model("owner/no-such-model", None) is None
    assert find_model("", None) is None
    assert find_model("tiny", "0123456789abcdef") is None
    outside = saved(tiny_model(), context_home / "elsewhere")  # a package's meta must not point outside
    assert find_model(str(outside), None) is None
    assert find_model("../elsewhere", None) is None


def test_find_model_uses_only_the_local_hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "hf"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    assert find_model("someone/tiny-static", None) is None
    saved(tiny_model(), cache / "models--someone--tiny-static" / "snapshots" / "abc123")
    model = find_model("someone/tiny-static", None)
    assert model is not None and model.name == "someone/tiny-static"
    assert load_model("someone/tiny-static") is model


def test_load_missing_folder_raises(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailable, match="no embedding model"):
        load_model(str(tmp_path / "missing"))
    with pytest.raises(ModelUnavailable, match="no embedding model"):
        load_model("./not/here")


def test_load_folder_without_model_files_raises(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelUnavailable, match="not an embedding model folder"):
        load_model(str(tmp_path / "empty"))
    broken = saved(tiny_model(), tmp_path / "broken")
    (broken / "model.safetensors").write_bytes(b"not safetensors")
    with pytest.raises(ModelUnavailable, match="cannot read"):
        load_model(str(broken))


def test_bad_hub_id_raises_without_network(tmp_path: Path) -> None:
    code = (
        "from context_cli.embed.model import load_model\n"
        "from context_cli.errors import ModelUnavailable\n"
        "try:\n    load_model('nobody-here/no-such-static-model')\n"
        "except ModelUnavailable as e:\n    print('ModelUnavailable:', e)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "hf"), "HF_HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120).stdout
    assert out.startswith("ModelUnavailable: cannot load embedding model 'nobody-here/no-such-static-model'")
    assert len(out.strip().splitlines()) == 1


def test_shipped_model_loads_and_relates_sentences() -> None:
    model = load_model()
    assert load_model("default") is model
    assert model.name == shipped_model_name() == "context-minilm-distilled-256"
    assert model.dim == 256
    a, b, c = model.encode(["How do I stream the response tokens as they are generated?",
                            "Streaming messages: receive the output incrementally with server-sent events",
                            "The invoice total includes sales tax for your region"])
    assert float(a @ b) > float(a @ c) + 0.1
    assert find_model(model.name, model.fingerprint) is model
    assert find_model("default", None) is model
    assert find_model(model.name, "0" * 16) is None


def test_shipped_model_matches_model2vec() -> None:
    texts = ["Rate limits and how to handle 429 errors", "", "naïve café ☃ 𝔘nicode", "x" * 4000]
    theirs = StaticModel.from_pretrained(DEFAULT_MODEL_DIR).encode(texts)
    np.testing.assert_allclose(load_model().encode(texts, normalize=None), theirs, atol=1e-6)
    config = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text())
    assert config["normalize"] is True and config["embedding_dtype"] == "int8"
    for name in ("LICENSE", "NOTICE", "README.md"):
        assert (DEFAULT_MODEL_DIR / name).stat().st_size > 500


def test_importing_and_loading_stays_light(tiny_folder: Path) -> None:
    """The module must not drag in model2vec (+ huggingface_hub, ~0.6 s) or torch; folders neither."""
    heavy = ("model2vec", "huggingface_hub", "torch")
    code = (
        "import sys\nimport context_cli.embed.model as m\nimport context_cli.embed.text\n"
        f"print(sorted(k for k in ('numpy',) + {heavy!r} if k in sys.modules))\n"
        f"m.load_model({str(tiny_folder)!r}).encode(['the cat'])\nm.load_model().encode(['x'])\n"
        f"print(sorted(k for k in {heavy!r} if k in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["[]", "[]"]


def chunk(content: str, **kw) -> Chunk:
    return Chunk(doc_path="guide/stream.md", doc_title="Streaming", section_title=kw.pop("section", "Server-sent events"),
                 content=content, tokens=len(content) // 4, has_code="```" in content, **kw)


def test_embed_text_leads_with_title_and_first_sentence() -> None:
    text = embed_text(chunk("Responses arrive as events. Each event carries a delta.\n\nMore text here."))
    lines = text.splitlines()
    assert lines[0] == lines[1] == "Streaming > Server-sent events"
    assert lines[2] == "Responses arrive as events."
    assert "Each event carries a delta." in text


def test_embed_text_prefers_an_explicit_embed_text() -> None:
    assert embed_text(chunk("body", embed_text="POST /v1/messages create a message")) == \
        "POST /v1/messages create a message"


def test_embed_text_is_capped_and_pure() -> None:
    c = chunk("word " * 2000)
    assert len(embed_text(c)) == MAX_CHARS
    assert embed_text(c) == embed_text(c)
    assert len(embed_text(c, max_chars=0)) > 9000


def test_clean_body_drops_link_targets_tags_and_headings() -> None:
    body = clean_body("### Options\n\nSee [the guide](https://x.io/a/b) and <b>bold</b> ![logo](l.png) https://y.io/z")
    assert body.splitlines() == ["Options", "See the guide and bold logo"]


def test_code_blocks_keep_signatures_and_comments() -> None:
    md = ("Use it:\n\n```python\nimport streamlib\n\n# open a stream to the server\nx = 1\ny = 2\n"
          "def stream(url, *, timeout=30):\n    return open(url)\n```\nDone.")
    assert clean_body(md).splitlines() == ["Use it:", "import streamlib", "# open a stream to the server",
                                           "def stream(url, *, timeout=30):", "Done."]
    assert "x = 1" in clean_body(md, squash_code=False)
    assert code_gist(["", "   "]) == []


def test_first_sentence() -> None:
    assert first_sentence("Call `run()` first. Then wait.") == "Call `run()` first."
    assert first_sentence("A line without a stop\nsecond line") == "A line without a stop"
    assert first_sentence("v1.2 is out. Next") == "v1.2 is out."
    assert first_sentence("") == ""


def test_search_finds_the_model_context_embed_model_names(context_home: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A package built with CONTEXT_EMBED_MODEL=<folder> is searched with that model (matched by
    fingerprint), not silently lexically; without the variable the answer says lexical, loudly."""
    from context_cli.adding import AddRequest, add_source
    from context_cli.embed.model import clear_cache
    from context_cli.search.engine import answer
    from context_cli.search.searcher import clear_cache as clear_searchers

    folder = saved(tiny_model(), tmp_path / "elsewhere" / "my-model")
    docs = tmp_path / "docs"
    docs.mkdir()
    for topic in ("cats", "dogs", "birds"):
        (docs / f"{topic}.md").write_text(f"# {topic.title()}\n\n## About {topic}\n\n"
                                          f"The {topic} sat on the mat and looked at the garden for a while.\n", "utf-8")
    monkeypatch.setenv("CONTEXT_EMBED_MODEL", str(folder))
    installed = add_source(AddRequest(source=str(docs), name="tinydocs", version="1.0.0")).installed
    assert installed.meta.get("embedding_model")
    clear_cache()
    clear_searchers()
    found = answer("cats", [installed])
    assert found.searched == {"tinydocs@1.0.0": "hybrid"} and not found.notes

    monkeypatch.delenv("CONTEXT_EMBED_MODEL")
    clear_cache()
    clear_searchers()
    found = answer("cats", [installed])
    assert found.searched == {"tinydocs@1.0.0": "lexical"}
    assert any(n.startswith("tinydocs@1.0.0: searched lexically only") and "CONTEXT_EMBED_MODEL" in n
               for n in found.notes)


def test_info_says_when_search_will_be_lexical(context_home: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from context_cli.embed.model import clear_cache
    from context_cli.search.searcher import clear_cache as clear_searchers
    from context_cli.surfaces.cli import cli

    folder = saved(tiny_model(), tmp_path / "elsewhere" / "my-model")
    docs = tmp_path / "docs"
    docs.mkdir()
    for topic in ("cats", "dogs"):
        (docs / f"{topic}.md").write_text(f"# {topic.title()}\n\n## About {topic}\n\nThe {topic} sat on the mat.\n",
                                          "utf-8")
    monkeypatch.setenv("CONTEXT_EMBED_MODEL", str(folder))
    assert CliRunner().invoke(cli, ["add", str(docs), "--name", "tinydocs", "--pkg-version", "1"]).exit_code == 0
    shown = CliRunner().invoke(cli, ["info", "tinydocs"])
    assert "hybrid (BM25 + embeddings)" in shown.output
    monkeypatch.delenv("CONTEXT_EMBED_MODEL")
    clear_cache()
    clear_searchers()
    shown = CliRunner().invoke(cli, ["info", "tinydocs", "--json"])
    data = json.loads(shown.output)
    assert data["search"] == "lexical" and "CONTEXT_EMBED_MODEL" in data["searchNote"]
