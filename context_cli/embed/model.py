"""Load static embedding models (model2vec format) and encode text with them.

A model folder is what model2vec's `save_pretrained` writes: `config.json`, `model.safetensors`
(tensor `embeddings`, optionally `weights` and `mapping` after vocabulary quantisation) and
`tokenizer.json`. Folders and the shipped model are read here without model2vec (importing it
pulls in huggingface_hub and costs ~0.6 s on a cold CLI start), and a query loads neither
`safetensors` nor `tokenizers`: the weights are memory-mapped (a query touches a few rows of
them), and a WordPiece tokenizer.json is read as plain JSON and tokenizes ASCII text with
embed/wordpiece.py (same ids), so building the `tokenizers` tokenizer (~35 ms) waits until a
text needs it. Only a hub id that is not in the local cache goes through model2vec's
`from_pretrained`.

`Embedder.encode` reproduces `StaticModel.encode` (same truncation, unknown-token removal and
mean pooling; tested against it). float16 weights are upcast to float32 once, because float16
arithmetic is about twice as slow; int8 weights are summed exactly in int32. numpy is imported
inside functions so that importing this module stays cheap.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import threading
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from context_cli.errors import ModelUnavailable
from context_cli.home import models_dir

from ..environment import EMBED_MODEL

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Tokenizer

    from .wordpiece import AsciiWordPiece

DEFAULT_MODEL = "default"
ENV_VAR = EMBED_MODEL.name
DEFAULT_MODEL_DIR = Path(__file__).parent / "default_model"
DEFAULT_MAX_LENGTH = 512  # model2vec's default when config.json has no max_length
_BATCH = 1024  # texts per tokenizer call (the tokenizer spreads a batch over all cores)
# Texts an Embedder tokenizes before the plain-Python WordPiece takes over: at once, so a query
# never builds the `tokenizers` tokenizer (tests raise it to compare both paths).
FAST_TOKENIZER_AFTER = 0
# Fingerprints of weights files already hashed (in models_dir(); key: path, size and mtime):
# hashing the shipped model's 7.5 MB costs a cold query ~8 ms, and it is the same every time.
FINGERPRINTS = ".fingerprints.json"
# WordPiece vocabularies already read (in models_dir(), one file per tokenizer.json path; see
# `read_tokenizer_json`): json.loads of the shipped 450 KB tokenizer.json costs every cold
# query ~19 ms; the same tokens stored one per line are looked up in their text
# (embed/line_vocab.py).
VOCABS = ".vocab"
# safetensors dtype names -> numpy (the format is little-endian); model2vec writes F32, F16 and I8.
SAFETENSORS_DTYPES = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4", "I16": "<i2",
                      "I8": "i1", "U8": "u1", "BOOL": "?"}

_cache: dict[str, Embedder] = {}
_lock = threading.Lock()


class Layout:
    """One accepted arrangement of model files (the three model2vec itself reads), and the
    name of the weights' tensor in the first."""

    __slots__ = ("config", "embeddings", "tokenizer", "tensor")

    def __init__(self, config: str, embeddings: str, tokenizer: str, tensor: str) -> None:
        self.config, self.embeddings, self.tokenizer, self.tensor = config, embeddings, tokenizer, tensor

    def valid(self, folder: Path) -> bool:
        return all((folder / p).is_file() for p in (self.config, self.embeddings, self.tokenizer))


LAYOUTS = (
    Layout("config.json", "model.safetensors", "tokenizer.json", "embeddings"),
    Layout("config_sentence_transformers.json", "model.safetensors", "tokenizer.json", "embedding.weight"),
    Layout(
        "config_sentence_transformers.json",
        "0_StaticEmbedding/model.safetensors",
        "0_StaticEmbedding/tokenizer.json",
        "embedding.weight",
    ),
)


