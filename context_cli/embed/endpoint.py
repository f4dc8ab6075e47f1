"""An OpenAI-compatible embeddings endpoint as a vector source (a team's local embedding server).

`POST {base_url}/embeddings` with `{"model", "input": [texts]}` answers
`{"data": [{"index", "embedding": [floats]}, ...]}`: what OpenAI, vLLM, llama.cpp's server,
Ollama's /v1, LM Studio and text-embeddings-inference speak. Used at build time for the second
vector set (`context add --quality` with an endpoint configured) and, for a package whose
quality vectors it made, to embed queries. Requests have one deadline for the whole answer
(sources/transfer.py's `read_body`). A server that hangs, trickles, answers with
something else than that shape, a vector of the wrong size or NaN fails with one
EndpointError naming the endpoint and what was wrong; nothing is half-written (the build fails).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from context_cli.errors import ModelUnavailable, clip

if TYPE_CHECKING:
    import numpy as np

TIMEOUT_S = 60.0  # one request, whole answer included (a CPU server embeds 64 texts in seconds)
MAX_ANSWER_BYTES = 64 * 1024 * 1024
BATCH = 64  # texts per request (servers often cap a request's inputs)
MAX_DIM = 8192
MAX_PREFIX_CHARS = 200  # an instruction prefix ("search_query: ", "Represent this sentence for ...: ")


class EndpointError(ModelUnavailable):
    """An embeddings endpoint that cannot be used: unreachable, too slow, or a wrong answer."""


@dataclass(frozen=True)
class EndpointConfig:
    """Where a team's embedding server is: its base URL (up to `/v1`), the model it serves, a key,
    and the prefixes an asymmetric model wants before a question and before a section
    (nomic-embed-text: "search_query: " and "search_document: "; e5: "query: " and "passage: ")."""

    url: str
    model: str
    key: str | None = None
    timeout: float = TIMEOUT_S
    query_prefix: str = ""
    document_prefix: str = ""

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise EndpointError(f"embeddings endpoint {clip(self.url)!r} is not an http(s) URL")
        if not self.model.strip():
            raise EndpointError("an embeddings endpoint needs the name of the model it serves")
        if max(len(self.query_prefix), len(self.document_prefix)) > MAX_PREFIX_CHARS:
            raise EndpointError(f"an embeddings endpoint's prefixes are at most {MAX_PREFIX_CHARS} characters")


class EndpointEmbedder:
    """Texts to unit vectors through an endpoint, each sent after `prefix` (the model's query or
    document prefix); `dim` is learnt from its first answer."""

    def __init__(self, config: EndpointConfig, dim: int | None = None, prefix: str = "") -> None:
        self.config, self.prefix = config, prefix
        self.name = config.model
        self.fingerprint = ""  # a server's weights cannot be hashed from here: the model name stands for them
        self._dim = dim
        self._session: Any = None

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.encode(["dimension probe"])
        assert self._dim is not None  # set by encode
        return self._dim

    def __repr__(self) -> str:
        return f"EndpointEmbedder({self.config.url!r}, model={self.name!r})"

    def encode(self, texts: Sequence[str], *, normalize: bool = True) -> np.ndarray:
        import numpy as np

        if isinstance(texts, str):
            texts = [texts]
        if self.prefix:
            texts = [self.prefix + t for t in texts]
        rows: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            rows.extend(self._post(list(texts[start:start + BATCH])))
        out = np.asarray(rows, dtype=np.float32).reshape(len(rows), self._dim or 0)
        if normalize and len(out):
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            out /= norms
        return out

    def _post(self, texts: list[str]) -> list[list[float]]:
        import requests

        cfg = self.config
        url = cfg.url.rstrip("/") + "/embeddings"
        headers = {"Content-Type": "application/json"}
        if cfg.key:
            headers["Authorization"] = f"Bearer {cfg.key}"
        if self._session is None:
            self._session = requests.Session()
        from ..sources.transfer import IDENTITY, TransferError, describe_error, read_body

        started = time.monotonic()
        try:
            with self._session.post(url, data=json.dumps({"model": cfg.model, "input": texts}),
                                    headers={**headers, **IDENTITY}, timeout=(min(cfg.timeout, 10.0), cfg.timeout),
                                    stream=True) as resp:
                # (read_body bounds the whole answer: a read timeout alone lets a server that
                # sends a byte a second go on for ever)
                left = cfg.timeout - (time.monotonic() - started)
                body = b"".join(read_body(resp, limit=MAX_ANSWER_BYTES, deadline=max(left, 0.0)))
                status = resp.status_code
        except requests.Timeout:
            raise EndpointError(f"{self._where()} did not answer within {cfg.timeout:g} s") from None
        except TransferError as e:
            if time.monotonic() - started > cfg.timeout:
                raise EndpointError(f"{self._where()} did not answer within {cfg.timeout:g} s") from None
            raise EndpointError(f"{self._where()} sent an unusable answer ({e})") from None
        except requests.RequestException as e:
            raise EndpointError(f"{self._where()} cannot be reached ({describe_error(e)})") from None
        if status != 200:
            raise EndpointError(f"{self._where()} answered HTTP {status}: {clip(_error_text(body), 160)}")
        return self._vectors(body, len(texts))

    def _vectors(self, body: bytes, count: int) -> list[list[float]]:
        """The answer's vectors in input order, each checked: a list of `dim` finite numbers."""
        where = self._where()
        try:
            data = json.loads(body)["data"]
            items = sorted(data, key=lambda d: d.get("index", 0)) if all("index" in d for d in data) else data
            rows = [d["embedding"] for d in items]
        except (ValueError, KeyError, TypeError, AttributeError):
            raise EndpointError(f"{where} did not answer with OpenAI-style embeddings "
                                '({"data": [{"embedding": [...]}]})') from None
        if len(rows) != count:
            raise EndpointError(f"{where} answered {len(rows)} embeddings for {count} texts")
        for row in rows:
            if not isinstance(row, list) or not row or not all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in row):
                raise EndpointError(f"{where} answered an embedding that is not a list of finite numbers")
            if self._dim is None:
                if len(row) > MAX_DIM:
                    raise EndpointError(f"{where} answered {len(row)}-dimensional embeddings (at most {MAX_DIM})")
                self._dim = len(row)
            elif len(row) != self._dim:
                raise EndpointError(f"{where} answered embeddings of {len(row)} dimensions, expected {self._dim}")
        return rows

    def _where(self) -> str:
        return f"embeddings endpoint {clip(self.config.url, 80)} (model {clip(self.config.model, 60)!r})"


def _error_text(body: bytes) -> str:
    """An error answer's message: OpenAI's {"error": {"message"}} or {"error": "..."}, else the text."""
    try:
        error = json.loads(body).get("error")
        return str(error.get("message") if isinstance(error, dict) else error)
    except (ValueError, AttributeError):
        return body[:200].decode("utf-8", "replace")
