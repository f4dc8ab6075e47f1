"""When and how long to retry an HTTP request: one policy shared by all our HTTP clients.

`send` runs a request under a `RetryPolicy` and leaves error messages to its caller: it returns
the last answer whatever its status, raises the last retryable exception, any other at once.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import requests


@dataclass(frozen=True)
class RetryPolicy:
    """429 and 5xx answers and `retry_on` exceptions are retried; waits double from `backoff`."""

    attempts: int = 3  # tries in all, the first included
    backoff: float = 0.5  # seconds before the second try
    retry_on: tuple[type[Exception], ...] = (requests.ConnectionError, requests.Timeout)
    honour_retry_after: bool = True  # wait as long as a 429/5xx answer's Retry-After asks...
    max_retry_after: float = 30.0  # ...but at most this long
    give_up_beyond_max: bool = False  # a longer Retry-After ends the retries (else: wait the max)
    backoff_is_minimum: bool = False  # Retry-After may lengthen the backoff, never shorten it

    def retries_status(self, status: int) -> bool:
        return status == 429 or status >= 500

    def delay(self, attempt: int, retry_after: str | None = None) -> float | None:
        """Seconds to wait after failed try `attempt` (0 is the first); None: stop retrying."""
        wait = self.backoff * 2.0 ** attempt
        asked = parse_retry_after(retry_after) if self.honour_retry_after else None
        if asked is None:
            return wait
        if asked > self.max_retry_after and self.give_up_beyond_max:
            return None
        asked = min(asked, self.max_retry_after)
        return max(wait, asked) if self.backoff_is_minimum else asked


def parse_retry_after(value: str | None) -> float | None:
    """`Retry-After` (seconds or an HTTP date) as seconds from now, >= 0; None if unreadable."""
    text = (value or "").strip()
    if re.fullmatch(r"-?[0-9]{1,12}(\.[0-9]{1,6})?", text):  # ASCII only: `²`, `1e9`, `nan` are no delay
        return max(float(text), 0.0)
    try:
        seconds = email.utils.parsedate_to_datetime(text).timestamp() - time.time()
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    return max(seconds, 0.0)


def send(request: Callable[[], requests.Response], policy: RetryPolicy, *,
         sleep: Callable[[float], None] | None = None) -> requests.Response:
    """Call `request` until its answer is not one to retry or the policy says stop; a retried
    answer is closed. `sleep` defaults to `time.sleep` (tests pass their own)."""
    sleep, attempts = sleep or time.sleep, max(policy.attempts, 1)
    for attempt in range(attempts):
        last = attempt == attempts - 1
        try:
            resp = request()
        except policy.retry_on:
            if last:
                raise
            sleep(policy.backoff * 2 ** attempt)
            continue
        retry = not last and policy.retries_status(resp.status_code)
        wait = policy.delay(attempt, resp.headers.get("Retry-After")) if retry else None
        if wait is None:
            return resp
        resp.close()
        sleep(wait)
    raise AssertionError("unreachable")
