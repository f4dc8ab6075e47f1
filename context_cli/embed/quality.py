"""Which source makes a package's second, optional vector set (the quality set), and the text
it embeds per section.

Two sources: the quality model (all-MiniLM-L6-v2 through onnxruntime, quality_model.py) and a
team's OpenAI-compatible embeddings endpoint (endpoint.py), chosen in `$CONTEXT_HOME/config.json`
beside Neuledge Context's `servers` (which its client ignores):

    {"quality": {"build": true,
                 "endpoint": {"url": "http://127.0.0.1:8080/v1", "model": "nomic-embed-text", "timeout": 60,
                              "query_prefix": "search_query: ", "document_prefix": "search_document: "}}}

`build` makes every `context add` compute the set (as `--quality` does for one); `endpoint`, when
given, is the source instead of the local model, and the endpoint search uses for queries on
packages its model embedded. The key, if the server wants one, is `endpoint.key` or
$CONTEXT_QUALITY_KEY. Packages record the source, the model, its fingerprint and an endpoint's
prefixes (docs/package-format.md), and search uses the set only with that very model, its
questions sent after the prefix the package names (not config.json's: the set was made so).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from context_cli.document import Chunk
from context_cli.errors import ModelUnavailable, clip
from context_cli.home import config_path

from ..environment import QUALITY_KEY
from .endpoint import MAX_PREFIX_CHARS, TIMEOUT_S, EndpointConfig, EndpointEmbedder, EndpointError
from .text import embed_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

SOURCE_MODEL = "onnx"  # meta quality_source of vectors from the quality model
SOURCE_ENDPOINT = "openai"  # ... from an OpenAI-compatible endpoint
SOURCES = (SOURCE_MODEL, SOURCE_ENDPOINT)
KEY_ENV = QUALITY_KEY.name
# A transformer reads its whole input (256 tokens, about 1,000 characters of English) without
# the dilution a static model's average suffers: the title path once, then the body.
QUALITY_CHARS = 1200


class TextEmbedder(Protocol):
    """What builds and searches need of a vector source."""

    name: str
    fingerprint: str

    @property
    def dim(self) -> int: ...

    def encode(self, texts: Sequence[str], *, normalize: bool = True) -> np.ndarray: ...


@dataclass(frozen=True)
class QualitySettings:
    build: bool = False  # compute the quality set on every `context add`
    endpoint: EndpointConfig | None = None

    @property
    def source(self) -> str:
        return SOURCE_ENDPOINT if self.endpoint is not None else SOURCE_MODEL

    @property
    def prefixes(self) -> tuple[str, str]:
        """(query, document) prefixes of the set this source makes (the local model takes none)."""
        e = self.endpoint
        return ("", "") if e is None else (e.query_prefix, e.document_prefix)


def quality_text(chunk: Chunk) -> str:
    """What the quality source embeds for a section."""
    return embed_text(chunk, max_chars=QUALITY_CHARS, title_repeat=1, summary=False)


_PREFIXES = ("query_prefix", "document_prefix")  # config.json's keys, in EndpointConfig's order


def load_settings() -> QualitySettings:
    """The `quality` entry of config.json; ModelUnavailable for one that cannot be used."""
    path = config_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return QualitySettings()
    except (OSError, ValueError) as e:
        raise ModelUnavailable(f"cannot read {path}: {clip(str(e))}; fix or remove it") from None
    entry = data.get("quality") if isinstance(data, dict) else None
    if entry is None:
        return QualitySettings()
    if not isinstance(entry, dict) or not isinstance(entry.get("build", False), bool):
        raise ModelUnavailable(f'{path}: "quality" must be {{"build": true|false, "endpoint": {{"url", "model"}}}}')
    endpoint = entry.get("endpoint")
    if endpoint is None:
        return QualitySettings(build=entry.get("build", False))
    timeout = endpoint.get("timeout", TIMEOUT_S) if isinstance(endpoint, dict) else None
    if not (isinstance(endpoint, dict) and isinstance(endpoint.get("url"), str)
            and isinstance(endpoint.get("model"), str) and isinstance(endpoint.get("key"), (str, type(None)))
            and isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and 0 < timeout <= 3600
            and all(isinstance(endpoint.get(k, ""), str) for k in _PREFIXES)):
        raise ModelUnavailable(f'{path}: "quality.endpoint" needs a "url" and a "model" (and may have a "key", '
                               'a "timeout" in seconds, a "query_prefix" and a "document_prefix")')
    key = endpoint.get("key") or QUALITY_KEY.value()
    return QualitySettings(build=entry.get("build", False), endpoint=EndpointConfig(
        endpoint["url"], endpoint["model"], key, float(timeout), *(endpoint.get(k, "") for k in _PREFIXES)))


def build_embedder(settings: QualitySettings) -> TextEmbedder:
    """The source a build embeds the quality set with; ModelUnavailable saying what is missing."""
    if settings.endpoint is not None:
        return EndpointEmbedder(settings.endpoint, prefix=settings.endpoint.document_prefix)
    from .quality_model import load_quality_model

    return load_quality_model()


_endpoints: dict[tuple[EndpointConfig, str], EndpointEmbedder] = {}
_lock = threading.Lock()


def query_embedder(source: str, model: str, fingerprint: str, dim: int, query_prefix: str = "") -> TextEmbedder:
    """The embedder for queries on a package whose quality set `source`/`model` made (an
    endpoint's questions sent after the package's `query_prefix`), or ModelUnavailable saying
    why there is none here (search then uses the static vectors). Never downloads; an endpoint
    is only asked when a query is embedded."""
    if source == SOURCE_ENDPOINT:
        settings = load_settings()
        if settings.endpoint is None or settings.endpoint.model != model:
            raise ModelUnavailable(f"its quality vectors come from the embeddings endpoint model {clip(model, 60)!r}, "
                                   "which config.json's quality.endpoint does not name")
        if len(query_prefix) > MAX_PREFIX_CHARS:
            raise ModelUnavailable(f"its quality vectors name a query prefix of over {MAX_PREFIX_CHARS} characters")
        with _lock:
            embedder = _endpoints.setdefault((settings.endpoint, query_prefix),
                                             EndpointEmbedder(settings.endpoint, dim, query_prefix))
        return embedder
    from .quality_model import QUALITY_MODEL, load_quality_model

    if source != SOURCE_MODEL or model != QUALITY_MODEL:
        raise ModelUnavailable(f"its quality vectors name an unknown model {clip(model, 60)!r} ({clip(source, 20)})")
    found = load_quality_model()
    if fingerprint and found.fingerprint != fingerprint:
        raise ModelUnavailable(f"its quality vectors were made with other weights than the {model} here")
    if found.dim != dim:
        raise ModelUnavailable(f"its quality vectors have {dim} dimensions, the {model} here {found.dim}")
    return found


__all__ = ["EndpointError", "QualitySettings", "TextEmbedder", "build_embedder", "load_settings",
           "quality_text", "query_embedder"]
