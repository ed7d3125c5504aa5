"""One deadline per request, shared by every outbound call it makes (the LLM, embeddings, rerank).

A request has a budget (``SEMFS_REQUEST_DEADLINE_S``, 25 s: inside API Gateway's 30 s): the hosts open
``request_deadline`` around the router, and each outbound call takes ``time_left(its own timeout)``,
the smaller of the two, with no retries of its own inside a request (``in_request``). Before, one /ask
against an LLM that never answered could wait 60 s x 4 attempts. The pipeline's calls (enrichment,
embedding a file) run outside any request and keep their own timeouts and retries.

The deadline lives in a ``ContextVar``: each of the local host's threads, and each Lambda invocation,
has its own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_deadline: ContextVar[float | None] = ContextVar("semfs_request_deadline", default=None)


class DeadlinePassed(TimeoutError):
    """The request's deadline passed before this call could start."""


@contextmanager
def request_deadline(seconds: float) -> Iterator[None]:
    """Every outbound call inside shares one deadline, ``seconds`` from now."""
    token = _deadline.set(time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def in_request() -> bool:
    return _deadline.get() is not None


def time_left(timeout_s: float) -> float:
    """The seconds an outbound call may take: its own ``timeout_s``, or what is left of the request's
    deadline when that is less. ``DeadlinePassed`` when nothing is left."""
    deadline = _deadline.get()
    if deadline is None:
        return timeout_s
    left = deadline - time.monotonic()
    if left <= 0:
        raise DeadlinePassed("the request's deadline has passed")
    return min(timeout_s, left)
