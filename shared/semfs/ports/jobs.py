from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

JobState = Literal["queued", "running", "done", "failed", "cancelled"]


@dataclass(frozen=True)
class Job:
    """One file's run through the pipeline, as the work queue sees it."""

    execution: str
    tenant_id: str
    file_id: str
    state: JobState
    enqueued_at: float
    started_at: float | None = None
    finished_at: float | None = None


class JobQueue(Protocol):
    """Files waiting for or in the pipeline. Locally a durable SQLite queue that ``semfs serve``'s
    workers drain (uploads, mail and the drop folder answer at once and never block searches); in AWS
    the executions of the state machine, seen through the records."""

    def enqueue(self, execution: str, tenant_id: str, file_id: str, state: dict[str, Any]) -> bool:
        """Queue an execution once (a repeated name is a no-op, returns ``False``). Durable."""
        ...

    def jobs(self, tenant_id: str, states: tuple[JobState, ...] = ("queued", "running")) -> list[Job]:
        """The tenant's jobs in these states, oldest first."""
        ...

    def backlog(self, tenant_id: str) -> int:
        """How many of the tenant's files wait to start (queued, not yet running)."""
        ...

    def cancel(self, tenant_id: str, file_id: str) -> bool:
        """Take a queued (not yet running) file out of the queue; ``False`` if it was not queued."""
        ...
