"""Finalize (success) and MarkFailed (every caught error): the file's one outcome, then an event."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.domain.outcomes import Outcome, Status
from semfs.observability import get_logger
from semfs.pipeline.record_update import update
from semfs.pipeline.stages.state import PipelineState
from semfs.pipeline.stages.unit_of_work import stage

if TYPE_CHECKING:
    from semfs.ports import Container
log = get_logger(__name__)


def run(state: PipelineState, c: Container) -> PipelineState:
    with stage("finalize", state, c, Status.INDEXED) as work:
        outcome, reason = Outcome.OK, None
        if state.partial:  # the reason says which bound, and what was kept
            outcome, reason = Outcome.OK_PARTIAL, state.partial_reason or "part of the file could not be read"
        elif state.enrich_fallback:
            outcome = Outcome.OK_ENRICH_FALLBACK
        work.set(outcome=outcome, error=reason)
    record = work.record
    c.events.publish(
        "FileIndexed",
        {
            "tenant_id": record.tenant_id,
            "file_id": record.file_id,
            "lineage_id": record.lineage_id,
            "version": record.version,
            "outcome": outcome.value,
        },
    )
    log.info("file indexed", file_id=record.file_id, outcome=outcome.value, chunks=record.chunk_count)
    return state


def mark_failed(state: PipelineState, c: Container) -> PipelineState:
    """The catch target: end the file with the outcome its failing stage recorded (else
    ``FAILED_INTERNAL``) and make sure nothing of it stays in the index."""
    record = c.repo.get(state.tenant_id, state.file_id)
    outcome = record.outcome if record.outcome and not record.outcome.value.startswith("OK") else None
    if outcome is None:
        outcome = Outcome.FAILED_INTERNAL
    error = record.error or f"unhandled error: {(state.error or {}).get('Error', 'unknown')}"
    c.index.delete_file(record.tenant_id, record.file_id)
    final = outcome
    update(
        c.repo,
        record.tenant_id,
        record.file_id,
        lambda r: r.evolve(status=final.final_status, outcome=final, error=error),
        seen=record,
    )
    detail = "FileSkipped" if outcome.final_status is Status.SKIPPED else "FileFailed"
    c.events.publish(detail, {"tenant_id": record.tenant_id, "file_id": record.file_id, "outcome": outcome.value})
    log.info("file not indexed", file_id=record.file_id, outcome=outcome.value)
    return state.model_copy(update={"outcome": outcome.value})
