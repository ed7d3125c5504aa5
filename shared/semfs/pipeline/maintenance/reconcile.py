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
- a file that failed because the model endpoint refused the key (``FAILED_CONFIG``) → run again, within
  the same per-sweep budget: once the key is fixed the backlog drains, while it is not each costs one call;
- a file registered but never started (``received`` for over a minute with no execution: a process
  killed between registering and queueing it) → started (``intake.ingest.stranded``);
- a slot of the admission gate held by an execution that is no longer running (its status-change
  event was lost) → freed, so the bound does not shrink.
Every repair is idempotent, so the sweep can run on a schedule and be interrupted.

A sweep goes a page at a time and its place is a ``Sweep``: each tenant's records in id order beside the
index's file ids in the same id range (a merge of two sorted streams, so neither side is ever held
whole), then the uploaded objects in key order, each looked up by its key, then the gate's slots.
``reconcile_pass`` stops at a deadline and returns where it is; in AWS the maintenance function saves
that under ``maintenance/reconcile/`` and queues its own continuation, so a sweep over a million files
goes on pass after pass instead of dying in one 900 s invocation. ``reconcile`` runs a whole sweep.
"""

from __future__ import annotations

import json
import time
from itertools import islice
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from semfs.domain.changes import version_link
from semfs.domain.errors import NotFound
from semfs.domain.models import FileRecord, utcnow
from semfs.domain.outcomes import Outcome, Status
from semfs.observability import get_logger
from semfs.pipeline.catalogue.trash import expired, purge
from semfs.pipeline.catalogue.versions import detach_version
from semfs.pipeline.documents import UPLOAD_PREFIX, index_record, load_document
from semfs.pipeline.intake.ingest import process, retry, stranded
from semfs.pipeline.intake.sources import ingest_s3_object, tenant_from_key
from semfs.pipeline.record_update import update
from semfs.ports import RecordQuery

if TYPE_CHECKING:
    from semfs.ports import Container
log = get_logger(__name__)


PAGE = 500  # records, or objects, per step: a pass checks its deadline between steps


KINDS = (
    "objects_without_record",
    "records_without_object",
    "index_documents_without_record",
    "indexed_records_missing_from_index",
    "versions_not_revisions",
    "enrichments_to_redo",
    "failed_on_a_refused_key",
    "registered_files_never_started",
    "slots_of_closed_executions",
    "trash_past_its_days",
)


SWEEP_PREFIX = "maintenance/reconcile/"


class Sweep(BaseModel):
    """Where a reconcile sweep is, and what it has found so far (JSON between passes)."""

    sweep_id: str
    repair: bool = True
    phase: Literal["records", "objects", "slots", "done"] = "records"
    tenants: list[str] = Field(default_factory=list)  # read once, when the sweep starts
    tenant: int = 0  # the tenant being swept (records), an index into ``tenants``
    after: str | None = None  # the last file id (records) or object key (objects) done
    reenrich_left: int = 0
    passes: int = 0
    found: dict[str, int] = Field(default_factory=dict)
    fixed: dict[str, int] = Field(default_factory=dict)

    def report(self) -> dict[str, dict[str, int]]:
        return {k: {"found": self.found.get(k, 0), "fixed": self.fixed.get(k, 0)} for k in KINDS}

    def saw(self, kind: str, fixed: bool) -> None:
        self.found[kind] = self.found.get(kind, 0) + 1
        if fixed:
            self.fixed[kind] = self.fixed.get(kind, 0) + 1


def new_sweep(c: Container, repair: bool = True) -> Sweep:
    return Sweep(
        sweep_id=utcnow().strftime("%Y%m%dT%H%M%S%f"),
        repair=repair,
        tenants=sorted(c.repo.tenants()),
        reenrich_left=c.settings.llm.reenrich_per_sweep,
    )


def reconcile(c: Container, repair: bool = True) -> dict[str, dict[str, int]]:
    """A whole sweep: find (and with ``repair`` fix) each kind of drift; ``{kind: {"found", "fixed"}}``."""
    sweep = reconcile_pass(c, new_sweep(c, repair))
    return sweep.report()


def reconcile_pass(c: Container, sweep: Sweep, deadline: float | None = None) -> Sweep:
    """Go on with ``sweep`` until it is done or ``deadline`` (``time.monotonic()``) has passed; at least
    one step is taken, so every pass gets further. Returns the sweep where it stopped."""
    sweep = sweep.model_copy(deep=True)
    sweep.passes += 1
    while sweep.phase != "done":
        match sweep.phase:
            case "records":
                _records_step(c, sweep)
            case "objects":
                _objects_step(c, sweep)
            case "slots":
                _slots_step(c, sweep)
        if deadline is not None and time.monotonic() >= deadline:
            break
    log.info("reconcile pass", sweep=sweep.sweep_id, phase=sweep.phase, passes=sweep.passes, **sweep.found)
    return sweep


def save_sweep(c: Container, sweep: Sweep) -> str:
    """Keep a sweep between passes (the tenant list can outgrow a queue message); returns its key."""
    key = f"{SWEEP_PREFIX}{sweep.sweep_id}.json"
    c.blobs.put(key, sweep.model_dump_json().encode("utf-8"))
    return key


def load_sweep(c: Container, key: str) -> Sweep:
    if not key.startswith(SWEEP_PREFIX):
        raise ValueError("not a reconcile sweep")
    return Sweep.model_validate(json.loads(c.blobs.get(key)))


def _records_step(c: Container, sweep: Sweep) -> None:
    """One page of a tenant's records, and the index's file ids in the same id range."""
    if sweep.tenant >= len(sweep.tenants):
        sweep.phase, sweep.after = "objects", None
        return
    tenant = sweep.tenants[sweep.tenant]
    if sweep.after is None:  # a tenant's first page: what has been in its trash past SEMFS_TRASH_DAYS goes
        old = expired(c, tenant, c.settings.trash_days)
        if sweep.repair:
            purge(c, tenant, old)
        for _ in old:
            sweep.saw("trash_past_its_days", sweep.repair)
    page = c.repo.query(RecordQuery(tenant_id=tenant, limit=PAGE, after=sweep.after))
    last = len(page) < PAGE
    indexed = c.index.file_ids(tenant, after=sweep.after, until=None if last else page[-1].file_id)
    for r in page:
        _check_record(c, sweep, r, r.file_id in indexed)
    for file_id in sorted(indexed - {r.file_id for r in page}):  # documents of no live record
        if sweep.repair:
            c.index.delete_file(tenant, file_id)
        sweep.saw("index_documents_without_record", sweep.repair)
    if last:
        sweep.tenant, sweep.after = sweep.tenant + 1, None
    else:
        sweep.after = page[-1].file_id


def _check_record(c: Container, sweep: Sweep, r: FileRecord, in_index: bool) -> None:
    repair = sweep.repair
    if r.blob_key and not c.blobs.exists(r.blob_key):
        if repair:
            c.index.delete_file(r.tenant_id, r.file_id)
            update(
                c.repo,
                r.tenant_id,
                r.file_id,
                lambda cur: cur.evolve(
                    deleted_at=utcnow(),
                    status=Status.DELETED,
                    is_latest=False,
                    error="the stored object is gone (reconcile)",
                ),
                seen=r,
            )
        sweep.saw("records_without_object", repair)
        return
    if _unrelated_version(c, r):
        if repair:
            detach_version(c, r.tenant_id, r.file_id)
        sweep.saw("versions_not_revisions", repair)
    # a file to run again: its enrichment fell back, or the model refused the key (a few a sweep)
    again = (
        "enrichments_to_redo"
        if r.enrich_again and r.status is Status.INDEXED
        else "failed_on_a_refused_key"
        if r.status is Status.FAILED and r.outcome is Outcome.FAILED_CONFIG
        else None
    )
    if again is not None:
        redo = repair and sweep.reenrich_left > 0
        if redo:
            retry(c, r.tenant_id, r.file_id)
            sweep.reenrich_left -= 1
        sweep.saw(again, redo)
        return
    if r.status is Status.INDEXED and not in_index:
        if repair:
            index_record(c, r)
        sweep.saw("indexed_records_missing_from_index", repair)
    if r.status is Status.RECEIVED and stranded(c, [r]):
        if repair:
            process(c, r)
        sweep.saw("registered_files_never_started", repair)


def _objects_step(c: Container, sweep: Sweep) -> None:
    """One page of uploaded objects, each looked up by its key (a lost S3 event leaves no record)."""
    page = list(islice(c.blobs.list(UPLOAD_PREFIX, after=sweep.after), PAGE))
    for key, size in page:
        tenant = tenant_from_key(key)
        if tenant is None or c.repo.registered_under(tenant, f"s3:{key}"):
            continue
        repaired = sweep.repair and ingest_s3_object(c, key, size) is not None  # None: ingest is off
        sweep.saw("objects_without_record", repaired)
    if len(page) < PAGE:
        sweep.phase, sweep.after = "slots", None
    else:
        sweep.after = page[-1][0]


def _slots_step(c: Container, sweep: Sweep) -> None:
    for name in c.admission.holders():
        if not c.starter.running(name):
            if sweep.repair:
                c.admission.release(name)
            sweep.saw("slots_of_closed_executions", sweep.repair)
    sweep.phase = "done"


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
