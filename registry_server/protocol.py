"""uvicorn's HTTP/1.1 protocol with a deadline for request heads (`context_cli.http_guard`,
which `context serve --http` uses too). Bodies are bounded in the app (`app.receive_body`).
"""

from __future__ import annotations

import asyncio
from typing import Any

from context_cli.environment import REGISTRY_HEADER_TIMEOUT
from context_cli.http_guard import HEADER_TIMEOUT, guarded_protocol

HEADER_TIMEOUT_ENV = REGISTRY_HEADER_TIMEOUT.name  # for worker processes (`--workers N`)
__all__ = ["HEADER_TIMEOUT", "HEADER_TIMEOUT_ENV", "with_header_timeout"]


def with_header_timeout(seconds: float) -> type[asyncio.Protocol]:
    """A protocol class for `uvicorn.run(http=...)` with this header deadline."""
    return guarded_protocol(seconds)


def __getattr__(name: str) -> Any:
    """`registry_server.protocol:EnvironmentProtocol`, the import string uvicorn's worker
    processes load: the deadline comes from the parent through `HEADER_TIMEOUT_ENV`."""
    if name == "EnvironmentProtocol":
        return with_header_timeout(float(REGISTRY_HEADER_TIMEOUT.value() or HEADER_TIMEOUT))
    raise AttributeError(name)
