"""A lineage by hand: detach a wrongly linked version, or link a file as the next version of another."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from semfs.domain.errors import InvalidRequest
from semfs.domain.ids import lineage_id_for
from semfs.domain.models import FileRecord
from semfs.domain.outcomes import Status
from semfs.pipeline.documents import follow_lineage, index_record, settle_index, settle_latest
from semfs.pipeline.record_update import update

if TYPE_CHECKING:
    from semfs.ports import Container


def detach_version(c: Container, tenant_id: str, file_id: str, by: str | None = None) -> FileRecord:
    """Take a wrongly linked version out of its lineage: it becomes version 1 of a lineage of its own
    (and its latest), and the lineage it left gets its newest remaining version back as latest."""
    record = c.repo.get(tenant_id, file_id)
    if record.deleted_at is not None:
        raise InvalidRequest("the file is deleted")
    own = lineage_id_for(file_id)
    if record.lineage_id == own and record.version == 1:
        return record  # already a lineage of its own (detaching twice changes nothing)
    return _move(
        c,
        record,
        lambda r: r.evolve(
            lineage_id=own,
            version=1,
            previous_version_id=None,
            is_latest=False,
            change_summary=None,
            provenance={**r.provenance, "version_link": "detached", "detached_from": r.previous_version_id},
            activity=r.did("detached", f"from version {r.version}", by),
        ),
    )


def link_version(c: Container, tenant_id: str, file_id: str, previous_id: str, by: str | None = None) -> FileRecord:
    """Make ``file_id`` the next version of ``previous_id``'s lineage (an explicit link always wins)."""
    record = c.repo.get(tenant_id, file_id)
    target = c.repo.get(tenant_id, previous_id)  # NotFound for another tenant's file too
    if record.deleted_at is not None or target.deleted_at is not None:
        raise InvalidRequest("the file is deleted")
    if target.lineage_id == record.lineage_id:
        raise InvalidRequest("both files are already in one lineage")
    head, number = follow_lineage(c, tenant_id, target)
    return _move(
        c,
        record,
        lambda r: r.evolve(
            lineage_id=head.lineage_id,
            version=number,
            previous_version_id=head.file_id,
            is_latest=False,
            provenance={**r.provenance, "version_link": "explicit"},
            activity=r.did("linked", f"version {number}, after {head.title or head.filename}", by),
        ),
    )


def _move(c: Container, record: FileRecord, change: Callable[[FileRecord], FileRecord]) -> FileRecord:
    """Move ``record`` into another lineage (``change`` says where), settle the latest flag of the lineage it
    joins, and give the one it left its newest remaining version back as latest."""
    old_lineage = record.lineage_id
    moved = update(c.repo, record.tenant_id, record.file_id, change, seen=record)
    moved = _resettle(c, moved)
    resettle_lineage(c, record.tenant_id, old_lineage)
    return moved


def _resettle(c: Container, record: FileRecord) -> FileRecord:
    """Settle the latest flag of ``record``'s lineage and rewrite its index documents."""
    if record.status is not Status.INDEXED:
        return record
    latest, lineage = settle_latest(c, record)
    record = next((v for v in lineage if v.file_id == record.file_id), record)
    index_record(c, record)
    settle_index(c, record.tenant_id, record.lineage_id, latest)
    return record


def resettle_lineage(c: Container, tenant_id: str, lineage_id: str) -> None:
    remaining = [
        v for v in c.repo.lineage(tenant_id, lineage_id) if v.deleted_at is None and v.status is Status.INDEXED
    ]
    if remaining:
        latest, _ = settle_latest(c, max(remaining, key=lambda v: v.version))
        settle_index(c, tenant_id, lineage_id, latest)
