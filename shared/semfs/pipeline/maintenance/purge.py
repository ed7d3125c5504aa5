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

from typing import TYPE_CHECKING

from semfs.domain.tenants import checked_tenant_id
from semfs.observability import get_logger
from semfs.pipeline.documents import CONTENT_PREFIX, DERIVED_PREFIX, UPLOAD_PREFIX

if TYPE_CHECKING:
    from semfs.ports import Container

log = get_logger(__name__)


def purge_tenant(c: Container, tenant_id: str) -> dict[str, int]:
    """Erase everything semfs holds of ``tenant_id`` (see the module docstring); what went, by kind.
    ``InvalidRequest`` for anything that is not a tenant id (``domain/tenants.py``): ``default/`` or
    `` default`` is refused, never read as ``default``."""
    tenant_id = checked_tenant_id(tenant_id)
    in_flight = [r for r in c.repo.unfinished() if r.tenant_id == tenant_id]
    report = {"queued_cancelled": 0}
    for job in c.jobs.jobs(tenant_id, ("queued",)):
        report["queued_cancelled"] += c.jobs.cancel(tenant_id, job.file_id)
    report["index_documents"] = c.index.forget_tenant(tenant_id)
    report["objects"] = sum(
        c.blobs.delete_prefix(f"{prefix}{tenant_id}/") for prefix in (UPLOAD_PREFIX, CONTENT_PREFIX, DERIVED_PREFIX)
    )
    report["mail_items"] = c.mail.forget_tenant(tenant_id)
    report["tag_items"] = c.tags.forget_tenant(tenant_id)
    report["saved_views"] = c.views.forget_tenant(tenant_id)
    report["principals"] = c.principals.forget_tenant(tenant_id)
    report["entity_items"] = c.entities.forget_tenant(tenant_id)
    report["mail_accounts"] = c.mail_accounts.forget_tenant(tenant_id)
    report["secrets"] = c.secrets.forget_tenant(tenant_id)
    report["records"] = c.repo.forget_tenant(tenant_id)
    report["in_flight"] = len(in_flight)
    log.info("tenant purged", tenant_id=tenant_id, **report)
    c.events.publish("TenantPurged", {"tenant_id": tenant_id, **report})
    return report
