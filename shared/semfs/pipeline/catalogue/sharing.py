"""Who may read a file, changed by its owner or an admin (``domain/access.py``): every version of its
document at once (a new version keeps its lineage's access), each change in the file's history, and its
index documents rewritten so that the next search already filters by the new readers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from semfs.domain.access import Principal, changed_readers, describe, readers_of, user_token
from semfs.domain.errors import InvalidRequest, NotFound
from semfs.domain.models import FileRecord
from semfs.domain.outcomes import Status
from semfs.pipeline.documents import index_record
from semfs.pipeline.record_update import update

if TYPE_CHECKING:
    from semfs.ports import Container


def share(
    c: Container,
    principal: Principal,
    record: FileRecord,
    add: Sequence[str],
    revoke: Sequence[str],
    by: str | None = None,
) -> FileRecord:
    """Share ``record``'s document with ``add`` and stop sharing it with ``revoke`` (reader tokens); the
    record as it is after. Its owner or an admin only (``NotFound`` for anyone else: they may not know more
    than that it exists for them); the owner cannot be revoked."""
    if not (principal.is_admin or record.owner is None or record.owner == principal.user):
        raise InvalidRequest("only the file's owner or an admin may change who reads it")
    if record.owner and user_token(record.owner) in revoke:
        raise InvalidRequest("the owner always reads their file")
    new = changed_readers(record.readers, add, revoke, record.owner)
    if new == readers_of(record.readers):
        return record
    shared = [describe(t) for t in new if t not in readers_of(record.readers)]
    unshared = [describe(t) for t in readers_of(record.readers) if t not in new]
    out = record
    for version in c.repo.lineage(record.tenant_id, record.lineage_id):
        changed = _apply(c, version, list(new), shared, unshared, by)
        if changed.file_id == record.file_id:
            out = changed
    return out


def _apply(
    c: Container, version: FileRecord, readers: list[str], shared: list[str], unshared: list[str], by: str | None
) -> FileRecord:
    def edit(current: FileRecord) -> FileRecord:
        activity = list(current.activity)
        if shared:
            activity = current.evolve(activity=activity).did("shared", ", ".join(shared), by)
        if unshared:
            activity = current.evolve(activity=activity).did("unshared", ", ".join(unshared), by)
        return current.evolve(readers=readers, activity=activity)

    try:
        changed = update(c.repo, version.tenant_id, version.file_id, edit)
    except NotFound:  # erased meanwhile
        return version
    if changed.status is Status.INDEXED:
        index_record(c, changed)  # the documents carry the readers every search filters by
    return changed
