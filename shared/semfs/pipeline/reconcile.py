"""The reconcile sweep: compare bucket objects, records and index documents, and repair drift.

- an object under ``uploads/{tenant}/`` with no record → ingested (AWS: a lost S3 event);
- a record whose stored bytes are gone → tombstoned and removed from the index;
- index documents of a file with no live record → removed;
- a record ``indexed`` whose documents are missing from the index → re-indexed from its stored chunks;
- a version linked implicitly (same name, path or key) whose text is not plausibly a revision of the
  previous version → detached into a lineage of its own (the rule of ``domain/similarity.py``; lineages
  made before it, when the same filename alone linked files, are migrated this way);
- a file whose enrichment fell back while the LLM was throttling or unreachable (``enrich_again``) →
  run again as a new attempt, at most ``SEMFS_REENRICH_PER_SWEEP`` per sweep so a recovering endpoint
  is not hit by the whole backlog at once; the next sweep takes the rest;
- a slot of the admission gate held by an execution that is no longer running (its status-change
  event was lost) → freed, so the bound does not shrink.
Every repair is idempotent, so the sweep can run on a schedule and be interrupted.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from semfs.domain.errors import NotFound
from semfs.domain.models import FileRecord, utcnow
from semfs.domain.outcomes import Status
from semfs.observability import get_logger
from semfs.pipeline.enrich import version_link
from semfs.pipeline.index import index_record
from semfs.pipeline.ingest import retry
from semfs.pipeline.manage import detach_version, iter_records
from semfs.pipeline.records import update
from semfs.pipeline.sources import UPLOAD_PREFIX, ingest_s3_object, tenant_from_key
from semfs.pipeline.state import load_document

if TYPE_CHECKING:
    from semfs.ports import Container

log = get_logger(__name__)


def reconcile(c: Container, repair: bool = True) -> dict[str, dict[str, int]]:
    """Find (and with ``repair`` fix) each kind of drift; returns ``{kind: {"found": n, "fixed": n}}``."""
    found: Counter[str] = Counter()
    fixed: Counter[str] = Counter()
    tenants = set(c.repo.tenants())
    known_sources: set[str] = set()
    budget = c.settings.reenrich_per_sweep
    for tenant in sorted(tenants):
        records = list(iter_records(c, tenant))
        live = {r.file_id for r in records if r.deleted_at is None}
        indexed_ids = c.index.file_ids(tenant)
        for r in records:
            known_sources.add(r.source_key)
            if r.deleted_at is not None:
                continue
            if r.blob_key and not c.blobs.exists(r.blob_key):
                found["records_without_object"] += 1
                if repair:
                    c.index.delete_file(tenant, r.file_id)
                    update(
                        c.repo,
                        tenant,
                        r.file_id,
                        lambda cur: cur.evolve(
                            deleted_at=utcnow(),
                            status=Status.DELETED,
                            is_latest=False,
                            error="the stored object is gone (reconcile)",
                        ),
                        seen=r,
                    )
                    fixed["records_without_object"] += 1
                continue
            if _unrelated_version(c, r):
                found["versions_not_revisions"] += 1
                if repair:
                    detach_version(c, tenant, r.file_id)
                    fixed["versions_not_revisions"] += 1
            if r.enrich_again and r.status is Status.INDEXED:
                found["enrichments_to_redo"] += 1
                if repair and budget > 0:
                    retry(c, tenant, r.file_id)
                    budget -= 1
                    fixed["enrichments_to_redo"] += 1
                continue
            if r.status is Status.INDEXED and r.file_id not in indexed_ids:
                found["indexed_records_missing_from_index"] += 1
                if repair:
                    index_record(c, r)
                    fixed["indexed_records_missing_from_index"] += 1
        for file_id in sorted(indexed_ids - live):
            found["index_documents_without_record"] += 1
            if repair:
                c.index.delete_file(tenant, file_id)
                fixed["index_documents_without_record"] += 1
    for key in c.blobs.list(UPLOAD_PREFIX):
        if f"s3:{key}" in known_sources or tenant_from_key(key) is None:
            continue
        found["objects_without_record"] += 1
        if repair:
            data_size = len(c.blobs.get(key))
            ingest_s3_object(c, key, data_size)
            fixed["objects_without_record"] += 1
    if c.admission is not None:
        for name in c.admission.holders():
            if not c.starter.running(name):
                found["slots_of_closed_executions"] += 1
                if repair:
                    c.admission.release(name)
                    fixed["slots_of_closed_executions"] += 1
    kinds = (
        "objects_without_record",
        "records_without_object",
        "index_documents_without_record",
        "indexed_records_missing_from_index",
        "versions_not_revisions",
        "enrichments_to_redo",
        "slots_of_closed_executions",
    )
    report = {k: {"found": found[k], "fixed": fixed[k]} for k in kinds}
    log.info("reconcile", **{k: v["found"] for k, v in report.items()})
    return report


def _unrelated_version(c: Container, r: FileRecord) -> bool:
    """An implicit link whose texts say it is not a revision (explicit links are the caller's word)."""
    if not r.previous_version_id or r.status is not Status.INDEXED:
        return False
    if r.provenance.get("version_link") == "explicit":
        return False
    try:
        previous = c.repo.get(r.tenant_id, r.previous_version_id)
        return bool(version_link(r, load_document(c, previous).text, load_document(c, r).text))
    except NotFound:
        return False
