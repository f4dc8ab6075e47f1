"""The shared retry policy (`context_cli.retry`) against a real server on loopback."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Iterator

import pytest
import requests
from web_fixtures import Request, Route, Site, serve

from context_cli.errors import SourceError
from context_cli.retry import RetryPolicy, parse_retry_after, send
from context_cli.sources import artefact

DROP = Route(status=0)  # the handler fails, so the server hangs up without an answer
SLOW = Route(b"ok", delay=1.0)


class Script:
    """Answers in order, the last one repeated; `hits` counts the requests."""

    def __init__(self) -> None:
        self.answers: list[Route] = []
        self.hits = 0
        self.url = ""

    def answer(self, req: Request) -> Route:
        self.hits += 1
        route = self.answers[min(self.hits, len(self.answers)) - 1]
        if route is DROP:
            raise ConnectionResetError("hanging up on purpose")
        return route


def answer(status: int, **headers: str) -> Route:
    return Route(b"ok", status=status, content_type="text/plain", headers=headers)


@pytest.fixture
def script() -> Iterator[Script]:
    srv, site = Script(), Site()
    site.routes["/x"] = Route(handler=srv.answer)
    with serve(site) as base:
        srv.url = base + "/x"
        yield srv


def get(url: str, policy: RetryPolicy, slept: list[float], timeout: float = 5) -> requests.Response:
    return send(lambda: requests.get(url, timeout=timeout), policy, sleep=slept.append)


def test_503_is_retried_then_the_answer_returned(script):
    script.answers = [answer(503), answer(502), answer(200)]
    slept: list[float] = []
    resp = get(script.url, RetryPolicy(attempts=3, backoff=0.5), slept)
    assert (resp.status_code, resp.text) == (200, "ok")
    assert script.hits == 3 and slept == [0.5, 1.0]


def test_when_attempts_run_out_the_last_answer_is_returned(script):
    script.answers = [answer(500)]
    slept: list[float] = []
    resp = get(script.url, RetryPolicy(attempts=4, backoff=1.0), slept)
    assert resp.status_code == 500
    assert script.hits == 4 and slept == [1.0, 2.0, 4.0]


@pytest.mark.parametrize("status", [400, 401, 404, 409])
def test_other_4xx_is_not_retried(script, status):
    script.answers = [answer(status), answer(200)]
    slept: list[float] = []
    assert get(script.url, RetryPolicy(), slept).status_code == status
    assert script.hits == 1 and slept == []


def test_retry_after_is_honoured_and_capped(script):
    script.answers = [answer(503, **{"Retry-After": "7"}), answer(429, **{"Retry-After": "3600"}),
                      answer(200)]
    slept: list[float] = []
    get(script.url, RetryPolicy(attempts=3, backoff=1.0, max_retry_after=60.0), slept)
    assert slept == [7.0, 60.0]


def test_retry_after_beyond_the_cap_can_end_the_retries(script):
    script.answers = [answer(429, **{"Retry-After": "3600"}), answer(200)]
    slept: list[float] = []
    policy = RetryPolicy(max_retry_after=30.0, give_up_beyond_max=True)
    resp = get(script.url, policy, slept)
    assert resp.status_code == 429 and script.hits == 1 and slept == []
    assert parse_retry_after(resp.headers["Retry-After"]) == 3600.0


def test_retry_after_as_a_minimum_or_ignored(script):
    script.answers = [answer(503, **{"Retry-After": "0"}), answer(503, **{"Retry-After": "3"}),
                      answer(200)]
    slept: list[float] = []
    get(script.url, RetryPolicy(backoff=0.5, backoff_is_minimum=True), slept)
    assert slept == [0.5, 3.0]
    script.hits, slept = 0, []
    get(script.url, RetryPolicy(backoff=0.5, honour_retry_after=False), slept)
    assert slept == [0.5, 1.0]


def test_parse_retry_after():
    assert parse_retry_after("120") == 120.0 and parse_retry_after(" 1.5 ") == 1.5
    in_a_minute = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 < parse_retry_after(in_a_minute) <= 60
    assert parse_retry_after(email.utils.formatdate(time.time() - 60, usegmt=True)) == 0.0
    assert parse_retry_after("-5") == 0.0
    for junk in (None, "", "soon", "nan"):
        assert parse_retry_after(junk) is None


def test_dropped_connection_is_retried(script):
    script.answers = [DROP, answer(200)]
    slept: list[float] = []
    assert get(script.url, RetryPolicy(backoff=0.25), slept).status_code == 200
    assert script.hits == 2 and slept == [0.25]


def test_connection_errors_end_with_the_last_one_raised(script):
    script.answers = [DROP]
    slept: list[float] = []
    with pytest.raises(requests.ConnectionError):
        get(script.url, RetryPolicy(attempts=3, backoff=0.25), slept)
    assert script.hits == 3 and slept == [0.25, 0.5]


def test_exceptions_outside_retry_on_are_raised_at_once(script):
    script.answers = [SLOW]
    slept: list[float] = []
    with pytest.raises(requests.exceptions.ReadTimeout):
        get(script.url, RetryPolicy(retry_on=(requests.ConnectionError,)), slept, timeout=0.2)
    assert script.hits == 1 and slept == []


def test_a_caller_turns_the_final_error_into_one_line(script, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(artefact, "_sleep", slept.append)
    script.answers = [DROP]
    host = script.url.split("/")[2]
    with pytest.raises(SourceError) as err:
        artefact.http_get(script.url, what="PyPI", not_found="no such thing", attempts=2)
    assert str(err.value) == f"could not reach PyPI at {host}: the connection was closed"
    assert script.hits == 2 and slept == [1.0]


@pytest.mark.parametrize("text", ["\u00b2", "\u0661\u0662", "\uff11\uff12", "1e3", "inf", "0x10", "1_000", " "])
def test_numbers_from_strangers_are_ascii_digits_only(text, monkeypatch):
    """`int("١٢")` is 12 and `"²".isdigit()` is True: neither may reach a size or a delay."""
    from context_cli.errors import SourceError
    from context_cli.sources.git import version_from_ref
    from context_cli.sources.http import HttpOptions
    from context_cli.sources.transfer import header_int

    assert header_int(text) is None
    assert parse_retry_after(text) is None
    if not text.isascii():
        assert version_from_ref(f"v{text}") is None
    monkeypatch.setenv("CONTEXT_HTTP_TIMEOUT", text)
    if text.strip():
        with pytest.raises(SourceError, match="CONTEXT_HTTP_TIMEOUT=.* is not a number"):
            HttpOptions.from_env()
    assert header_int(" 42 ") == 42 and parse_retry_after("42") == 42.0
