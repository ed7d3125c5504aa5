"""The queue as a person sees it: files queued and in flight, per stage."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from semfs.domain.access import can_read
from semfs.domain.errors import NotFound
from semfs.domain.results import QueuedFile, QueueView

if TYPE_CHECKING:
    from semfs.ports import Container


def jobs_view(c: Container, tenant_id: str, readers: tuple[str, ...] | None = None) -> QueueView:
    """Files queued and in flight (those shared with ``readers``; ``None``: all), each with the stage its
    record names, and counts per stage."""
    rows = []
    for job in c.jobs.jobs(tenant_id):
        try:
            record = c.repo.get(tenant_id, job.file_id)
        except NotFound:
            continue
        if not can_read(record.readers, readers):
            continue
        rows.append(
            QueuedFile(
                file_id=job.file_id,
                filename=record.filename,
                state=job.state,
                stage=record.status.value,
                enqueued_at=job.enqueued_at,
                started_at=job.started_at,
            )
        )
    stages = Counter(r.stage if r.state == "running" else "queued" for r in rows)
    return QueueView(jobs=rows, counts=dict(sorted(stages.items())))
