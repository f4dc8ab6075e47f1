"""The optional quality model: all-MiniLM-L6-v2 as per-channel int8 ONNX, run by onnxruntime.

It embeds about 60 sections a second on two cores where the shipped static model does 5,000,
so it is computed where time is cheap (the publisher, or `context add --quality`) and kept as
a second vector set beside the static one (docs/package-format.md). onnxruntime comes with the
`quality` extra (`pip install 'context-docs[quality]'`); the model folder is made by
scripts/make_quality_model.py from the published weights and found, never downloaded, in
$CONTEXT_QUALITY_MODEL, `$CONTEXT_HOME/models/<MODEL_FOLDER>`, or the installed model wheel
(`context-docs-quality-model`, which that script packs). Both are imported or read only when a
text is embedded, so a CLI that never meets such vectors never pays for onnxruntime.

`encode` does what the sentence-transformers model does: WordPiece with [CLS]/[SEP], cut at
MAX_LENGTH tokens, the last hidden states averaged over the attention mask, unit length.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from context_cli import environment
from context_cli.errors import ModelUnavailable
from context_cli.home import models_dir

if TYPE_CHECKING:
    import numpy as np

QUALITY_MODEL = "all-minilm-l6-v2-int8"  # the name packages record (meta quality_model)
MODEL_FOLDER = QUALITY_MODEL  # under models_dir()
ENV_VAR = environment.QUALITY_MODEL.name  # a model folder that overrides the places searched
WHEEL_NAME = "context-docs-quality-model"  # the model as a wheel (scripts/make_quality_model.py --wheel)
WHEEL_MODULE = "context_docs_quality_model"
MAX_LENGTH = 256  # tokens, as the sentence-transformers model's max_seq_length
FILES = ("model.onnx", "tokenizer.json", "config.json")
INSTALL_HINT = "pip install 'context-docs[quality]'"
MODEL_HINT = (f"make it with scripts/make_quality_model.py --install, or pip install {WHEEL_NAME} "
              f"(a wheel that script packs), or set {ENV_VAR} to its folder")
# What scripts/make_quality_model.py writes with its pinned versions (it says whether it reproduced them).
EXPECTED_SHA256 = {
    "model.onnx": "aebdde650c9d36e8191ce5fb94e22da036348e1053cdc1229853e7d1fd3b82d9",
    "config.json": "25ce8439f2910e03e77e2217d65ed095ed4c11f564ef3bfb11e2ae97fefba912",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
_BATCH = 32  # texts per session run, sorted by length so that little is padded

_cache: dict[str, OnnxEmbedder] = {}
_lock = threading.Lock()


def onnxruntime_installed() -> bool:
    """Is the extra there? (Looked up without importing it: that costs ~0.2 s.)"""
    return importlib.util.find_spec("onnxruntime") is not None


def locate() -> Path | None:
    """The model folder: $CONTEXT_QUALITY_MODEL, else `models_dir()/MODEL_FOLDER`, else the
    installed model wheel's; None when none holds the model's files."""
    env = (environment.QUALITY_MODEL.value() or "").strip()
    places = [Path(env).expanduser()] if env else []
    places.append(models_dir() / MODEL_FOLDER)
    try:
        spec = importlib.util.find_spec(WHEEL_MODULE)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        places.append(Path(spec.origin).parent / "model")
    return next((p for p in places if all((p / f).is_file() for f in FILES)), None)


class OnnxEmbedder:
    """A loaded quality model: an onnxruntime session over the transformer and its tokenizer."""

    def __init__(self, name: str, session: Any, tokenizer: Any, dim: int, fingerprint: str) -> None:
        self.name = name
        self.fingerprint = fingerprint
        self.dim = dim
        self._session = session
        self._tokenizer = tokenizer
        self._run_lock = threading.Lock()  # (one run at a time: the session already uses every core)

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.name!r}, dim={self.dim}, fingerprint={self.fingerprint!r})"

    @classmethod
    def load(cls, folder: Path) -> OnnxEmbedder:
        """Read a model folder; ModelUnavailable when onnxruntime is missing or the files are unusable."""
        try:
            import onnxruntime as ort
        except ImportError:
            raise ModelUnavailable(f"the quality model needs onnxruntime: {INSTALL_HINT}") from None
        from tokenizers import Tokenizer

        from .model import _known_fingerprint, _one_line, _record_fingerprint

        try:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(int(config.get("max_length", MAX_LENGTH)))
            options = ort.SessionOptions()
            options.log_severity_level = 3  # errors only: its warnings are not the user's business
            session = ort.InferenceSession(str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"])
            dim = int(config["dim"])
            name = str(config.get("context_name") or folder.name)
        except Exception as exc:  # onnxruntime and tokenizers raise their own exception types
            raise ModelUnavailable(f"cannot read the quality model in {folder}: {_one_line(exc)}") from None
        weights = folder / "model.onnx"
        fingerprint = _known_fingerprint(weights)
        if fingerprint is None:
            fingerprint = file_fingerprint(weights)
            _record_fingerprint(weights, fingerprint)
        return cls(name, session, tokenizer, dim, fingerprint)

    def encode(self, texts: Sequence[str], *, normalize: bool = True) -> np.ndarray:
        """One float32 row per text (unit length unless `normalize=False`); "" gives the
        vector of [CLS] [SEP], as the sentence-transformers model does."""
        import numpy as np

        if isinstance(texts, str):
            texts = [texts]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not len(texts):
            return out
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), _BATCH):
            batch = order[start:start + _BATCH]
            width = max(len(ids[i]) for i in batch)
            tokens = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                tokens[row, :len(ids[i])] = ids[i]
                mask[row, :len(ids[i])] = 1
            with self._run_lock:
                hidden = self._session.run(None, {"input_ids": tokens, "attention_mask": mask})[0]
            weights = mask[:, :, None].astype(np.float32)
            out[batch] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if normalize:
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            out /= norms
        return out


def file_fingerprint(path: Path) -> str:
    """sha256 of a model file, first 16 hex chars (what packages record as quality_fingerprint)."""
    from ..digest import file_sha256

    return file_sha256(path)[:16]


def load_quality_model() -> OnnxEmbedder:
    """The quality model, loaded once per process; ModelUnavailable saying what to install."""
    if not onnxruntime_installed():
        raise ModelUnavailable(f"the quality model needs onnxruntime: {INSTALL_HINT}")
    folder = locate()
    if folder is None:
        raise ModelUnavailable(f"the quality model {QUALITY_MODEL!r} is not on this machine: {MODEL_HINT}")
    key = str(folder.resolve())
    with _lock:
        if key not in _cache:
            _cache[key] = OnnxEmbedder.load(folder)
        return _cache[key]


def clear_cache() -> None:
    """Forget loaded models (tests)."""
    with _lock:
        _cache.clear()
