"""The trash: a deleted file (or lineage) is hidden, not gone, until it is purged.

``trash`` takes a file out of the index and out of every listing, search, answer and briefing (its record
keeps ``deleted_at``, so every scope that leaves deleted records out leaves it out) and marks it
``trashed``; what it stored stays. ``restore`` brings it back as it was: the status its outcome gave it,
its documents rewritten into the index from the stored chunks and vectors, the lineage's latest version
settled again. ``purge`` erases what it stored (``erase``: text, chunks, vectors, its bytes
unless another live record holds them, the uploaded object) and leaves a tombstone (``deleted``), which
cannot be restored. Files stay in the trash ``SEMFS_TRASH_DAYS`` (default 30) days: ``semfs reconcile``
(the scheduled sweep in AWS) purges older ones, and ``empty_trash`` purges on demand. With
``SEMFS_TRASH_DAYS=0`` a delete purges at once.

The same functions serve both backends: the trash is a status and a time on the record, and every
repository already keeps both.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from semfs.domain.errors import InvalidRequest
from semfs.domain.ids import execution_name
from semfs.domain.models import FileRecord, utcnow
from semfs.domain.outcomes import Status
from semfs.pipeline.catalogue.versions import resettle_lineage
from semfs.pipeline.documents import UPLOAD_PREFIX, derived_key, index_record
from semfs.pipeline.record_update import update
from semfs.pipeline.stages.state import PipelineState
from semfs.ports.repository import RecordQuery

if TYPE_CHECKING:
    from semfs.ports import Container

PAGE = 500


def trash(
    c: Container, tenant_id: str, file_id: str, all_versions: bool = False, by: str | None = None
) -> list[FileRecord]:
    """Move the file (with ``all_versions``, its whole lineage) to the trash; the records moved. A file
    already in the trash, or purged, is left as it is. Deleting the latest version makes the newest
    remaining indexed version latest."""
    record = c.repo.get(tenant_id, file_id)
    targets = c.repo.lineage(tenant_id, record.lineage_id) if all_versions else [record]
    moved: list[FileRecord] = []
    for target in targets:
        if target.deleted_at is not None:
            continue
        c.index.delete_file(tenant_id, target.file_id)
        moved.append(
            update(
                c.repo,
                tenant_id,
                target.file_id,
                lambda r: r.evolve(
                    deleted_at=utcnow(), status=Status.TRASHED, is_latest=False, activity=r.did("trashed", by=by)
                ),
                seen=target,
            )
        )
    resettle_lineage(c, tenant_id, record.lineage_id)
    if moved:
        c.events.publish("FileTrashed", {"tenant_id": tenant_id, "file_ids": [r.file_id for r in moved]})
    if c.settings.trash_days == 0:  # no trash kept: a delete is final at once
        return purge(c, tenant_id, [r.file_id for r in moved])
    return moved


def restore(
    c: Container, tenant_id: str, file_id: str, all_versions: bool = False, by: str | None = None
) -> list[FileRecord]:
    """Bring the file (with ``all_versions``, every version of its lineage in the trash) back from the
    trash, as it was before; the records restored. ``InvalidRequest`` for a file not in the trash
    (a purged file is gone for good)."""
    record = c.repo.get(tenant_id, file_id)
    if record.status is not Status.TRASHED:
        raise InvalidRequest(
            "this file was deleted for good and cannot be restored"
            if record.status is Status.DELETED
            else "this file is not in the trash"
        )
    targets = c.repo.lineage(tenant_id, record.lineage_id) if all_versions else [record]
    restored: list[FileRecord] = []
    for target in targets:
        if target.status is not Status.TRASHED:
            continue
        status = target.outcome.final_status if target.outcome is not None else Status.RECEIVED
        back = update(
            c.repo,
            tenant_id,
            target.file_id,
            lambda r, s=status: r.evolve(  # type: ignore[misc]
                deleted_at=None,
                status=s,
                attempt=r.attempt + (s is Status.RECEIVED),
                activity=r.did("restored", by=by),
            ),
            seen=target,
        )
        if back.status is Status.INDEXED:
            index_record(c, back)
        elif back.status is Status.RECEIVED:  # trashed before it was processed: process it now
            state = PipelineState(tenant_id=tenant_id, file_id=back.file_id, attempt=back.attempt)
            c.starter.start(execution_name(tenant_id, back.file_id, back.attempt), state.model_dump(mode="json"))
        restored.append(back)
    resettle_lineage(c, tenant_id, record.lineage_id)
    if restored:
        c.events.publish("FileRestored", {"tenant_id": tenant_id, "file_ids": [r.file_id for r in restored]})
    return [c.repo.get(tenant_id, r.file_id) for r in restored]


def purge(c: Container, tenant_id: str, file_ids: list[str]) -> list[FileRecord]:
    """Erase the trashed files named (``erase``) and leave their tombstones; the tombstones.
    A file that is not in the trash is left alone (delete it first)."""
    done: list[FileRecord] = []
    for file_id in file_ids:
        record = c.repo.get(tenant_id, file_id)
        if record.status is not Status.TRASHED:
            continue
        c.index.delete_file(tenant_id, file_id)  # (a restore racing this purge may have written it back)
        tomb = update(
            c.repo,
            tenant_id,
            file_id,
            lambda r: r.evolve(status=Status.DELETED, summary=None, change_summary=None),
            seen=record,
        )
        erase(c, tomb)
        done.append(tomb)
    if done:
        c.events.publish("FileDeleted", {"tenant_id": tenant_id, "file_ids": [r.file_id for r in done]})
    return done


def in_trash(c: Container, tenant_id: str, limit: int = 100, offset: int = 0) -> list[FileRecord]:
    """The tenant's trash, the most recently deleted first."""
    page = c.repo.query(RecordQuery(tenant_id=tenant_id, statuses=[Status.TRASHED], include_deleted=True, limit=10_000))
    page.sort(key=lambda r: r.deleted_at or r.updated_at, reverse=True)
    return page[offset : offset + limit]


