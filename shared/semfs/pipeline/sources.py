"""AWS event sources → ingestion: an object uploaded under ``uploads/{tenant}/``, an SES message."""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from semfs.domain.outcomes import Outcome
from semfs.observability import get_logger
from semfs.pipeline.ingest import ingest_bytes
from semfs.pipeline.register import Provenance, Registered, register_rejected

if TYPE_CHECKING:
    from semfs.bootstrap import Container

log = get_logger(__name__)
UPLOAD_PREFIX = "uploads/"
INBOUND_PREFIX = "inbound/raw/"


def tenant_from_key(key: str) -> str | None:
    """``uploads/{tenant}/…`` → tenant. The key was issued by the API for the caller's tenant."""
    parts = key.split("/")
    if len(parts) < 3 or parts[0] != UPLOAD_PREFIX.rstrip("/") or not parts[1] or not parts[-1]:
        return None
    return parts[1]


def ingest_s3_object(c: Container, key: str, size: int, version_id: str | None = None) -> Registered | None:
    """Register and start processing one uploaded object (idempotent per key + content)."""
    tenant = tenant_from_key(key)
    if tenant is None:
        log.warning("object outside uploads/{tenant}/ ignored", key_chars=len(key))
        return None
    name = PurePosixPath(key).name
    source_key = f"s3:{key}"
    if size > c.settings.max_file_bytes:
        return register_rejected(
            c,
            tenant,
            name,
            size,
            f"{source_key}@{version_id or ''}",
            Outcome.REJECTED_TOO_LARGE,
            f"{size} bytes exceeds the {c.settings.max_file_mb:g} MB limit",
        )
    data = c.blobs.get(key)
    return ingest_bytes(c, tenant, data, name, Provenance(source_key=source_key))


def _attachments(msg: EmailMessage) -> list[tuple[str, bytes, str]]:
    out: list[tuple[str, bytes, str]] = []
    for part in msg.walk():
        if part.is_multipart():
            continue
        filename = part.get_filename()
        disposition = part.get_content_disposition()
        if not filename and disposition != "attachment":
            continue
        payload = part.get_payload(decode=True)
        if isinstance(payload, bytes):
            out.append((filename or f"attachment.{part.get_content_subtype()}", payload, part.get_content_type()))
    return out


def ingest_ses_message(
    c: Container, message_id: str, recipients: list[str], verdicts: dict[str, str]
) -> list[Registered]:
    """One SES-received message: tenant from the recipient mailbox, verdict policy, then each
    attachment as a file with the message's provenance. The email issue deepens this (threads,
    contacts, nested messages)."""
    mailboxes = c.settings.mailbox_tenants
    tenants = [mailboxes[r.lower()] for r in recipients if r.lower() in mailboxes]
    if not tenants:
        log.warning("mail to an unknown mailbox skipped", message_id=message_id)
        return []
    tenant = tenants[0]
    rejected = [v for v in c.settings.reject_email_verdicts.split(",") if verdicts.get(v.strip()) == "FAIL"]
    if rejected:
        return [
            register_rejected(
                c,
                tenant,
                f"{message_id}.eml",
                0,
                f"ses:{message_id}",
                Outcome.SKIPPED_EMAIL_VERDICT,
                f"SES verdict FAIL: {', '.join(rejected)}",
                Provenance(source_type="email_attachment", source_message_id=message_id),
            )
        ]
    raw = c.blobs.get(f"{INBOUND_PREFIX}{message_id}")
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(msg, EmailMessage)
    subject = str(msg.get("Subject", "") or "")
    sender = [a for _, a in getaddresses([str(msg.get("From", ""))]) if a]
    received = msg.get("Date")
    extra = {
        "sender": sender[0] if sender else None,
        "recipients": recipients,
        "subject": subject,
        "received_at": parsedate_to_datetime(str(received)).isoformat() if received else None,
        "verdicts": verdicts,
    }
    results = []
    for n, (filename, data, _) in enumerate(_attachments(msg)):
        prov = Provenance(
            source_type="email_attachment",
            source_key=f"ses:{message_id}:{n}",
            thread_subject=subject or None,
            contacts=sender,
            upload_context=f"attached to the email “{subject}”"[:300],
            extra=extra,
            source_message_id=message_id,
        )
        results.append(ingest_bytes(c, tenant, data, filename, prov))
    return results
