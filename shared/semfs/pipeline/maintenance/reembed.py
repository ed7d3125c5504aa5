"""Re-embedding when the configured model changes — without downtime and without mixing models.

New vectors are computed from the stored chunk text (no extraction, no LLM) and *staged* beside the
searchable ones; searches keep using the active model (and embed queries with it) until every indexed
file has staged vectors, then one atomic switch makes the new set searchable (a transaction locally,
an alias move in OpenSearch). A run can stop at any point and the next one continues; two overlapping
runs write each chunk once per model. ``--file``/``--tag`` re-embed on demand.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from semfs.domain.errors import NotFound
from semfs.domain.ids import card_id, chunk_id
from semfs.domain.models import FileRecord, utcnow
from semfs.domain.outcomes import Status
from semfs.observability import get_logger
from semfs.pipeline.catalogue.files import iter_records
from semfs.pipeline.documents import (
    card_text,
    chunk_embedding_text,
    derived_key,
    embed_texts,
    index_record,
    load_chunks,
    vectors_to_bytes,
)
from semfs.pipeline.record_update import update
from semfs.ports import RecordQuery

if TYPE_CHECKING:
    from semfs.ports import Container
log = get_logger(__name__)


STATE_KEY = "reembed/state.json"


PAGE = 500  # records per page of a walk


def _on_demand(
    c: Container, target: str, switching: bool, file_ids: Sequence[str], tag: str | None
) -> list[FileRecord]:
    """The files ``--file``/``--tag`` name (a few, by nature), not yet staged for ``target``."""
    staged = c.index.staged_file_ids(target) if switching else set()
    todo = []
    for tenant in c.repo.tenants():
        for r in iter_records(c, tenant, (Status.INDEXED,)):
            if file_ids and r.file_id not in file_ids:
                continue
            if tag and tag not in r.tags and tag not in r.auto_tags:
                continue
            if switching and (r.tenant_id, r.file_id) in staged:
                continue
            todo.append(r)
    return todo


class Walk(BaseModel):
    """A pass over every indexed record, page by page in (tenant, file id) order, kept in the progress
    document so the next pass goes on from its place instead of listing the archive again. The switch
    waits for a walk that found nothing left to do (``dirty`` false): one that staged files is
    followed by another, which also finds the files registered behind it while it ran."""

    model: str
    tenants: list[str]
    total: int = 0  # indexed files when the walk began (for the ETA)
    tenant: int = 0
    after: str | None = None
    walked: int = 0
    dirty: bool = False
    finished: bool = False


def _walk(c: Container, target: str) -> Walk:
    try:
        saved = json.loads(c.blobs.get(STATE_KEY)).get("walk")
    except NotFound:
        saved = None
    if saved and saved.get("model") == target and not saved.get("finished"):
        return Walk.model_validate(saved)
    return _new_walk(c, target)


def _new_walk(c: Container, target: str) -> Walk:
    tenants = sorted(c.repo.tenants())
    # each tenant's counts are one read (DynamoDB keeps them per tenant): the ETA costs no scan of records
    total = sum(n for t in tenants for (status, _), n in c.repo.counts(t).items() if status == Status.INDEXED.value)
    return Walk(model=target, tenants=tenants, total=total)


def progress(c: Container) -> dict[str, Any] | None:
    """The last run's progress (done/total, rate, ETA), for ``semfs status``."""
    try:
        value: dict[str, Any] = json.loads(c.blobs.get(STATE_KEY))
        return value
    except NotFound:
        return None


def reembed(
    c: Container,
    *,
    file_ids: Sequence[str] = (),
    tag: str | None = None,
    limit: int | None = None,
    deadline: float | None = None,
) -> dict[str, Any]:
    """Re-embed stale files with the configured model; switch when a walk over every file finds none left.
    A pass stops after ``limit`` files or at ``deadline`` (``time.monotonic()``; at least one file or one
    page is done first), and the next pass goes on from the walk's place (``Walk``, kept in the progress
    document): in AWS the function queues its own continuation."""
    target = c.embedder.model
    active = c.index.active_model()
    switching = active is not None and active != target
    if switching and c.settings.embedding.new_files_only and not (file_ids or tag):
        # the archive stays on its model; new files already carry the configured one (searched as their own leg)
        return {**_result(target, active, 0, 0, 0), "switched": False, "mode": "new_files_only"}
    budget = _Pass(limit, deadline)
    if file_ids or tag:
        todo = _on_demand(c, target, switching, file_ids, tag)
        for record in todo:
            if budget.spent():
                break
            _reembed_one(c, record, target, switching)
            budget.done += 1
        return _result(target, active, len(todo), budget.done, len(todo) - budget.done)
    walk = _walk(c, target)
    pages = 0
    while not walk.finished and not budget.spent():
        if pages and deadline is not None and time.monotonic() >= deadline:
            break  # a walk with nothing to do still stops in time: a page at least, every pass
        if walk.tenant >= len(walk.tenants):  # the end of a walk
            if walk.dirty:  # it staged files: the next walk checks that nothing is left
                walk = _new_walk(c, target)
                continue
            walk.finished = True
            break
        pages += 1
        _walk_page(c, walk, target, switching, budget)
        _save_progress(c, walk, active, budget.done, budget.started)
    switched = following = False
    if walk.finished and switching:
        c.index.switch_model(target)
        switched = True
        log.info("re-embed switched", model=target, from_model=active)
        following = not _records_follow(c, target, deadline)
    _save_progress(c, walk, active, budget.done, budget.started)
    result = _result(target, active, budget.done, budget.done, 0 if walk.finished else None)
    return {**result, "switched": switched, "following": following}


