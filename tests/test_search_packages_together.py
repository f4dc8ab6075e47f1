"""A search over several packages weighs each by how close its best section comes to the
question (`rank.package_priors`): every package's scores are relative to its own best hit,
so without it a library that is not about the question can still offer the "best" answer."""

import pytest
from helpers import EVAL_CORPUS, FIXTURES

from context_cli.adding import AddRequest, add_source
from context_cli.search.engine import SearchOptions, search
from context_cli.search.options import DEFAULT_PARAMS, RankingParams
from context_cli.search.query import Query
from context_cli.search.rank import package_priors
from context_cli.search.run import SearchRun
from context_cli.search.scoring import start_dense
from context_cli.search.searcher import open_searcher

CLICK_DOCS = FIXTURES / "eval" / "click-docs"
# Questions about Click that do not name it; Anthropic's docs also speak of tools and loops.
CLICK_QUESTIONS = {
    "What's the difference between `ctx.invoke` and `ctx.forward` when calling another command from inside a command?":
        "advanced.md",
    "I'm looping over 10,000 files and want to show a bar with an estimated time remaining. Is something built in?":
        "utils.md",
}


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTEXT_HOME", str(home))
        anthropic = add_source(AddRequest(source=str(EVAL_CORPUS), name="anthropic", version="1.0.0")).installed
        click = add_source(AddRequest(source=str(CLICK_DOCS), name="click", version="8.5.1")).installed
        yield anthropic, click


@pytest.mark.parametrize("question", CLICK_QUESTIONS)
def test_the_library_the_question_is_about_answers_first(libraries, question, monkeypatch):
    anthropic, click = libraries
    first = search(question, [anthropic, click])["results"][0]
    assert (first["library"], first["source"]) == (click.label, CLICK_QUESTIONS[question])
    alone = search(question, [click])["results"][0]
    assert (alone["library"], alone["source"]) == (first["library"], first["source"])


def test_without_the_prior_another_library_answered(libraries):
    """The rule matters: each question above was answered from Anthropic's docs before the
    package priors (the cosines', and the name and vocabulary one)."""
    anthropic, click = libraries
    without = SearchOptions(params=RankingParams(package_prior=0.0, name_prior=0.0, vocabulary_prior=0.0))
    firsts = [search(q, [anthropic, click], without)["results"][0]["library"] for q in CLICK_QUESTIONS]
    assert anthropic.label in firsts


def test_weights_are_one_for_the_closest_package_and_less_for_the_others(libraries):
    anthropic, click = libraries
    query = Query.of(next(iter(CLICK_QUESTIONS)))
    run = SearchRun.of([open_searcher(anthropic), open_searcher(click)], query)
    dense = start_dense(query, run.packages, "hybrid", DEFAULT_PARAMS)
    for pq in run.packages:
        pq.dense = dense(pq)
    weights = package_priors(run.packages, 2, DEFAULT_PARAMS)
    assert weights[1] == 1.0 and 0 < weights[0] < 1.0
    assert package_priors(run.packages[:1], 1, DEFAULT_PARAMS) == [1.0]  # one package: nothing to weigh
    run.packages[1].dense = None  # (searched lexically)
    assert package_priors(run.packages, 2, DEFAULT_PARAMS) == [1.0, 1.0]
