"""What every stage shares: load the record, time the work, record a failure before re-raising.

A stage that fails writes the leaf's outcome code and a one-line reason onto the record, then lets
the error propagate; the state machine retries (``RetryableError``) or catches it into MarkFailed,
which reads the outcome from the record. So no step ever parses an error message.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from semfs.domain.errors import SemfsError
from semfs.domain.models import FileRecord, StageTiming
from semfs.domain.outcomes import Outcome, Status
from semfs.observability import get_logger
from semfs.pipeline.state import PipelineState

if TYPE_CHECKING:
    from semfs.ports import Container

log = get_logger(__name__)

StageFn = Callable[[PipelineState, "Container"], PipelineState]


@contextmanager
def stage(name: str, state: PipelineState, c: Container, status: Status | None) -> Iterator[FileRecord]:
    """Mark the record ``status``, yield it, and on a semfs error remember outcome + reason on it."""
    record = c.repo.get(state.tenant_id, state.file_id)
    if status is not None and record.status != status:
        record = record.evolve(status=status)
        c.repo.save(record)
    started = time.perf_counter()
    try:
        yield record
    except SemfsError as e:
        _remember_failure(c, state, e.outcome, e.reason)
        log.info("stage failed", stage=name, file_id=state.file_id, outcome=e.outcome.value)
        raise
    except Exception as e:
        # A bug, not an input problem: keep only the type name (a message may quote document text).
        _remember_failure(c, state, Outcome.FAILED_INTERNAL, f"internal error in {name}: {type(e).__name__}")
        log.error("stage crashed", stage=name, file_id=state.file_id, error=type(e).__name__)
        raise
    ms = (time.perf_counter() - started) * 1000
    log.info("stage finished", stage=name, file_id=state.file_id, ms=round(ms, 1))
    _add_timing(c, state, name, ms)


def _remember_failure(c: Container, state: PipelineState, outcome: Outcome, reason: str) -> None:
    current = c.repo.get(state.tenant_id, state.file_id)
    c.repo.save(current.evolve(outcome=outcome, error=reason[:500]))


def _add_timing(c: Container, state: PipelineState, name: str, ms: float) -> None:
    current = c.repo.get(state.tenant_id, state.file_id)
    timings = [t for t in current.timings if t.stage != name] + [StageTiming(stage=name, ms=round(ms, 1))]
    c.repo.save(current.evolve(timings=timings))