class _Pass:
    """What one pass may do: at most ``limit`` files, until ``deadline``; always one file first."""

    def __init__(self, limit: int | None, deadline: float | None) -> None:
        self.limit, self.deadline = limit, deadline
        self.started = time.monotonic()
        self.done = 0

    def spent(self) -> bool:
        if self.done == 0:
            return False
        return (self.limit is not None and self.done >= self.limit) or (
            self.deadline is not None and time.monotonic() >= self.deadline
        )


def _walk_page(c: Container, walk: Walk, target: str, switching: bool, budget: _Pass) -> None:
    """One page of the walk's tenant: each stale file re-embedded (staged when switching), the walk's place
    moved past it; the tenant is done when its last page is."""
    tenant = walk.tenants[walk.tenant]
    page = c.repo.query(RecordQuery(tenant_id=tenant, statuses=(Status.INDEXED,), limit=PAGE, after=walk.after))
    last = len(page) < PAGE
    staged: set[str] = set()
    if switching:
        until = None if last else page[-1].file_id
        staged = {f for _, f in c.index.staged_file_ids(target, tenant, after=walk.after, until=until)}
    for record in page:
        stale = record.file_id not in staged and (switching or record.embedding_model != target)
        if stale and budget.spent():
            return
        if stale:
            _reembed_one(c, record, target, switching)
            budget.done += 1
            walk.dirty = True
        walk.after, walk.walked = record.file_id, walk.walked + 1
    if last:
        walk.tenant, walk.after = walk.tenant + 1, None


def _result(target: str, active: str | None, total: int, done: int, remaining: int | None) -> dict[str, Any]:
    return {
        "model": target,
        "from_model": active,
        "total": total,
        "done": done,
        "remaining": remaining,  # None: the walk has not reached the end (the next pass goes on)
        "switched": False,
        "following": False,
    }


def _reembed_one(c: Container, record: FileRecord, target: str, switching: bool) -> None:
    if not switching and record.embedding_model != target and _follow(c, record, target):
        return  # staged before the switch, whose pass ran out of time while records followed it
    chunks, _ = load_chunks(c, record)
    texts = [chunk_embedding_text(record.title, ch) for ch in chunks] + [card_text(record)]
    vectors = embed_texts(c.embedder, texts, c.settings.embedding.batch_size)
    if switching:
        ids = [chunk_id(record.file_id, ch.n) for ch in chunks] + [card_id(record.file_id)]
        c.index.stage_vectors(record.tenant_id, record.file_id, target, dict(zip(ids, vectors.tolist(), strict=True)))
        c.blobs.put(derived_key(record.tenant_id, record.file_id, "vectors.next.npy"), vectors_to_bytes(vectors))
        return
    # no switch pending: the active model is the target, rewrite this file in place
    c.blobs.put(derived_key(record.tenant_id, record.file_id, "vectors.npy"), vectors_to_bytes(vectors))
    updated = update(
        c.repo,
        record.tenant_id,
        record.file_id,
        lambda r: r.evolve(embedding_model=target, embedding_dim=c.embedder.dim, embedded_at=utcnow()),
        seen=record,
    )
    index_record(c, updated)


def _save_progress(c: Container, walk: Walk, active: str | None, done: int, started: float) -> None:
    rate = done / max(time.monotonic() - started, 1e-6)
    state = {
        "model": walk.model,
        "from_model": active,
        "done": done,
        "walked": walk.walked,
        "total": walk.total,
        "rate_per_s": round(rate, 2),
        "eta_s": round(max(walk.total - walk.walked, 0) / rate, 1) if rate else None,
        "updated_at": utcnow().isoformat(),
        "walk": walk.model_dump(),
    }
    log.info("re-embed progress", **{k: v for k, v in state.items() if k not in ("updated_at", "walk")})
    c.blobs.put(STATE_KEY, json.dumps(state).encode())


def _records_follow(c: Container, target: str, deadline: float | None = None) -> bool:
    """After the switch: every record names the new model and keeps its new vectors for reindex. At
    ``deadline`` it stops (False): the next pass finds those records naming another model and follows
    them the same way, without embedding them again. A million files take hours, not one pass."""
    for tenant in c.repo.tenants():
        for r in iter_records(c, tenant, (Status.INDEXED,)):
            if deadline is not None and time.monotonic() >= deadline:
                return False
            if r.embedding_model != target:
                _follow(c, r, target)
    return True


def _follow(c: Container, r: FileRecord, target: str) -> bool:
    """Make the vectors staged for ``target`` this file's own and name the model on its record (the index
    switched already). False when none are staged (the file is embedded in place instead)."""
    nxt = derived_key(r.tenant_id, r.file_id, "vectors.next.npy")
    try:
        staged = c.blobs.get(nxt)
    except NotFound:
        return False
    c.blobs.put(derived_key(r.tenant_id, r.file_id, "vectors.npy"), staged)
    c.blobs.delete(nxt)
    update(
        c.repo,
        r.tenant_id,
        r.file_id,
        lambda cur: cur.evolve(embedding_model=target, embedding_dim=c.embedder.dim, embedded_at=utcnow()),
        seen=r,
    )
    return True