class TokenizerJson:
    """A WordPiece tokenizer.json read as plain JSON: enough to check a model against its
    weights and to tokenize ASCII text (embed/wordpiece.py), so that the `tokenizers`
    tokenizer is built only for a text that needs it. `vocab` and `added` map tokens to ids;
    `read` gives the file's text again, for that tokenizer (it is not kept in memory)."""

    __slots__ = ("spec", "vocab", "added", "unk_token", "read")

    def __init__(self, spec: dict[str, Any], vocab: Mapping[str, int], added: dict[str, int],
                 unk_token: str | None, read: Callable[[], str]) -> None:
        self.spec = spec  # the parsed text
        self.vocab = vocab  # a dict, or the remembered vocabulary's lines (embed/line_vocab.py)
        self.added, self.unk_token, self.read = added, unk_token, read

    @classmethod
    def parse(cls, text: str) -> TokenizerJson | None:
        """The tokenizer file's facts, or None when its model is not WordPiece (then only
        `tokenizers` reads it). Raises ValueError for JSON that is not a tokenizer."""
        return cls.of(json.loads(text), lambda: text)

    @classmethod
    def of(cls, spec: Any, read: Callable[[], str], vocab: Mapping[str, int] | None = None) -> TokenizerJson | None:
        """`parse`, of the text already parsed (`spec`). `vocab` is its model's vocabulary when
        its ids are integers already (the remembered one's are its line numbers): it is not
        checked again."""
        model = spec.get("model") if isinstance(spec, dict) else None
        if not isinstance(model, dict) or model.get("type") != "WordPiece":
            return None
        unk = model.get("unk_token")
        added = {t["content"]: t["id"] for t in spec.get("added_tokens") or []}
        unchecked = model.get("vocab") if vocab is None else {}
        if not isinstance(unchecked, dict) or not {*map(type, unchecked.values()), *map(type, added.values())} <= {int}:
            raise ValueError("tokenizer.json: a WordPiece vocabulary maps tokens to integer ids")
        return cls(spec, unchecked if vocab is None else vocab, added, unk if isinstance(unk, str) else None, read)

    @property
    def size(self) -> int:
        """How many tokens there are, as `Tokenizer.get_vocab_size()` counts them."""
        return len(self.vocab) + sum(t not in self.vocab for t in self.added)

    @property
    def tokens(self) -> list[str]:
        """Every token, as `Tokenizer.get_vocab()` has them (the vocabulary and the added tokens)."""
        return [*self.vocab, *(t for t in self.added if t not in self.vocab)]

    @property
    def unk_id(self) -> int | None:
        """The unknown token's id, looked up as `Tokenizer.token_to_id` does (added tokens first)."""
        if self.unk_token is None:
            return None
        return self.added.get(self.unk_token, self.vocab.get(self.unk_token))


