"""The unit of work on one record: read once, change, one conditional write — re-applied on conflict.

Every write of a ``FileRecord`` is conditional on the revision it was read at, so a pipeline stage
and a concurrent tag edit (or two Lambdas) never overwrite each other's fields: the loser re-reads
and re-applies its *change*, not a stale copy of the whole record.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from semfs.domain.errors import Conflict, RetryableError
from semfs.domain.models import FileRecord
from semfs.ports.repository import FileRepository

ATTEMPTS = 8


def update(
    repo: FileRepository,
    tenant_id: str,
    file_id: str,
    change: Callable[[FileRecord], FileRecord],
    *,
    seen: FileRecord | None = None,
) -> FileRecord:
    """Apply ``change`` to the record and write it conditionally; on ``Conflict`` re-read and re-apply.
    With ``seen`` (a copy the caller already read), the first attempt costs no read. Returns the record
    as stored. Raises ``RetryableError`` when writers keep colliding, ``NotFound`` when it is gone."""
    current = seen if seen is not None else repo.get(tenant_id, file_id)
    for attempt in range(ATTEMPTS):
        try:
            return repo.save(change(current))
        except Conflict:
            time.sleep(random.uniform(0, 0.005 * 2**attempt))  # full jitter: colliding writers spread out
            current = repo.get(tenant_id, file_id)
    raise RetryableError(f"record {file_id} kept changing under {ATTEMPTS} writes")
