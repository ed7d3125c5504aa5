from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from semfs.domain.models import FileRecord
from semfs.domain.outcomes import Status
from semfs.domain.scope import RecordClause, record_scope


@dataclass(frozen=True)
class RecordQuery:
    """A filter over one tenant's records. The tenant is mandatory: there is no cross-tenant read."""

    tenant_id: str
    statuses: Sequence[Status] = ()
    lineage_id: str | None = None
    thread_id: str | None = None
    source_type: str | None = None
    mime_type: str | None = None
    tag: str | None = None
    contact_id: str | None = None
    entity: str | None = None  # an entity id (``domain/mentions.py``) the file names
    source_key: str | None = None
    latest_only: bool = False
    include_deleted: bool = False
    created_from: datetime | None = None
    created_to: datetime | None = None
    limit: int = 100
    after: str | None = None  # cursor (order "id" only): the last file_id of the previous page
    offset: int = 0  # paging for the other orders
    # "id" (stable, for sweeps), "newest"/"oldest" (by created_at), "name" (filename), "size" (largest first)
    order: Literal["id", "newest", "oldest", "name", "size"] = "id"
    exclude_duplicates: bool = False  # leave out SKIPPED_DUPLICATE records
    # who the query reads as (``Principal.tokens()``): only files shared with one of these; None: every file
    readers: Sequence[str] | None = None

    def clauses(self) -> list[RecordClause]:
        """The filter as clause data (``domain.scope``), for each adapter's compiler; paging and order
        are the adapter's own."""
        return record_scope(
            self.tenant_id,
            readers=self.readers,
            statuses=[s.value for s in self.statuses],
            terms=[
                ("lineage", self.lineage_id),
                ("thread", self.thread_id),
                ("source_type", self.source_type),
                ("mime", self.mime_type),
                ("tag", self.tag),
                ("contact", self.contact_id),
                ("entity", self.entity),
                ("source_key", self.source_key),
            ],
            latest_only=self.latest_only,
            include_deleted=self.include_deleted,
            created=(self.created_from, self.created_to),
            exclude_duplicates=self.exclude_duplicates,
            after=self.after,
        )


class FileRepository(Protocol):
    """File records, the source of truth (DynamoDB in AWS, SQLite locally)."""

    def create(self, record: FileRecord) -> bool:
        """Insert ``record`` (at revision 1) if no record has its ``file_id`` (conditional write).
        Returns ``False`` when one already exists, and changes nothing then: registration is idempotent."""
        ...

    def save(self, record: FileRecord) -> FileRecord:
        """Write ``record`` if the stored record is still at ``record.revision`` (the revision it was
        read at) and return it as stored, one revision later. Raises ``Conflict`` when another writer
        got there first (re-read and re-apply: ``semfs.pipeline.record_update.update`` does), ``NotFound``
        when there is no record: only ``create`` makes records."""
        ...

    def get(self, tenant_id: str, file_id: str) -> FileRecord:
        """The record, or ``NotFound`` — also when it belongs to another tenant."""
        ...

    def find_by_sha256(self, tenant_id: str, sha256: str) -> list[FileRecord]:
        """Live (not deleted) records in the tenant with these bytes, oldest first."""
        ...

    def find_latest(self, tenant_id: str, version_key: str) -> FileRecord | None:
        """The highest live, not skipped version registered under ``version_key`` (for implicit versions)."""
        ...

    def registered_under(self, tenant_id: str, version_key: str) -> bool:
        """Whether any record, deleted and skipped ones too, was registered under ``version_key`` (an
        upload's is ``s3:<key>``: the reconcile sweep asks it of every object, one indexed lookup each)."""
        ...

    def lineage(self, tenant_id: str, lineage_id: str) -> list[FileRecord]:
        """Every version of a lineage (deleted ones too), by version ascending."""
        ...

    def set_latest(self, tenant_id: str, lineage_id: str, file_id: str) -> list[FileRecord]:
        """Make ``file_id`` the only latest version of its lineage, unless a higher live version is
        already latest (an older version never becomes latest), in one transaction that bumps the
        revision of every record it changes. Returns the lineage afterwards, by version (``[]`` when
        ``file_id`` is not a live version of it). Raises ``Conflict`` when a concurrent writer changed
        the lineage meanwhile (the caller retries)."""
        ...

    def query(self, q: RecordQuery) -> list[FileRecord]:
        """Records matching ``q`` in ``q.order``, at most ``q.limit``, after ``q.after`` / from ``q.offset``."""
        ...

    def counts(self, tenant_id: str | None = None) -> dict[tuple[str, str | None], int]:
        """``(status, outcome) → count``, for one tenant or all."""
        ...

    def tenants(self) -> list[str]:
        """Every tenant with at least one record (maintenance sweeps only)."""
        ...

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase every record of the tenant (tombstones too) and its counts; how many records went.
        Only a tenant's purge calls it: a file's own deletion leaves a tombstone. Idempotent."""
        ...

    def unfinished(self) -> list[FileRecord]:
        """Records in a non-terminal status, across tenants (for resume)."""
        ...
