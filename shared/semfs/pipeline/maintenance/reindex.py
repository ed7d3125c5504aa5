"""Rebuild the search index from the records and stored blobs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from semfs.domain.models import IndexDoc
from semfs.domain.outcomes import Status
from semfs.pipeline.catalogue.files import iter_records
from semfs.pipeline.documents import record_docs

if TYPE_CHECKING:
    from semfs.ports import Container


_REINDEX_FILES_PER_WRITE = 200  # files per index write while rebuilding (one transaction each locally)


def reindex(c: Container) -> int:
    """Rebuild the whole index from records + blobs. Returns the number of files indexed."""
    c.index.clear()
    n = 0
    with c.index.batch():
        for tenant in c.repo.tenants():
            pending: list[tuple[str, str, Sequence[IndexDoc]]] = []
            for record in iter_records(c, tenant, (Status.INDEXED,)):
                pending.append((tenant, record.file_id, record_docs(c, record)))
                c.tags.record_uses(tenant, record.file_id, record.all_tags)  # idempotent: seeds old stores
                n += 1
                if len(pending) >= _REINDEX_FILES_PER_WRITE:
                    c.index.replace_files(pending)
                    pending = []
            c.index.replace_files(pending)
    return n
