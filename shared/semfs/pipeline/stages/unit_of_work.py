"""What every stage shares: one read of the record, the work, one conditional write.

A stage reads its record once, does its work, and says what changes (``work.set(...)``); the context
writes those changes, the stage's timing and the status of what comes next in **one** conditional
write (re-applied on a fresh copy if a concurrent writer, such as a tag edit, got there first). A
stage that fails writes the leaf's outcome code and a one-line reason the same way, then lets the
error propagate: the state machine retries (``RetryableError``) or catches it into MarkFailed, which
reads the outcome from the record. So no step ever parses an error message.

``status`` names what the file waits for or is in: ``received`` until Extract finishes, then ``ocr``
or ``enriching``, ``embedding``, ``indexing``, and ``indexed`` from Finalize.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from semfs.domain.errors import SemfsError
from semfs.domain.models import FileRecord, StageTiming
from semfs.domain.outcomes import Outcome, Status
from semfs.observability import get_logger
from semfs.pipeline.record_update import update
from semfs.pipeline.stages.state import PipelineState

if TYPE_CHECKING:
    from semfs.ports import Container
log = get_logger(__name__)


@dataclass
class Work:
    """The record a stage read, and the changes it will write at the end."""

    record: FileRecord
    changes: dict[str, Any] = field(default_factory=dict)
    next_status: Status | None = None

    def set(self, **changes: Any) -> None:
        self.changes.update(changes)

    def rebase(self, record: FileRecord) -> None:
        """The stage changed the record through another repository call (the lineage transaction):
        the final write is conditional on that newer revision instead."""
        self.record = record


@contextmanager
def stage(name: str, state: PipelineState, c: Container, next_status: Status | None = None) -> Iterator[Work]:
    """Yield the record once read; on success write the changes + timing + ``next_status`` in one
    conditional write; on a semfs error write its outcome + reason instead, then re-raise."""
    work = Work(c.repo.get(state.tenant_id, state.file_id), next_status=next_status)
    started = time.perf_counter()
    try:
        yield work
    except SemfsError as e:
        _finish(c, work, name, started, {"outcome": e.outcome, "error": e.reason[:500]})
        log.info("stage failed", stage=name, file_id=state.file_id, outcome=e.outcome.value)
        raise
    except Exception as e:
        # A bug, not an input problem: keep only the type name (a message may quote document text).
        reason = f"internal error in {name}: {type(e).__name__}"
        _finish(c, work, name, started, {"outcome": Outcome.FAILED_INTERNAL, "error": reason})
        log.error("stage crashed", stage=name, file_id=state.file_id, error=type(e).__name__)
        raise
    changes = dict(work.changes)
    if work.next_status is not None:
        changes["status"] = work.next_status
    ms = _finish(c, work, name, started, changes)
    log.info("stage finished", stage=name, file_id=state.file_id, ms=ms)


def _finish(c: Container, work: Work, name: str, started: float, changes: dict[str, Any]) -> float:
    ms = round((time.perf_counter() - started) * 1000, 1)

    def apply(current: FileRecord) -> FileRecord:
        timings = [t for t in current.timings if t.stage != name] + [StageTiming(stage=name, ms=ms)]
        return current.evolve(**changes, timings=timings)

    work.record = update(c.repo, work.record.tenant_id, work.record.file_id, apply, seen=work.record)
    return ms
