"""A relevance verdict that means something: STRONG, MODERATE or WEAK.

Fused scores carry rank, not relevance, so the verdict is read from signals that do:
- coverage: the share of the query's IDF mass the section contains;
- z: how many standard deviations the section's cosine sits above this query's
  cosine distribution over the whole package (None when searched lexically);
- missing: query terms that occur nowhere in the package.
Thresholds are calibrated by bench/verdict_calibration.py on answerable questions and
questions about things the corpus does not contain; see docs/search.md.
"""

from __future__ import annotations

from dataclasses import dataclass

STRONG, MODERATE, WEAK = "STRONG", "MODERATE", "WEAK"
ORDER = {STRONG: 2, MODERATE: 1, WEAK: 0}

# Calibrated by bench/verdict_calibration.py on 220 answerable and 50 unanswerable questions
# over three corpora: unanswerable -> WEAK 94%; top-1 hits -> not WEAK 92%, STRONG 23%;
# top-1 misses -> STRONG 3%.
STRONG_COVERAGE = 0.70
STRONG_Z = 3.5
MODERATE_COVERAGE = 0.45
MODERATE_Z = 2.0
MODERATE_Z_MIN_COVERAGE = 0.30


@dataclass
class Signals:
    coverage: float
    z: float | None
    missing: list[str]
    n_terms: int
    exact_phrase: bool = False

    def as_dict(self) -> dict[str, object]:
        return {"coverage": round(self.coverage, 3), "z": None if self.z is None else round(self.z, 2),
                "missingTerms": self.missing}


def judge(s: Signals) -> str:
    """STRONG / MODERATE / WEAK from a result's signals.

    STRONG needs every query term to exist in the package and either an exact identifier
    match or both lexical coverage and semantic standing; a lexical-only package (z None)
    can reach STRONG on coverage alone, MODERATE otherwise.
    """
    z = s.z if s.z is not None else float("-inf")
    lexical_only = s.z is None
    if not s.missing and (
        s.exact_phrase
        or (s.coverage >= STRONG_COVERAGE and (lexical_only or z >= STRONG_Z - 1.0))
        or (s.coverage >= MODERATE_COVERAGE and z >= STRONG_Z)
    ):
        return STRONG
    if s.coverage >= MODERATE_COVERAGE or (z >= MODERATE_Z and s.coverage >= MODERATE_Z_MIN_COVERAGE):
        return MODERATE
    return WEAK


def overall(verdicts: list[str]) -> str:
    return max(verdicts, key=ORDER.__getitem__) if verdicts else WEAK
