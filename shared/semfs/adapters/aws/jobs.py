"""``RecordJobs``: the AWS view of work in flight — files whose record is not yet terminal.

Step Functions runs the executions and the uploads queue gates them; there is no local queue to
cancel from, so ``cancel`` answers ``False`` (stop an execution with the Step Functions console/API).
"""

from __future__ import annotations

from typing import Any

from semfs.domain.outcomes import TERMINAL_STATUSES, Status
from semfs.ports.jobs import Job, JobState
from semfs.ports.repository import FileRepository, RecordQuery


class RecordJobs:
    def __init__(self, repo: FileRepository) -> None:
        self._repo = repo

    def enqueue(self, execution: str, tenant_id: str, file_id: str, state: dict[str, Any]) -> bool:
        return False  # the state machine is the queue in AWS

    def jobs(self, tenant_id: str, states: tuple[JobState, ...] = ("queued", "running")) -> list[Job]:
        pending = [s for s in Status if s not in TERMINAL_STATUSES]
        records = self._repo.query(RecordQuery(tenant_id=tenant_id, statuses=pending, order="oldest", limit=1000))
        out = []
        for r in records:
            state: JobState = "queued" if r.status is Status.RECEIVED else "running"
            if state in states:
                out.append(Job(f"pf-{r.file_id}", tenant_id, r.file_id, state, r.created_at.timestamp()))
        return out

    def backlog(self, tenant_id: str) -> int:
        """Files received and not yet started (waiting for an admission slot), up to the query's page."""
        return len(self.jobs(tenant_id, ("queued",)))

    def cancel(self, tenant_id: str, file_id: str) -> bool:
        return False
