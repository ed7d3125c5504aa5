"""What a local host has where AWS has an admission gate and a job-wait table.

Locally the job queue's worker threads bound how many files are in flight, and no OCR engine runs
document jobs that end on their own, so these do nothing: the pipeline calls them as it calls the AWS
adapters, and never asks whether a port is there.
"""

from __future__ import annotations

from semfs.domain.errors import PermanentError
from semfs.domain.outcomes import Outcome


class UnboundedAdmission:
    """Every execution is admitted and holds no slot (``semfs serve``'s workers bound the work)."""

    def admit(self, name: str, tenant_id: str) -> bool:
        return True

    def release(self, name: str, tenant_id: str | None = None) -> None:
        return None

    def holders(self) -> list[str]:
        return []


class NoJobWaits:
    """No engine here starts a job that ends by itself, so nothing ever waits on one. Tesseract reads
    page by page (``announces_jobs`` is false), so a stage reaching this is a wiring error."""

    def wait(self, job_id: str, token: str) -> bool:
        raise PermanentError("no job-wait store is configured", outcome=Outcome.FAILED_INTERNAL)

    def ended(self, job_id: str) -> bool:
        raise PermanentError("no job-wait store is configured", outcome=Outcome.FAILED_INTERNAL)