def purge_date(c: Container, record: FileRecord) -> str | None:
    """When a trashed file will be purged (ISO date), or ``None`` when it is not in the trash."""
    if record.status is not Status.TRASHED or record.deleted_at is None:
        return None
    return (record.deleted_at + timedelta(days=c.settings.trash_days)).date().isoformat()


def empty_trash(c: Container, tenant_id: str, older_than_days: float | None = None) -> list[FileRecord]:
    """Purge the tenant's trash: all of it, or what was deleted more than ``older_than_days`` ago."""
    return purge(c, tenant_id, expired(c, tenant_id, older_than_days))


def expired(c: Container, tenant_id: str, older_than_days: float | None = None) -> list[str]:
    """The ids of the tenant's trashed files deleted more than ``older_than_days`` ago (all: ``None``)."""
    cutoff = utcnow() - timedelta(days=older_than_days) if older_than_days is not None else None
    found: list[str] = []
    after: str | None = None
    while True:  # every page read before any purge: purging moves records out of the query
        page = c.repo.query(
            RecordQuery(tenant_id=tenant_id, statuses=[Status.TRASHED], include_deleted=True, limit=PAGE, after=after)
        )
        found += [r.file_id for r in page if cutoff is None or (r.deleted_at or r.updated_at) < cutoff]
        if len(page) < PAGE:
            return found
        after = page[-1].file_id


def erase(c: Container, record: FileRecord) -> None:
    """What a deleted file stored goes (in S3 every version of it): its extracted text, chunks and
    vectors; the entities it named; its original bytes unless a live record of the tenant holds the same
    bytes (they are stored once a tenant); and the uploaded object it came from (``trash.purge`` calls
    it: a trashed file keeps all of it until then)."""
    for key, _ in list(c.blobs.list(derived_key(record.tenant_id, record.file_id, ""))):
        c.blobs.delete(key)
    c.entities.replace_file(record.tenant_id, record.file_id, [])  # the entities it named forget it
    if record.blob_key:
        shared = c.repo.find_by_sha256(record.tenant_id, record.sha256)
        if not any(r.deleted_at is None and r.blob_key == record.blob_key for r in shared):
            c.blobs.delete(record.blob_key)
    if record.source_key.startswith(f"s3:{UPLOAD_PREFIX}{record.tenant_id}/"):
        c.blobs.delete(record.source_key.removeprefix("s3:"))  # (its removal event finds a tombstone)
