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

from semfs.domain.errors import NotFound
from semfs.domain.ids import card_id, chunk_id
from semfs.domain.models import FileRecord, utcnow
from semfs.domain.outcomes import Status
from semfs.observability import get_logger
from semfs.pipeline.embed import card_text, chunk_embedding_text, embed_texts, vectors_to_bytes
from semfs.pipeline.index import index_record, load_chunks
from semfs.pipeline.manage import iter_records
from semfs.pipeline.records import update
from semfs.pipeline.state import derived_key

if TYPE_CHECKING:
    from semfs.ports import Container

log = get_logger(__name__)
STATE_KEY = "reembed/state.json"


def _todo(c: Container, target: str, switching: bool, file_ids: Sequence[str], tag: str | None) -> list[FileRecord]:
    staged = c.index.staged_file_ids(target) if switching else set()
    todo = []
    for tenant in c.repo.tenants():
        for r in iter_records(c, tenant, (Status.INDEXED,)):
            if file_ids and r.file_id not in file_ids:
                continue
            if tag and tag not in r.tags and tag not in r.auto_tags:
                continue
            on_demand = bool(file_ids or tag)
            if switching and (r.tenant_id, r.file_id) in staged:
                continue
            if switching or on_demand or r.embedding_model != target:
                todo.append(r)
    return todo


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
    """Re-embed stale files with the configured model; switch when every file is done. A pass stops after
    ``limit`` files or at ``deadline`` (``time.monotonic()``; at least one file is done first), and the
    next pass goes on from what is staged: in AWS the function queues its own continuation."""
    target = c.embedder.model
    active = c.index.active_model()
    switching = active is not None and active != target
    if switching and c.settings.reembed_new_files_only and not (file_ids or tag):
        # the archive stays on its model; new files already carry the configured one (searched as their own leg)
        return {
            "model": target,
            "from_model": active,
            "total": 0,
            "done": 0,
            "remaining": 0,
            "switched": False,
            "mode": "new_files_only",
        }
    todo = _todo(c, target, switching, file_ids, tag)
    started = time.monotonic()
    done = 0
    for record in todo[: limit if limit is not None else len(todo)]:
        if done and deadline is not None and time.monotonic() >= deadline:
            break
        if not switching and record.embedding_model != target and _follow(c, record, target):
            # staged before the switch, whose pass ran out of time while records followed it
            done += 1
            continue
        chunks, _ = load_chunks(c, record)
        texts = [chunk_embedding_text(record.title, ch) for ch in chunks] + [card_text(record)]
        vectors = embed_texts(c.embedder, texts, c.settings.embed_batch_size)
        if switching:
            ids = [chunk_id(record.file_id, ch.n) for ch in chunks] + [card_id(record.file_id)]
            c.index.stage_vectors(
                record.tenant_id, record.file_id, target, dict(zip(ids, vectors.tolist(), strict=True))
            )
            c.blobs.put(derived_key(record.tenant_id, record.file_id, "vectors.next.npy"), vectors_to_bytes(vectors))
        else:  # no switch pending: the active model is the target, rewrite this file in place
            c.blobs.put(derived_key(record.tenant_id, record.file_id, "vectors.npy"), vectors_to_bytes(vectors))
            updated = update(
                c.repo,
                record.tenant_id,
                record.file_id,
                lambda r: r.evolve(embedding_model=target, embedding_dim=c.embedder.dim, embedded_at=utcnow()),
                seen=record,
            )
            index_record(c, updated)
        done += 1
        rate = done / max(time.monotonic() - started, 1e-6)
        state = {
            "model": target,
            "from_model": active,
            "done": done,
            "total": len(todo),
            "rate_per_s": round(rate, 2),
            "eta_s": round((len(todo) - done) / rate, 1),
            "updated_at": utcnow().isoformat(),
        }
        if done % 20 == 0 or done == len(todo):
            log.info("re-embed progress", **{k: v for k, v in state.items() if k != "updated_at"})
        c.blobs.put(STATE_KEY, json.dumps(state).encode())
    remaining = len(todo) - done
    switched = False
    following = False
    if switching and remaining == 0 and not (file_ids or tag):
        c.index.switch_model(target)
        switched = True
        log.info("re-embed switched", model=target, from_model=active)
        following = not _records_follow(c, target, deadline)
    return {
        "model": target,
        "from_model": active,
        "total": len(todo),
        "done": done,
        "remaining": remaining,
        "switched": switched,
        # records still naming the old model (the switch's pass ran out of time): the next pass takes them
        "following": following,
    }


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
