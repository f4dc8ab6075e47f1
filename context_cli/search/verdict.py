"""A relevance verdict that means something: STRONG, MODERATE or WEAK.

Fused scores carry rank, not relevance, so the verdict is read from signals that do:
- coverage: the share of the query's IDF mass the section contains;
- z: how many standard deviations the section's cosine sits above this query's
  cosine distribution over the whole package (None when searched lexically);
- missing: query terms that occur nowhere in the package.
Thresholds are calibrated by bench/verdict_calibration.py on answerable questions and
questions about things the corpus does not contain; see docs/search.md.

Below WEAK is no answer at all (`nothing_matched`): no word of the question is in any package
searched and no section is closer in meaning than nonsense gets. Every package offers a "best"
section for any question (its scores are relative to its own best), so without this a question
about nothing in the docs would still fill the budget with noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from .dense import DenseHits, VectorIndex
    from .run import SearchRun

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

# A package's noise floor (`at_noise_floor`): the best cosine z-scores these strings of no
# language reach in it, their mean plus NOISE_SPREAD deviations. Calibrated by bench/verdict_calibration.py --noise on
# 16 packages: a question of absent words at or below it gets no sections. Nonsense: 82 % below;
# absent real words: 63 %; keyword questions with every word misspelt whose best section by
# meaning is the gold page: 17 % below (they lose it); a question with any word in the package: never.
PROBES = ("qqudhtt", "zsrxyypy ohatcdjdo vpvkg", "llzmxqu xkcrr", "oeuwwsj wllon", "srpdnqzy",
          "mqinspqq shyeb vdwtnpeph", "vpwrirmv", "zuqwpzmng iabeuto", "lgiwpoqy znrvbjko owwzq",
          "fnxpcuip dgxneoa", "osrct", "dtbyri", "eakvssy wxerhpse wqjcnvfez", "qnmzeqz madmcb ulyaaqp",
          "okdpost esqgnt", "thvwcrmb ufburb")
NOISE_SPREAD = 1.0


class Signals:
    """What one section's verdict is read from (the module's docstring says what the first
    three mean); `exact_phrase`: an identifier question is found in it verbatim."""

    __slots__ = ("coverage", "z", "missing", "n_terms", "exact_phrase")

    def __init__(self, coverage: float, z: float | None, missing: list[str], n_terms: int,
                 exact_phrase: bool = False) -> None:
        self.coverage, self.z, self.missing, self.n_terms, self.exact_phrase = coverage, z, missing, n_terms, exact_phrase

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


def nothing_matched(run: SearchRun) -> bool:
    """True when no package searched holds any word of the question and none has a section
    closer to it in meaning than its noise floor; the run's notes then say so and name the
    words. (Only then is the floor worked out: a few milliseconds, on questions that match
    nothing.)"""
    live = run.live()
    missing: list[str] = []
    for pq in live:
        if pq.lexical is None or not pq.query.terms or len(pq.lexical.missing) < len(pq.query.terms):
            return False
        missing.extend(pq.lexical.missing)
    from .quality import MixedHits

    # (A package with quality vectors: its static side, on which the floor was measured.)
    one = [d.static if isinstance(d, MixedHits) else d for d in (pq.dense for pq in live) if d is not None]
    dense = [d for d in one if d.usable]
    if not live or (dense and not at_noise_floor(dense)):
        return False
    where = live[0].label if len(live) == 1 else f"the {len(live)} packages searched"
    words = " or ".join(f"'{t}'" for t in dict.fromkeys(missing))
    run.note(f"nothing matched: no section of {where} contains {words}, and none comes closer in meaning "
             "than unrelated text does; try other words, or check that this is the right library")
    return True


def at_noise_floor(packages: Sequence[DenseHits]) -> bool:
    """Whether the section closest to the question in meaning, in any of these packages, is
    no closer than nonsense (`PROBES`) gets there.

    Each package's best z-score is measured against the best z-scores the probes reach in it
    (how many of their deviations above their mean): the spread of z-scores depends on the
    package, its size and how alike its sections are. Over several packages the question's
    highest such excess is measured against the probes' highest, so that searching more
    packages, each with its own chance of a lucky section, does not make the floor easier to
    pass. The floor is the probes' mean plus NOISE_SPREAD deviations."""
    import numpy as np

    excess, probes = [], []
    encoded: dict[int, np.ndarray] = {}  # the probes' vectors, per model
    for dense in packages:
        model = dense.model
        if id(model) not in encoded:
            encoded[id(model)] = model.encode(list(PROBES)).astype(np.float32)
        found = probe_z(encoded[id(model)], dense.index)
        finite = found[np.isfinite(found)]
        if len(finite) < 2 or not finite.std() > 0:
            continue
        mean, sd = finite.mean(), finite.std()
        z = dense.top(1)[1]
        excess.append((float(z[0]) - mean) / sd if len(z) else -np.inf)
        probes.append((found - mean) / sd)
    if not excess:
        return True
    with np.errstate(invalid="ignore"):
        highest = np.fmax.reduce(probes, axis=0)  # each probe's highest excess over the packages (NaN: none)
    highest = highest[np.isfinite(highest)]
    return bool(max(excess) <= highest.mean() + NOISE_SPREAD * highest.std())


def probe_z(probes: np.ndarray, index: VectorIndex) -> np.ndarray:
    """The best z-score each probe vector (`PROBES`, embedded) reaches in the package of
    `index`, made as `dense.standardise` makes a question's; NaN where the probe's cosines
    do not spread."""
    import numpy as np

    cosines = (index.matrix @ probes.T).astype(np.float64)  # (sections, probes)
    if len(cosines) < 2:
        return np.full(len(probes), np.nan)
    dev = cosines - cosines.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        best: np.ndarray = dev.max(axis=0) / np.sqrt((dev * dev).mean(axis=0))
    best[~np.isfinite(best)] = np.nan
    return best
