"""The admission gate's two ends in AWS: start a file that waited for a slot, and free the slot when
Step Functions says an execution closed (ending as failed a file it left unfinished)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from semfs.domain.ids import execution_name
from semfs.domain.models import FileRecord
from semfs.pipeline.stages.state import PipelineState

if TYPE_CHECKING:
    from semfs.ports import Container


def _current(c: Container, name: str, state: PipelineState) -> FileRecord | None:
    """The file's record if ``name`` is the execution of its current, unfinished attempt."""
    from semfs.domain.errors import NotFound

    try:
        record = c.repo.get(state.tenant_id, state.file_id)
    except NotFound:
        return None
    if record.status.terminal or execution_name(record.tenant_id, record.file_id, record.attempt) != name:
        return None
    return record


def admit_waiting(c: Container, name: str, state: dict[str, Any]) -> bool:
    """Start a file that waited for a slot (it waits again if none is free yet). A file deleted,
    finished or retried while it waited is not started: ``False``."""
    if _current(c, name, PipelineState.model_validate(state)) is None:
        return False
    c.starter.start(name, state)
    return True


def execution_ended(c: Container, name: str, state: dict[str, Any], status: str) -> None:
    """Step Functions says the execution ``name`` closed (``SUCCEEDED``, ``FAILED``, ``TIMED_OUT`` or
    ``ABORTED``): its slot goes to the next waiting file. The slot is freed only once the execution has
    closed, so the executions running never exceed the bound, not even while one is finishing. A file
    that an execution left unfinished (timed out, aborted, or MarkFailed itself failed) ends as failed;
    its retry is the usual ``POST /files/{id}/retry``."""
    from pydantic import ValidationError

    from semfs.pipeline.stages import finalize

    try:
        parsed = PipelineState.model_validate(state)
    except ValidationError:
        parsed = None  # an input EventBridge left out (over 256 KiB; semfs's state never is)
    if parsed is not None and status != "SUCCEEDED" and _current(c, name, parsed) is not None:
        finalize.mark_failed(parsed.model_copy(update={"error": {"Error": f"execution {status.lower()}"}}), c)
    if parsed is not None:
        c.admission.release(name, parsed.tenant_id)
    # else: the slot's tenant is unknown here (reading the gate is the sweep's permission, not this
    # function's); the reconcile sweep frees it, as any slot of an execution that no longer runs
