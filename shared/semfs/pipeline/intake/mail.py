"""Mail → files: tenant by recipient, verdict policy, threads, contacts, one file per attachment.

Used by the SES handler (AWS), the local SMTP server and ``semfs ingest *.eml|*.mbox``. Threads,
their messages and contacts are entities behind the ``MailRepository`` port, written idempotently per
message id, so a redelivered message or two messages of one thread handled at once lose nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from semfs.domain.access import ADMINS, Access, parse_share
from semfs.domain.features import require
from semfs.domain.ids import contact_id_for, normalise_subject, sha256_hex
from semfs.domain.mail_accounts import MailRule, Take
from semfs.domain.outcomes import Outcome
from semfs.domain.tags import contact_tag
from semfs.extractors.email import Address, ParsedMail, parse_mail
from semfs.observability import get_logger
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance, Registered, register_rejected
from semfs.ports.mail import Contact, Person

if TYPE_CHECKING:
    from semfs.ports import Container
log = get_logger(__name__)


@dataclass
class MailResult:
    message_id: str
    tenant_id: str | None
    thread_id: str | None = None
    files: list[Registered] = field(default_factory=list)
    skipped: str | None = None


def _h(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def tenant_for(c: Container, recipients: list[str]) -> str | None:
    return next(iter(tenants_for(c, recipients)), None)


def tenants_for(c: Container, recipients: list[str]) -> list[str]:
    """Every tenant a message is addressed to (one delivery each), in recipient order."""
    mailboxes = c.settings.mail.mailbox_tenants
    return list(dict.fromkeys(mailboxes[r.lower()] for r in recipients if r.lower() in mailboxes))


def _external(c: Container, people: list[Address]) -> list[Address]:
    own = set(c.settings.mail.mailbox_tenants)
    return [p for p in people if p.address not in own]


def resolve_thread(c: Container, tenant: str, mail: ParsedMail, message_id: str) -> tuple[str, str]:
    """A known message in References/In-Reply-To names the thread; else the normalised subject among
    the same participants; else this message starts a thread. Returns (thread_id, subject)."""
    thread_id = next((t for ref in mail.references if (t := c.mail.thread_of_message(tenant, ref))), None)
    subject_norm = normalise_subject(mail.subject)
    people = ",".join(sorted(p.address for p in _external(c, mail.participants)))
    subject_key = _h(subject_norm, people) if subject_norm else None
    if thread_id is None and subject_key:
        thread_id = c.mail.thread_of_subject(tenant, subject_key)
    if thread_id is None:
        thread_id = c.mail.thread_of_message(tenant, message_id) or "t_" + _h(tenant, message_id)[:20]
    thread = c.mail.add_message(
        tenant,
        thread_id,
        message_id,
        mail.subject.strip() or "(no subject)",
        subject_key,
        [p.address for p in mail.participants],
    )
    return thread_id, thread.subject


def upsert_contacts(c: Container, tenant: str, people: list[Address], message_id: str) -> list[Contact]:
    """A contact per normalised address (display name kept), organisation from a company domain; the
    message counts once per contact however often it is delivered."""
    return [
        c.mail.add_contact_message(
            tenant,
            Person(contact_id_for(p.address), p.address, p.name, contact_tag(p.address) or None),
            message_id,
        )
        for p in _external(c, people)
    ]


def failed_verdicts(c: Container, verdicts: dict[str, str] | None) -> list[str]:
    """The verdicts in the reject policy (``SEMFS_REJECT_EMAIL_VERDICTS``) that say FAIL."""
    policy = [v.strip() for v in c.settings.mail.reject_email_verdicts.split(",") if v.strip()]
    return [v for v in policy if (verdicts or {}).get(v) == "FAIL"]


def skip_message(c: Container, tenant: str, message_id: str, size: int, failing: list[str], source: str) -> Registered:
    """Record a message refused by its verdicts; none of its content is read or stored."""
    return register_rejected(
        c,
        tenant,
        "message.eml",
        size,
        f"{source}:{message_id}",
        Outcome.SKIPPED_EMAIL_VERDICT,
        f"verdict FAIL: {', '.join(failing)}",
        Provenance(source_type="email_attachment", source_message_id=message_id),
    )


def mail_access(c: Container, tenant: str, parsed: ParsedMail, delivered: list[str] | None) -> Access:
    """Who may read what a message brings (its body and every attachment): the tenant's users and groups it
    was delivered to — the envelope's recipients (so a Bcc as delivered), To and Cc — and its sender when
    the sender is one of the tenant's users. A tenant without users: everyone, as before access lists.
    Delivered to no one the tenant knows: its admins only (``ADMINS``), until a group claims the address.
    Each message brings its own: a reply to more people never opens the files that came before it."""
    from semfs.pipeline.principals import recipients

    users = c.principals.users(tenant)
    if not users:
        return Access()
    sender = [parsed.sender.address] if parsed.sender else []
    addresses = [*(delivered or []), *(a.address for a in parsed.to + parsed.cc), *sender]
    found = recipients(c, tenant, addresses, users)
    owner = found.users[0] if found.users else None
    return Access(owner, found.readers() or (ADMINS,))


# a body beside attachments is a document of its own when it says something ("See attached." does not:
# the attachments carry the message; a short body is kept on their cards as what they came with); a
# message without attachments always keeps its body
MIN_BODY_WORDS = 8


def _parts(
    c: Container, parsed: ParsedMail, raw: bytes, take: Take, extra: dict[str, Any]
) -> list[tuple[int, str, bytes]]:
    """What of a message becomes files, as (part index, file name, bytes): the attachments and, when it says
    something, the body (``mail``); only one of them; or the whole message as one ``.eml`` (index -2)."""
    name = normalise_subject(parsed.subject) or "message"
    if take == "message":
        return [(-2, f"{name}.eml", raw)]
    parts = [] if take == "body" else [(a.index, a.filename, a.data) for a in parsed.attachments]
    if not parsed.body or (not c.settings.mail.index_email_body and take != "body"):  # a rule's "body" is asked for
        return parts
    if take == "attachments":  # the body is no document, but stays what the attachments came with
        if parsed.attachments:
            extra["body"] = " ".join(parsed.body.split())[:500]
        return parts
    if take == "body" or not parsed.attachments or len(parsed.body.split()) >= MIN_BODY_WORDS:
        parts.append((-1, f"{name}.txt", parsed.body.encode()))
    else:  # "Please pay by Friday.": no document of its own, but what the attachments came with
        extra["body"] = " ".join(parsed.body.split())[:500]
    return parts


def ingest_mail(
    c: Container,
    tenant: str,
    raw: bytes,
    *,
    recipients: list[str] | None = None,
    verdicts: dict[str, str] | None = None,
    source: str = "mail",
    rule: MailRule | None = None,
) -> MailResult:
    """Ingest one message for ``tenant``: every attachment leaf becomes a file with the message's
    provenance. Redelivering the same Message-ID creates nothing new. ``Disabled`` (nothing read or
    stored) while mail intake or ingest is switched off. A mail account's ``rule`` (``domain/mail_accounts``)
    says what the message becomes (``take``), the tags its files get and who else reads them."""
    require(c.settings, "mail")
    require(c.settings, "ingest")
    try:
        parsed = parse_mail(raw, c.settings.mail.min_inline_image_bytes)
    except RecursionError:  # 2,000 nested multiparts: stored with its outcome, never "try again" forever
        mid = f"<{sha256_hex(raw)[:32]}@semfs.invalid>"
        reg = register_rejected(
            c,
            tenant,
            "message.eml",
            len(raw),
            f"{source}:{mid}",
            Outcome.FAILED_PARSE,
            "the message's MIME structure is nested too deeply to read",
            Provenance(source_type="email_attachment", source_message_id=mid),
        )
        return MailResult(message_id=mid, tenant_id=tenant, files=[reg], skipped=reg.record.error)
    message_id = parsed.message_id or f"<{sha256_hex(raw)[:32]}@semfs.invalid>"
    failing = failed_verdicts(c, verdicts)
    if failing:
        reg = skip_message(c, tenant, message_id, len(raw), failing, source)
        return MailResult(message_id=message_id, tenant_id=tenant, files=[reg], skipped=reg.record.error)
    thread_id, subject = resolve_thread(c, tenant, parsed, message_id)
    contacts = upsert_contacts(c, tenant, parsed.participants, message_id)
    sender = parsed.sender.address if parsed.sender else None
    extra = {
        "sender": sender,
        "recipients": recipients or [a.address for a in parsed.to + parsed.cc],
        "subject": parsed.subject,
        "received_at": parsed.date.isoformat() if parsed.date else None,
        "verdicts": verdicts or {},
        "contacts": [{"name": x.name, "email": x.email, "organisation": x.organisation} for x in contacts],
        "mail_defects": parsed.defects[:20],
    }
    result = MailResult(message_id=message_id, tenant_id=tenant, thread_id=thread_id)
    access = mail_access(c, tenant, parsed, recipients)
    if rule is not None:
        extra["rule"] = rule.name
        shared = parse_share(rule.share_with)
        access = Access(access.owner, tuple(dict.fromkeys([*access.readers, *shared]))) if shared else access
    parts = _parts(c, parsed, raw, rule.take if rule else "mail", extra)
    for index, filename, data in parts:
        where = {-1: "the body of ", -2: ""}.get(index, "attached to ")
        prov = Provenance(
            source_type="email_attachment",
            source_key=f"{source}:{message_id}:{index}",
            thread_id=thread_id,
            thread_subject=subject,
            contact_ids=[x.contact_id for x in contacts],
            source_message_id=message_id,
            uploaded_by=sender,
            upload_context=f"{where}the email “{parsed.subject}” from {sender}"[:300],
            extra=extra,
            access=access,
            tags=list(rule.tags) if rule else [],
        )
        result.files.append(ingest_bytes(c, tenant, data, filename, prov))
    log.info("mail ingested", message_id_hash=_h(message_id)[:12], files=len(result.files), defects=len(parsed.defects))
    return result
