"""Rebuild the search index from the records and stored blobs; a file read before entities were found
(or while they were switched off) has them found on the way, from its stored text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from semfs.domain.features import enabled
from semfs.domain.models import Enrichment, FileRecord, IndexDoc
from semfs.domain.outcomes import Status
from semfs.pipeline.catalogue.files import iter_records
from semfs.pipeline.documents import load_document, rebuild_index_docs
from semfs.pipeline.file_entities import record_entities
from semfs.pipeline.record_update import update

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
                pending.append((tenant, record.file_id, rebuild_index_docs(c, record)))
                c.tags.record_uses(tenant, record.file_id, record.all_tags)  # idempotent: seeds old stores
                backfill_entities(c, record)
                n += 1
                if len(pending) >= _REINDEX_FILES_PER_WRITE:
                    c.index.replace_files(pending)
                    pending = []
            c.index.replace_files(pending)
    return n


NO_LLM = Enrichment(title="", summary="", auto_tags=[])  # the patterns and contacts alone: no model call per file


def backfill_entities(c: Container, record: FileRecord) -> None:
    """Find the entities of a file that has none recorded (read before entities existed); a file whose
    text names none is read again each time, which costs what its extraction costs and nothing else."""
    if record.entities or not enabled(c.settings, "entities"):
        return
    found = record_entities(c, record, load_document(c, record), NO_LLM)
    if found:
        update(c.repo, record.tenant_id, record.file_id, lambda r: r.evolve(entities=found), seen=record)