class Embedder:
    """A loaded static model: token vectors, its tokenizer and model2vec's encode settings."""

    def __init__(
        self,
        name: str,
        vectors: np.ndarray,
        tokenizer: Tokenizer | TokenizerJson,
        *,
        normalize: bool = False,
        max_length: int | None = DEFAULT_MAX_LENGTH,
        weights: np.ndarray | None = None,
        mapping: np.ndarray | None = None,
        fingerprint: str | None = None,
    ) -> None:
        import numpy as np

        self.name = name
        self.fingerprint = fingerprint or weights_fingerprint(vectors, weights, mapping)
        # int8 stays int8 and is summed in int32: exact, faster than float32, and it skips a
        # 30 MB upcast whose page faults cost ~80 ms of a cold start. model2vec's int8 format
        # stores no scale (only directions matter), and it too means int8 values as floats.
        # float16 is upcast: its arithmetic is about twice as slow.
        self._acc: type[np.number[Any]]
        if vectors.dtype == np.int8:
            self.vectors, self._acc = np.ascontiguousarray(vectors), np.int32
        else:
            self.vectors, self._acc = np.ascontiguousarray(vectors, dtype=np.float32), np.float32
        if max_length is None or max_length * 127 >= 2**31:
            self._acc = np.int64 if self._acc == np.int32 else self._acc
        self.weights = None if weights is None else np.asarray(weights, dtype=np.float32)
        self.mapping = None if mapping is None else np.asarray(mapping, dtype=np.int64)
        self.normalize = bool(normalize)
        self.max_length = max_length
        self._json: TokenizerJson | None = None
        self._tokenizer: Tokenizer | None = None
        if isinstance(tokenizer, TokenizerJson):
            self._json, size, self._unk = tokenizer, tokenizer.size, tokenizer.unk_id
        else:
            self._tokenizer = self._configured(tokenizer)
            size, self._unk = tokenizer.get_vocab_size(), _unk_token_id(tokenizer)
        if mapping is None and size != len(self.vectors):
            raise ModelUnavailable(
                f"embedding model {name!r} is inconsistent: {size} tokens but {len(self.vectors)} vectors"
            )
        self._char_cap_value: int | None = None
        self._texts_seen = 0
        self._fast: AsciiWordPiece | None | Literal[False] = False  # False: not set up yet

    @property
    def tokenizer(self) -> Tokenizer:
        """The `tokenizers` tokenizer, built on first need (a text the plain-Python WordPiece
        does not do, or a model that is not WordPiece)."""
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            assert self._json is not None  # one of the two is always set
            try:
                self._tokenizer = self._configured(Tokenizer.from_str(self._json.read()))
            except Exception as exc:  # tokenizers raises its own exception types
                raise ModelUnavailable(f"cannot read the tokenizer of embedding model {self.name!r}: "
                                       f"{_one_line(exc)}") from None
        return self._tokenizer

    def _configured(self, tokenizer: Tokenizer) -> Tokenizer:
        """model2vec's settings: no padding, truncation at max_length."""
        tokenizer.no_padding()
        if self.max_length is None:
            tokenizer.no_truncation()
        else:
            tokenizer.enable_truncation(self.max_length)
        return tokenizer

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __repr__(self) -> str:
        return f"Embedder({self.name!r}, dim={self.dim}, fingerprint={self.fingerprint!r})"

    def encode(self, texts: Sequence[str], *, normalize: bool | None = True) -> np.ndarray:
        """Mean token vector per text, float32, one row per text; empty text gives a zero row.

        `normalize=True` (default) returns unit rows, which search needs; `None` follows the
        model's config as model2vec's `encode` does; `False` returns the raw means.
        """
        import numpy as np

        if isinstance(texts, str):  # one text, not a sequence of characters
            texts = [texts]
        unit = self.normalize if normalize is None else normalize
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), _BATCH):
            batch = texts[start : start + _BATCH]
            out[start : start + len(batch)] = self._mean_vectors(batch)
        if unit:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            out /= norms
        return out

    def _char_cap(self) -> int:
        """model2vec cuts text to max_length x median token length characters before tokenising.

        Computed on first need: reading the whole vocabulary costs ~25 ms of a cold start, and
        no text of at most max_length characters is ever cut (a token is at least one character).
        """
        if self._char_cap_value is None:
            import numpy as np

            lengths = [len(t) for t in (self._json.tokens if self._json else self.tokenizer.get_vocab())]
            self._char_cap_value = int(self.max_length or 0) * int(np.median(lengths))
        return self._char_cap_value

    def _token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        texts = list(texts)
        if self.max_length is not None and any(len(t) > self.max_length for t in texts):
            cap = self._char_cap()
            texts = [t[:cap] for t in texts]
        fast = self._fast_tokenizer(len(texts))
        out: list[list[int] | None] = [None] * len(texts)
        if fast is not None:
            for i, t in enumerate(texts):
                if fast.handles(t):
                    out[i] = fast.ids(t)[:self.max_length]
        rest = [i for i, ids in enumerate(out) if ids is None]
        if rest:
            encode = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)
            for i, e in zip(rest, encode([texts[i] for i in rest], add_special_tokens=False), strict=True):
                out[i] = e.ids
        return out  # type: ignore[return-value]  # every slot is filled above

    def _fast_tokenizer(self, texts: int) -> AsciiWordPiece | None:
        """The plain-Python WordPiece (embed/wordpiece.py), None where its pipeline is not the
        model's; set up once FAST_TOKENIZER_AFTER texts were seen."""
        self._texts_seen += texts
        if self._fast is False and self._texts_seen >= FAST_TOKENIZER_AFTER:
            from .wordpiece import AsciiWordPiece

            self._fast = AsciiWordPiece.of(self._json.spec if self._json else self.tokenizer.to_str())
        return self._fast or None

    def _mean_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Mean of each text's token vectors, leaving out the unknown token as model2vec does.

        A per-text `take(...).sum()` beats both model2vec's length buckets and one flat
        `np.add.reduceat` here (measured: 0.07 s vs 0.13 s vs 0.95 s for 500k tokens).
        """
        import numpy as np

        ids = self._token_ids(texts)
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        unk = self._unk
        if self.mapping is not None or self.weights is not None:
            for i, row in enumerate(ids):
                kept = np.asarray([t for t in row if t != unk], dtype=np.int64)
                if kept.size:
                    vecs = self.vectors[kept if self.mapping is None else self.mapping[kept]].astype(np.float32)
                    if self.weights is not None:
                        vecs *= self.weights[kept][:, None]
                    out[i] = vecs.mean(axis=0)
            return out
        take, acc = self.vectors.take, self._acc
        for i, row in enumerate(ids):
            if not row:
                continue
            total = take(row, axis=0).sum(axis=0, dtype=acc)
            n_unk = row.count(unk) if unk is not None else 0
            if n_unk:
                total -= n_unk * self.vectors[unk].astype(acc)
            if len(row) > n_unk:
                out[i] = total / (len(row) - n_unk)
        return out

    @classmethod
    def from_static_model(cls, model: Any, name: str) -> Embedder:
        """Wrap a model2vec `StaticModel` (used for hub ids fetched by model2vec itself)."""
        from tokenizers import Tokenizer

        return cls(
            name,
            model.embedding,
            Tokenizer.from_str(model.tokenizer.to_str()),  # ours is reconfigured; leave theirs alone
            normalize=model.normalize,
            max_length=model.max_length,
            weights=model.weights,
            mapping=model.token_mapping,
        )


def weights_fingerprint(vectors: np.ndarray, weights: Any = None, mapping: Any = None) -> str:
    """sha256 of the stored weight bytes (as saved, before any upcast), first 16 hex chars.

    Identifies the exact vectors a package was embedded with, across processes and loaders.
    Vocabulary-quantised models also hash their per-token weights and mapping.
    """
    import hashlib

    import numpy as np

    h = hashlib.sha256(np.ascontiguousarray(vectors).data.cast("B"))  # a view: no 30 MB copy
    for extra in (weights, mapping):
        if extra is not None:
            h.update(np.ascontiguousarray(extra).data.cast("B"))
    return h.hexdigest()[:16]


def _unk_token_id(tokenizer: Tokenizer) -> int | None:
    """The id model2vec drops from every text (WordPiece/BPE/WordLevel unk, or Unigram unk_id)."""
    model = tokenizer.model
    if hasattr(model, "unk_token"):
        token = model.unk_token
        return None if token is None else tokenizer.token_to_id(token)
    unk = json.loads(tokenizer.to_str())["model"].get("unk_id")
    return unk if isinstance(unk, int) else None


def load_folder(folder: Path, name: str | None = None) -> Embedder:
    """Read a model folder directly (no model2vec import; `tokenizers` only for a tokenizer
    that is not WordPiece)."""
    layout = next((lay for lay in LAYOUTS if lay.valid(folder)), None)
    if layout is None:
        raise ModelUnavailable(
            f"{folder} is not an embedding model folder (needs config.json, model.safetensors, tokenizer.json)"
        )
    try:
        config = json.loads((folder / layout.config).read_text(encoding="utf-8"))
        # The tokenizer first: it needs no numpy, so a query's helper thread reads it while
        # the main thread is still importing numpy (which `read_safetensors` waits for).
        tokenizer: Tokenizer | TokenizerJson | None = read_tokenizer_json(folder / layout.tokenizer)
        if tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_str((folder / layout.tokenizer).read_text(encoding="utf-8"))
        tensors = read_safetensors(folder / layout.embeddings)
        vectors = tensors[layout.tensor]
    except Exception as exc:  # tokenizers raises its own exception types
        raise ModelUnavailable(f"cannot read embedding model in {folder}: {_one_line(exc)}") from None
    known = _known_fingerprint(folder / layout.embeddings)
    model = Embedder(
        name or config.get("context_name") or folder.name,
        vectors,
        tokenizer,
        normalize=config.get("normalize", False),
        max_length=config.get("max_length", DEFAULT_MAX_LENGTH),
        weights=tensors.get("weights"),
        mapping=tensors.get("mapping"),
        fingerprint=known,
    )
    if known is None:
        _record_fingerprint(folder / layout.embeddings, model.fingerprint)
    return model


def _fingerprint_key(weights: Path) -> str:
    """A weights file as it is now: its path, size and modification time."""
    st = weights.stat()
    return f"{weights.resolve()}|{st.st_size}|{st.st_mtime_ns}"


def _known_fingerprints() -> dict[str, str]:
    try:
        data = json.loads((models_dir() / FINGERPRINTS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def _known_fingerprint(weights: Path) -> str | None:
    """The fingerprint recorded for this weights file, unless it changed since (see FINGERPRINTS)."""
    try:
        return _known_fingerprints().get(_fingerprint_key(weights))
    except OSError:
        return None


def _record_fingerprint(weights: Path, fingerprint: str) -> None:
    """Remember a weights file's fingerprint for the next process; best effort (a home that
    cannot be written to only costs the hashing again)."""
    from ..atomic import write_text

    try:
        write_text(models_dir() / FINGERPRINTS,
                   json.dumps({**_known_fingerprints(), _fingerprint_key(weights): fingerprint}))
    except OSError:
        pass


def read_tokenizer_json(path: Path) -> TokenizerJson | None:
    """`TokenizerJson.parse` of a tokenizer file, with its vocabulary from VOCABS when this
    very file (path, size, mtime) was read before; else parsed, and remembered for the next
    process (best effort: a home that cannot be written to only parses it again)."""
    read = functools.partial(path.read_text, encoding="utf-8")
    key = _fingerprint_key(path)
    store = models_dir() / VOCABS / f"{zlib.crc32(key.rsplit('|', 2)[0].encode('utf-8', 'replace')):08x}.txt"
    known = _remembered_vocab(store, key, read)
    if known is not None:
        return known
    parsed = TokenizerJson.of(json.loads(read()), read)
    if parsed is not None:
        _remember_vocab(store, key, parsed)
    return parsed


def _remembered_vocab(store: Path, key: str, read: Callable[[], str]) -> TokenizerJson | None:
    """The tokenizer `store` holds if it was written for `key`: a line with the key, one with
    the token count and the tokenizer's JSON less its vocabulary, then the tokens in id order."""
    try:
        lines = store.read_bytes().decode("utf-8").split("\n", 2)  # bytes: a token may hold a \r
        if len(lines) != 3 or lines[0] != key:
            return None
        head = json.loads(lines[1])
        count = head["tokens"]
        if type(count) is not int or lines[2].count("\n") + 1 != count:  # (30522.0 would pass `!=`)
            return None
        from .line_vocab import LineVocab

        vocab = LineVocab(lines[2], count)
        spec = head["spec"]
        spec["model"]["vocab"] = vocab
        return TokenizerJson.of(spec, read, vocab)
    except (OSError, ValueError, KeyError, TypeError):  # none yet, or damaged: read the tokenizer itself
        return None


