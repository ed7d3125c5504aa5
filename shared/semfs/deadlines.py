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


# -- long work in passes ----------------------------------------------------------------------------
# A maintenance pass (a tenant's erasure) runs inside one invocation's time; the store calls that walk a
# whole tenant check between pages whether the pass's deadline has passed, and stop there. The work is
# idempotent, so the next pass, from the maintenance queue, goes on where it stopped. A walk that cannot
# tell done from left by looking (a scan of a whole table) also hands back where it stopped (``cursor``)
# and is handed it again by the next pass.
_work: ContextVar[tuple[float | None, str | None]] = ContextVar("semfs_work", default=(None, None))


class WorkStopped(Exception):
    """A pass's deadline passed between two pages of work; ``done``: what it did before stopping; ``cursor``:
    where a walk that needs one goes on from."""

    def __init__(self, done: int, cursor: str | None = None) -> None:
        super().__init__(f"stopped at the pass's deadline after {done:,}")
        self.done, self.cursor = done, cursor


@contextmanager
def work_until(deadline: float | None, cursor: str | None = None) -> Iterator[None]:
    """Work inside stops between pages once ``deadline`` (monotonic) has passed (None: never), a walk that
    stopped before going on from ``cursor``."""
    token = _work.set((deadline, cursor))
    try:
        yield
    finally:
        _work.reset(token)


def resume_cursor() -> str | None:
    """Where the walk this pass goes on with stopped (None: from the start)."""
    return _work.get()[1]


def stop_if_late(done: int, cursor: str | None = None) -> None:
    """Between two pages of a long walk: ``WorkStopped(done, cursor)`` once the pass's deadline has passed.
    Called only where a page follows: each pass does a page at least, so the passes always end."""
    deadline = _work.get()[0]
    if deadline is not None and time.monotonic() >= deadline:
        raise WorkStopped(done, cursor)
