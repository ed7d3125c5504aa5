"""A paused workflow step and the outside job it waits on, which meet in either order."""

from __future__ import annotations

from typing import Protocol


class JobWaits(Protocol):
    """Where a paused step's resume token (a Step Functions task token) meets the end of the job it
    waits on (a Textract notification). The two arrive in either order: a short job can end before
    its waiter is recorded. Whichever comes second resumes the step, so it is resumed once."""

    def wait(self, job_id: str, token: str) -> bool:
        """Record that ``token`` waits on ``job_id``. True when the job had ended already and the step
        was resumed now. Raises ``RetryableError`` when throttled."""
        ...

    def ended(self, job_id: str) -> bool:
        """Record that ``job_id`` ended. True when a waiter was recorded and resumed now (an unknown or
        already-closed one is not an error: the step has gone on or timed out)."""
        ...
