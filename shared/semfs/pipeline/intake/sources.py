"""AWS event sources → ingestion: an object uploaded under ``uploads/{tenant}/``, an SES message."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from semfs.domain.access import TENANT
from semfs.domain.features import enabled
from semfs.domain.outcomes import Outcome
from semfs.domain.tenants import is_tenant_id
from semfs.observability import get_logger
from semfs.pipeline.documents import INBOUND_PREFIX, UPLOAD_PREFIX
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance, Registered, register_rejected
from semfs.pipeline.principals import access_from_metadata

if TYPE_CHECKING:
    from semfs.ports import Container
log = get_logger(__name__)


def tenant_from_key(key: str) -> str | None:
    """``uploads/{tenant}/…`` → tenant. The key was issued by the API for the caller's tenant."""
    parts = key.split("/")
    if len(parts) < 3 or parts[0] != UPLOAD_PREFIX.rstrip("/") or not is_tenant_id(parts[1]) or not parts[-1]:
        return None
    return parts[1]


def ingest_s3_object(c: Container, key: str, size: int, version_id: str | None = None) -> Registered | None:
    """Register and start processing one uploaded object (idempotent per key + content). While ingest is
    switched off the object is left where it is (None): the reconcile sweep ingests it once it is on."""
    tenant = tenant_from_key(key)
    if tenant is None:
        log.warning("object outside uploads/{tenant}/ ignored", key_chars=len(key))
        return None
    if not enabled(c.settings, "ingest"):
        log.warning("ingest is switched off: the object stays in the bucket", key_chars=len(key))
        return None
    name = PurePosixPath(key).name
    source_key = f"s3:{key}"
    if size > c.settings.limits.max_file_bytes:
        return register_rejected(
            c,
            tenant,
            name,
            size,
            f"{source_key}@{version_id or ''}",
            Outcome.REJECTED_TOO_LARGE,
            f"{size} bytes exceeds the {c.settings.limits.max_file_mb:g} MB limit",
            Provenance(version_key=source_key),
        )
    data = c.blobs.get(key)
    # who uploaded it and who may read it: what the API pinned in its upload form (none: the tenant's)
    access = access_from_metadata(c.blobs.metadata(key))
    viewer = None if access is None or access.owner is None else (TENANT, *access.readers)
    # the same key uploaded again is the same document, changed (if its text agrees)
    prov = Provenance(source_key=source_key, version_key=source_key, access=access, viewer=viewer)
    return ingest_bytes(c, tenant, data, name, prov)


def ingest_ses_message(
    c: Container, message_id: str, recipients: list[str], verdicts: dict[str, str]
) -> list[Registered]:
    """One SES-received message: the tenant from the recipient mailbox (unknown recipients are
    skipped and logged, never ingested into a default tenant), then the shared mail path."""
    from semfs.pipeline.intake.mail import failed_verdicts, ingest_mail, skip_message, tenant_for

    if not (enabled(c.settings, "mail") and enabled(c.settings, "ingest")):
        log.warning("mail intake is switched off: the message stays under inbound/", recipients=len(recipients))
        return []
    tenant = tenant_for(c, recipients)
    if tenant is None:
        log.warning("mail to an unknown mailbox skipped", recipients=len(recipients))
        return []
    failing = failed_verdicts(c, verdicts)
    if failing:  # refused before its content is even read
        return [skip_message(c, tenant, message_id, 0, failing, "ses")]
    raw = c.blobs.get(f"{INBOUND_PREFIX}{message_id}")
    return ingest_mail(c, tenant, raw, recipients=recipients, verdicts=verdicts, source="ses").files


def delete_s3_object(c: Container, key: str) -> list[str]:
    """An object removed under ``uploads/{tenant}/`` (ObjectRemoved event): tombstone its records and take
    them out of the index in the same step. Returns the deleted file ids."""
    from semfs.pipeline.catalogue.files import delete_file
    from semfs.ports.repository import RecordQuery

    tenant = tenant_from_key(key)
    if tenant is None:
        return []
    removed: list[str] = []
    for record in c.repo.query(RecordQuery(tenant_id=tenant, source_key=f"s3:{key}", limit=1000)):
        removed += [r.file_id for r in delete_file(c, tenant, record.file_id)]
    return removed
