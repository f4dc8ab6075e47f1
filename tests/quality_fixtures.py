"""Stand-ins for the quality vector sources: a tiny ONNX model folder with the quality model's
inputs and output (tests/fixtures/quality_model/tiny.onnx, a fixed token table), and a real
OpenAI-compatible embeddings server on loopback whose vectors are a function of the text."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import numpy as np
import pytest
from route_server import serve

FIXTURE = Path(__file__).parent / "fixtures" / "quality_model"
TINY_DIM = 8
WORDS = ["pipeline", "cancel", "stop", "timeout", "run", "sink", "error", "retry", "install", "pip", "mylib",
         "the", "a", "to", "how", "do", "i", "quick", "start", "call", "errors", "stopping", "halfway", "retries",
         "installation", "cancelling", "##s", "##ing", "?", ".", "`", "(", ")", "with"]
VOCAB = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS])}
assert len(VOCAB) <= 40  # the fixture's table has 40 rows


def tiny_table() -> np.ndarray:
    """The fixture model's token table (as make_tiny_onnx.py makes it)."""
    return np.sin(np.arange(40 * TINY_DIM, dtype=np.float32).reshape(40, TINY_DIM) * 0.37)


def tiny_tokenizer():  # -> tokenizers.Tokenizer
    """A BERT-style WordPiece tokenizer over VOCAB, adding [CLS] and [SEP] as BERT's does."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tok = Tokenizer(models.WordPiece(VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                       special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return tok


def write_tiny_model(folder: Path, *, name: str | None = None, max_length: int = 16) -> Path:
    """A quality model folder: tiny.onnx, the tiny tokenizer.json, config.json."""
    from context_cli.embed.quality_model import QUALITY_MODEL

    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(FIXTURE / "tiny.onnx", folder / "model.onnx")
    tiny_tokenizer().save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({"context_name": name or QUALITY_MODEL, "dim": TINY_DIM,
                                                    "max_length": max_length}))
    return folder


def expected(text: str, max_length: int = 16) -> np.ndarray:
    """What the embedder must give for `text` on the tiny model: the mean of its tokens' rows
    ([CLS] and [SEP] included, cut at max_length), unit length."""
    tok = tiny_tokenizer()
    tok.enable_truncation(max_length)
    v = tiny_table()[tok.encode(text).ids].mean(axis=0)
    return v / np.linalg.norm(v)


@pytest.fixture
def quality_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The tiny model as the quality model ($CONTEXT_QUALITY_MODEL), with onnxruntime required."""
    pytest.importorskip("onnxruntime")
    from context_cli.embed.quality_model import ENV_VAR, clear_cache

    folder = write_tiny_model(tmp_path / "tiny-quality-model")
    monkeypatch.setenv(ENV_VAR, str(folder))
    clear_cache()
    yield folder
    clear_cache()


# --- an OpenAI-compatible embeddings server ----------------------------------------------------

ENDPOINT_DIM = 16


def text_vector(text: str, dim: int = ENDPOINT_DIM) -> list[float]:
    """The stand-in server's embedding of a text: a fixed function of its bytes."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim).round(6).tolist()


@dataclass
class EmbeddingServer:
    """How the server behaves (tests change it between requests) and what it was asked."""

    mode: str = "ok"  # ok | hang | trickle | huge | garbage | short | ragged | nan | error | reverse
    key: str | None = None  # the bearer key it insists on, if any
    dim: int = ENDPOINT_DIM
    inputs: list[list[str]] = field(default_factory=list)  # each request's texts
    models: list[str] = field(default_factory=list)
    url: str = ""  # the base URL, up to /v1
    hang_s: float = 5.0

    def answer(self, texts: list[str]) -> tuple[int, bytes]:
        if self.mode == "garbage":
            return 200, b"<html>gateway</html>"
        if self.mode == "error":
            return 500, json.dumps({"error": {"message": "model not loaded"}}).encode()
        rows = [text_vector(t, self.dim) for t in texts]
        if self.mode == "short":
            rows = rows[:-1]
        if self.mode == "ragged":  # one embedding shorter than the others
            rows[-1] = rows[-1][:-1]
        if self.mode == "nan":
            rows[0][0] = float("nan")
        data = [{"object": "embedding", "index": i, "embedding": r} for i, r in enumerate(rows)]
        if self.mode == "reverse":
            data.reverse()
        return 200, json.dumps({"object": "list", "data": data, "model": self.models[-1]}).encode()


@contextmanager
def embedding_server(server: EmbeddingServer | None = None) -> Iterator[EmbeddingServer]:
    """Serve POST /v1/embeddings on loopback until the block ends."""
    state = server or EmbeddingServer()
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            if self.path != "/v1/embeddings":
                return self._send(404, b'{"error": "not found"}')
            if state.key and self.headers.get("Authorization") != f"Bearer {state.key}":
                return self._send(401, json.dumps({"error": {"message": "invalid api key"}}).encode())
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            state.inputs.append(texts)
            state.models.append(body["model"])
            if state.mode == "hang":
                stop.wait(state.hang_s)
                return None
            status, data = state.answer(texts)
            if state.mode in ("trickle", "huge"):  # a byte at a time, for ever (or until the test ends)
                self.send_response(200)
                if state.mode == "huge":
                    self.send_header("Content-Length", str(10**9))
                self.end_headers()
                while not stop.is_set():
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.05)
                return None
            return self._send(status, data)

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    try:
        with serve(Handler) as url:
            state.url = f"{url}/v1"
            yield state
    finally:
        stop.set()  # (before the server waits for its handlers: a hanging one ends now)


def configure_endpoint(home: Path, url: str, model: str = "team-embed", *, build: bool = False,
                       key: str | None = None, timeout: float | None = None, **prefixes: str) -> None:
    """Name the endpoint in $CONTEXT_HOME/config.json, beside Context's servers (`prefixes`:
    its query_prefix and document_prefix)."""
    endpoint = {"url": url, "model": model, **({"key": key} if key else {}), **({"timeout": timeout} if timeout else {}),
                **prefixes}
    (home / "config.json").write_text(json.dumps({"servers": [], "quality": {"build": build, "endpoint": endpoint}}))
