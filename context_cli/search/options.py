"""What a search can be asked for (`SearchOptions`) and the numbers its ranking is tuned by
(`RankingParams`), in one place; no numpy, so the surfaces and the registry import it cheaply.

Every tunable is a field of one frozen value, with what it does and where it was tuned: a
test or a benchmark that tries another value passes `RankingParams(...)` rather than
patching a module's globals, and docs/search.md states the same rules in prose
(`reference.py` in code).
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_BUDGET = 2000
DEFAULT_LIMIT = 10
MAX_QUERY_CHARS = 10_000


@dataclass(frozen=True, eq=False, repr=False)
class RankingParams:
    """The tunables of a search; the defaults are what the answers are made with."""

    # Fusion (`candidates.fuse_rankings`): BM25 scaled by the query's best BM25 score, mixed with the cosine
    # z-score capped at `z_cap` and scaled by it (chosen with bench/retrieval.py over RRF).
    lexical_weight: float = 0.7  # BM25's share of a section both rankings found
    z_cap: float = 6.0  # a cosine z-score counts up to this
    # How many candidates each stage keeps.
    pool: int = 50  # candidates taken from each ranking (BM25's, the cosines') per package
    page_pool: int = 3  # x the candidates judged per package: how many get page evidence
    judged: int = 30  # candidates judged (signals, may enter the pack), shared among the packages
    min_judged_per_package: int = 8  # ... but at least this many per package
    more_pages: int = 10  # pages past the judged whose best section is judged too (`rank.more_pages`)
    # Page evidence (`rank.page_scores`; chosen with bench/retrieval.py on the tuning sets).
    next_sections: tuple[float, ...] = (0.25, 0.1)  # weights of a page's 2nd and 3rd best sections
    title_weight: float = 0.4  # weight of the share of the query's IDF its title and path carry
    # ... and of how close the page as a whole is (`closeness.closeness`: its sections' mean
    # cosine deviation as a z among the package's pages, capped at `z_cap`; bench/retrieval.py,
    # question-style Hit@1 on the tuning sets 0.605 with none, 0.625 at 0.3 and 0.5, 0.632 at 0.4).
    page_closeness_weight: float = 0.4
    # A section whose own heading is exactly the query's terms gains this (the django set;
    # no effect on anthropic, click or flask), and `definition_weight` for a "what is X" query.
    heading_weight: float = 0.3
    definition_weight: float = 1.5
    # A question that is an identifier (`send_file`, `useEffect`, `z.string`): the sections
    # showing the entries it names count as BM25's best and gain this x (their count - their
    # place), more than any other section's total can be, so they come first, in order.
    identifier_weight: float = 10.0
    # A page's kind (`pages.kind`) weighs its candidates' totals: release notes unless the
    # question asks about versions or changes (`Query.asks_changes`), and API reference
    # pages read from the code unless it names an identifier (`Query.names_symbol`).
    changelog_weight: float = 0.5
    reference_weight: float = 0.5
    # Across packages, each package's scores are weighed by exp(package_prior x (its best
    # cosine - the best package's)) (bench/retrieval.py --together: 2 to 7 all gain).
    package_prior: float = 3.0
    # ... and by exp(its log-weight - the best package's) from what it is (`prior.log_weights`): a
    # package the question names gains `name_prior`, and each gains `vocabulary_prior` x how much
    # likelier the question's terms are in its sections than in the others' (bench/retrieval.py
    # --together and crosslib without a library).
    name_prior: float = 3.0
    vocabulary_prior: float = 0.75
    # A package carrying quality vectors (`quality.py`): the share of their z-score in its
    # dense ranking, the static model's the rest (bench/retrieval.py: 0.4 and 0.5 alike).
    quality_share: float = 0.5
    # Speed, not ranking: from this many vectors in all, the cosines run in a helper thread
    # while this one ranks by BM25 (below, the hand-over costs more than it hides), and how
    # long a search waits for the helper to take its product (`background.Pending.begun`).
    thread_rows: int = 16384
    start_wait_s: float = 0.002

    def judged_per_package(self, packages: int) -> int:
        """How many candidates each of `packages` packages has judged."""
        return max(self.min_judged_per_package, self.judged // packages)


DEFAULT_PARAMS = RankingParams()


@dataclass(eq=False, repr=False)
class SearchOptions:
    budget: int = DEFAULT_BUDGET
    limit: int = DEFAULT_LIMIT
    mode: str = "hybrid"  # hybrid | lexical | dense (the last two for benchmarks)
    params: RankingParams = field(default_factory=lambda: DEFAULT_PARAMS)
    # A caller that serves many questions (the MCP server, the registry's pages) makes each
    # package warm first (`PackageSearcher.warm`): read once, then no section map per question.
    warm: bool = False