def _remember_vocab(store: Path, key: str, parsed: TokenizerJson) -> None:
    """Write what `_remembered_vocab` reads, for a vocabulary whose ids are its order (as
    tokenizers write them) and whose tokens fit on a line each; others are not remembered."""
    from ..atomic import write_text

    tokens = list(parsed.vocab)
    if "\n" in key or any("\n" in t for t in tokens) or list(parsed.vocab.values()) != list(range(len(tokens))):
        return
    spec = {**parsed.spec, "model": {**parsed.spec["model"], "vocab": None}}
    try:
        write_text(store, "\n".join([key, json.dumps({"tokens": len(tokens), "spec": spec}), *tokens]))
    except (OSError, ValueError):  # read-only home; a token that is not valid Unicode
        pass


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file as read-only arrays over one memory map.

    Nothing is copied: a query reads only the pages of the few token rows it sums (the
    `safetensors` library would read and copy the whole file). Raises ValueError for a file
    that is not safetensors or whose tensors lie outside it.
    """
    import mmap

    import numpy as np

    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 8:
            raise ValueError(f"{path.name} is not a safetensors file")
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    n = int.from_bytes(data[:8], "little")
    if n > size - 8:
        raise ValueError(f"{path.name} is not a safetensors file (header past its end)")
    header = json.loads(data[8:8 + n])
    if not isinstance(header, dict):
        raise ValueError(f"{path.name} is not a safetensors file (header is not a JSON object)")
    out = {}
    for key, info in header.items():
        if key == "__metadata__":
            continue
        try:
            dtype = np.dtype(SAFETENSORS_DTYPES[info["dtype"]])
            shape = [int(d) for d in info["shape"]]
            start, end = (int(x) for x in info["data_offsets"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{path.name}: tensor {key!r} has an unreadable header ({exc!r})") from None
        count = math.prod(shape)
        if min(shape, default=0) < 0 or not 0 <= start <= end <= size - 8 - n or end - start != count * dtype.itemsize:
            raise ValueError(f"{path.name}: tensor {key!r} does not fit its bytes")
        out[key] = np.frombuffer(data, dtype=dtype, count=count, offset=8 + n + start).reshape(shape)
    return out


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache, resolved as huggingface_hub does, without importing it."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "huggingface" / "hub"


def cached_hub_folder(repo_id: str) -> Path | None:
    """The newest cached snapshot of a hub model that holds a usable layout, as model2vec picks it."""
    if repo_id.count("/") != 1:
        return None
    snapshots = hf_cache_dir() / f"models--{repo_id.replace('/', '--')}" / "snapshots"
    try:
        folders = [p for p in snapshots.iterdir() if p.is_dir()]
    except OSError:
        return None
    if not folders:
        return None
    newest = max(folders, key=lambda p: p.stat().st_mtime)
    return newest if any(lay.valid(newest) for lay in LAYOUTS) else None


def _is_model_folder(path: Path) -> bool:
    return path.is_dir() and any(lay.valid(path) for lay in LAYOUTS)


def _local_model(name: str) -> Path | None:
    """`models_dir()/<name>` if it holds a model; names that climb out of that folder do not count."""
    parts = Path(name).parts
    if not parts or Path(name).is_absolute() or name.startswith("~") or ".." in parts:
        return None
    folder = models_dir() / name
    return folder if _is_model_folder(folder) else None


def _is_hub_id(spec: str) -> bool:
    """`owner/name`, the only shape model2vec looks up in the hub cache."""
    return re.fullmatch(r"[\w.-]+/[\w.-]+", spec) is not None and not spec.startswith(".")


def load_model(spec: str | None = None) -> Embedder:
    """The embedder for `spec`, loaded once per process.

    None -> $CONTEXT_EMBED_MODEL, else the shipped model. "default" -> the shipped model.
    An existing folder, or a folder `~/.context/models/<spec>` -> read it directly.
    `owner/name` -> a Hugging Face hub id: the local cache if it has it, else model2vec's
    `from_pretrained(force_download=False)`, which may download.
    """
    if spec is None:
        spec = EMBED_MODEL.value() or DEFAULT_MODEL
    spec = spec.strip()
    if spec == DEFAULT_MODEL:
        if not _is_model_folder(DEFAULT_MODEL_DIR):
            raise ModelUnavailable(
                f"the shipped embedding model is missing from {DEFAULT_MODEL_DIR}; reinstall context"
            )
        return _cached(DEFAULT_MODEL_DIR, None)
    path = Path(spec).expanduser()
    if path.is_dir():
        return _cached(path, None)
    local = _local_model(spec)
    if local is not None:
        return _cached(local, spec)
    if not _is_hub_id(spec):
        raise ModelUnavailable(
            f"no embedding model {spec!r}: not a folder, not in {models_dir()}, and not a hub id like owner/name"
        )
    cached = cached_hub_folder(spec)
    if cached is not None:
        return _cached(cached, spec)
    with _lock:
        if spec not in _cache:
            _cache[spec] = _load_from_hub(spec)
        return _cache[spec]


def clear_cache() -> None:
    """Forget loaded models (tests; a long-running server after models change on disk)."""
    with _lock:
        _cache.clear()


def _cached(folder: Path, name: str | None) -> Embedder:
    """One Embedder per resolved folder per process."""
    key = str(folder.resolve())
    with _lock:
        if key not in _cache:
            _cache[key] = load_folder(folder, name)
        return _cache[key]


def _load_from_hub(repo_id: str) -> Embedder:
    """Fetch a hub model through model2vec itself (the only path that imports it)."""
    try:
        from model2vec import StaticModel
    except ImportError:
        raise ModelUnavailable(
            f"cannot fetch {repo_id!r}: model2vec is not installed (pip install model2vec)"
        ) from None
    try:
        model = StaticModel.from_pretrained(repo_id, force_download=False)
    except Exception as exc:  # hub, network and format errors all mean the same thing here
        raise ModelUnavailable(
            f"cannot load embedding model {repo_id!r}: not a model folder and not fetchable from the hub "
            f"({_one_line(exc)})"
        ) from None
    return Embedder.from_static_model(model, repo_id)


@functools.cache
def shipped_model_name() -> str:
    """The name the shipped model stamps on packages, read from its config without loading it."""
    try:
        config = json.loads((DEFAULT_MODEL_DIR / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return DEFAULT_MODEL
    return config.get("context_name") or DEFAULT_MODEL


def find_model(name: str, fingerprint: str | None = None) -> Embedder | None:
    """The model that embedded a package, if this machine has it; never downloads.

    Looks for the shipped model by its name, then `models_dir()/<name>`, then the local
    Hugging Face cache, then the model $CONTEXT_EMBED_MODEL names (what `context add` used).
    None when absent, unreadable, or when `fingerprint` differs (the package's vectors came
    from other weights), so search falls back to lexical and says so.
    """
    if not name:
        return None
    named: list[tuple[Path, str | None]] = []  # found under the package's own model name
    if name in (DEFAULT_MODEL, shipped_model_name()):
        named.append((DEFAULT_MODEL_DIR, None))
    local = _local_model(name)
    if local is not None:
        named.append((local, name))
    cached = cached_hub_folder(name) if _is_hub_id(name) else None
    if cached is not None:
        named.append((cached, name))
    chosen = _env_model_folder()  # the model `context add` used: it must prove it is the same
    for folder, as_name in [*named, *([chosen] if chosen else [])]:
        try:
            model = _cached(folder, as_name)
        except ModelUnavailable:
            continue
        if fingerprint:
            if model.fingerprint == fingerprint:
                return model
        elif (folder, as_name) in named or model.name == name:
            return model
    return None


def _env_model_folder() -> tuple[Path, str | None] | None:
    """The local folder $CONTEXT_EMBED_MODEL names (a folder, a name under models_dir(), or a
    hub id already in the local cache): `context add` embedded with it, so search may use it
    for packages whose fingerprint it matches. Never downloads."""
    spec = (EMBED_MODEL.value() or "").strip()
    if not spec or spec == DEFAULT_MODEL:
        return None
    path = Path(spec).expanduser()
    if path.is_dir():
        return path, None
    local = _local_model(spec)
    if local is not None:
        return local, spec
    cached = cached_hub_folder(spec) if _is_hub_id(spec) else None
    return (cached, spec) if cached is not None else None
