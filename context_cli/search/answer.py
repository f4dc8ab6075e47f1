"""A search answer as typed objects: `Answer` and its ranked `Hit`s.

The engine builds these; the CLI (JSON and Markdown), the MCP server and Python callers read
them. `to_dict()` is the wire shape of `context search --format json` and MCP `get_docs`
(docs/search.md, "Answer shape"): keys and their order are a contract; `to_json()` is that
as compact JSON text. Scores and signals
are made finite here, so no surface can print `NaN` or `Infinity`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True)
class Page:
    """The page a hit comes from, ranked among the pages of the answer."""

    rank: int
    title: str
    source: str
    url: str | None

    def to_dict(self) -> Json:
        return {"rank": self.rank, "title": self.title, "source": self.source, "url": self.url}


@dataclass
class Hit:
    """One ranked section of the pack."""

    rank: int
    library: str  # name@version
    title: str  # "Doc > Section"
    content: str
    source: str  # the page's path in the source that was added
    url: str | None
    tokens: int  # counted from `content`, never taken from the package
    score: float
    verdict: str
    signals: Json = field(default_factory=dict)
    page: Page | None = None

    def to_dict(self) -> Json:
        out = {"rank": self.rank, "library": self.library, "title": self.title, "content": self.content,
               "source": self.source, "url": self.url, "tokens": self.tokens,
               "score": round(finite(self.score), 6), "verdict": self.verdict,
               "signals": {k: _finite_or_none(v) for k, v in self.signals.items()}}
        if self.page is not None:
            out["page"] = self.page.to_dict()
        return out


@dataclass
class Answer:
    """A context pack: the sections that fit the budget, best first, with a verdict."""

    query: str
    budget: int
    tokens: int
    saved_percent: float
    verdict: str
    results: list[Hit]
    searched: dict[str, str]  # library label -> hybrid | lexical | dense
    library: str | None = None  # set when exactly one library was searched
    version: str | None = None
    notes: list[str] = field(default_factory=list)
    message: str | None = None  # advice for an agent when nothing matched

    def to_dict(self) -> Json:
        out: Json = {"query": self.query}
        if self.library is not None:
            out["library"] = self.library
            out["version"] = self.version
        out.update({
            "budget": self.budget,
            "tokens": self.tokens,
            "savedPercent": finite(self.saved_percent),
            "verdict": self.verdict,
            "results": [h.to_dict() for h in self.results],
            "searched": dict(self.searched),
        })
        if self.notes:
            out["notes"] = list(self.notes)
        if self.message is not None:
            out["message"] = self.message
        return out

    def to_json(self) -> str:
        """The answer as compact JSON text (`dumps` of `to_dict()`)."""
        return dumps(self.to_dict())


def dumps(data: Any, *, indent: int | None = None) -> str:
    """JSON text for every surface: UTF-8 as is, and never NaN or Infinity (strict parsers
    reject them). Text that cannot be encoded (a lone surrogate echoed from input) is escaped."""
    try:
        text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return json.dumps(data, indent=indent, ensure_ascii=True, allow_nan=False)


def finite(x: float) -> float:
    """A score safe to serialise: NaN and infinities become 0."""
    return float(x) if math.isfinite(x) else 0.0


def _finite_or_none(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v
