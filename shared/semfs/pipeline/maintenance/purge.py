"""Erasing a whole tenant: an administrator's answer to "delete everything you hold of us".

``purge_tenant`` removes, in this order, so that a purge stopped half-way is found and finished by running
it again (every step is idempotent, and the records, which name what is left, go last):

1. the tenant's files waiting in the queue (nothing new starts for it);
2. every index document, and what the index keeps of them beyond the documents (tantivy segment files and
   vector graphs locally; OpenSearch drops deleted documents at its next segment merge);
3. every stored object under the tenant's prefixes, in S3 every version of each (``uploads/``,
   ``content/``, ``derived/``): originals, extracted text, chunks, vectors;
4. threads, messages, contacts, the tag vocabulary and aliases, saved views, users and groups;
5. the file records, tombstones included, and the tenant's status counts.

What it does not reach, said plainly: raw inbound mail under ``inbound/raw/`` is one object per message
whatever tenants it reached, so it is not the tenant's to delete; the bucket's lifecycle rule expires it
(``InboundMailDays`` in AWS). A file whose stage is running while the purge runs can write its derived
objects after step 3: the report counts the tenant's files that were in flight, and a second purge once
they end removes what they wrote. DynamoDB's point-in-time recovery and the bucket's replicas, if any, keep
their own copies for their own windows (docs/deploy.md, "What is kept").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from semfs.deadlines import WorkStopped, work_until
from semfs.domain.tenants import checked_tenant_id
from semfs.observability import get_logger
from semfs.pipeline.documents import CONTENT_PREFIX, DERIVED_PREFIX, UPLOAD_PREFIX

if TYPE_CHECKING:
    from semfs.ports import Container

log = get_logger(__name__)


def _steps(c: Container, t: str) -> list[tuple[str, Callable[[], int]]]:
    """The erasure's steps, in order (module docstring), each idempotent."""
    return [
        ("queued_cancelled", lambda: sum(c.jobs.cancel(t, j.file_id) for j in c.jobs.jobs(t, ("queued",)))),
        ("index_documents", lambda: c.index.forget_tenant(t)),
        (
            "objects",
            lambda: sum(c.blobs.delete_prefix(f"{p}{t}/") for p in (UPLOAD_PREFIX, CONTENT_PREFIX, DERIVED_PREFIX)),
        ),
        ("mail_items", lambda: c.mail.forget_tenant(t)),
        ("tag_items", lambda: c.tags.forget_tenant(t)),
        ("saved_views", lambda: c.views.forget_tenant(t)),
        ("principals", lambda: c.principals.forget_tenant(t)),
        ("entity_items", lambda: c.entities.forget_tenant(t)),
        ("mail_accounts", lambda: c.mail_accounts.forget_tenant(t)),
        ("secrets", lambda: c.secrets.forget_tenant(t)),
        ("records", lambda: c.repo.forget_tenant(t)),
    ]


def purge_tenant(
    c: Container, tenant_id: str, *, deadline: float | None = None, start: int = 0, cursor: str | None = None
) -> dict[str, Any]:
    """Erase everything semfs holds of ``tenant_id`` (see the module docstring); what went, by kind.
    ``InvalidRequest`` for anything that is not a tenant id (``domain/tenants.py``): ``default/`` or
    `` default`` is refused, never read as ``default``.

    With a ``deadline`` (monotonic; the maintenance function's invocation) it runs in passes: a step that
    walks a whole tenant (the item table's scan, the records, the bucket's versions) stops between two
    pages once the deadline has passed, and the report says ``done: false``, the step it stopped in,
    ``next_step`` and, for a scan, its ``cursor``, which the next pass is started with (``start``,
    ``cursor``); the steps before it are not run again."""
    tenant_id = checked_tenant_id(tenant_id)
    in_flight = [r for r in c.repo.unfinished() if r.tenant_id == tenant_id] if start == 0 else []
    report: dict[str, Any] = {}
    for n, (name, step) in enumerate(_steps(c, tenant_id)):
        if n < start:
            continue
        try:
            with work_until(deadline, cursor if n == start else None):
                report[name] = step()
        except WorkStopped as stopped:
            report[name] = stopped.done
            log.info("tenant purge paused", tenant_id=tenant_id, step=name, done=stopped.done)
            return {**report, "done": False, "stopped_in": name, "next_step": n, "cursor": stopped.cursor}
    report["in_flight"] = len(in_flight)
    log.info("tenant purged", tenant_id=tenant_id, **report)
    c.events.publish("TenantPurged", {"tenant_id": tenant_id, **report})
    return {**report, "done": True}
