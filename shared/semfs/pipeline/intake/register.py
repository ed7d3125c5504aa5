"""Register: store the bytes, write the FileRecord (status=received) — idempotent by identity.

Identity is (tenant, source type, source key, sha256): the same file from the same place is the
same ``file_id``, so a repeated delivery is a no-op. Identical bytes from elsewhere in the tenant
become a ``SKIPPED_DUPLICATE`` record pointing at the first. A new version joins a lineage when the caller names
the previous version, or — implicitly — when the source says it is the same document (its
``version_key``: the same S3 key, path, drop-folder path, or filename within a thread); Enrich then
checks that the text is plausibly a revision (``domain/similarity.py``) and detaches it if not.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from email.utils import parseaddr
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from semfs.domain.access import Access, can_read, readers_of
from semfs.domain.errors import Busy, Conflict, InvalidRequest, NotFound
from semfs.domain.features import require
from semfs.domain.ids import contact_id_for, file_id_for, lineage_id_for, normalise_filename, sha256_hex, thread_id_for
from semfs.domain.models import FileRecord, utcnow
from semfs.domain.outcomes import Outcome, Status
from semfs.domain.tags import manual_tag
from semfs.domain.text import encodable, readable_name
from semfs.domain.vocabulary import SourceType
from semfs.pipeline.documents import content_key, follow_lineage

if TYPE_CHECKING:
    from semfs.ports import Container


MAX_NAME = 255


@dataclass(frozen=True)
class Provenance:
    """Where a file came from and why (its provenance)."""

    source_type: SourceType = "upload"
    source_key: str | None = None  # e.g. an S3 key or an email Message-ID + part; defaults to the name
    # the same document from the same place: "s3:KEY", "path:/abs/path", "inbox:rel/path"; mail and
    # uploads with a thread use the filename within the thread. None: only an explicit previous version
    version_key: str | None = None
    thread_id: str | None = None
    thread_subject: str | None = None
    contacts: list[str] = field(default_factory=list)
    contact_ids: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    previous_version_id: str | None = None
    uploaded_by: str | None = None
    upload_context: str | None = None
    source_message_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    by_caller: bool = False  # made by ``from_caller``: its ids are checked against the tenant on register
    # who may read the new file (``domain/access.py``); None: the whole tenant (no users, or a sweep's file)
    access: Access | None = None
    # what the caller handing it in reads as (``Principal.tokens()``; None: every file): a file they cannot
    # see is never theirs to be "the same file", "a copy of" or "the previous version of"
    viewer: tuple[str, ...] | None = None

    @classmethod
    def from_caller(cls, *, source_type: str | None = None, tags: Sequence[str] = (), **given: Any) -> Provenance:
        """What a person or an agent says about a file they hand in (``semfs ingest``, ``POST /files``,
        ``ingest_agent_file``), checked once for all three: a source type a caller may claim (mail is
        semfs's own to say) and manual tags that make valid tags. Raises ``InvalidRequest`` naming the
        field; the rest of the provenance is the caller's word, stored as given."""
        claimed = source_type or "upload"
        if claimed not in CALLER_SOURCE_TYPES:
            raise InvalidRequest(f"source_type must be {' or '.join(CALLER_SOURCE_TYPES)}, not {claimed!r}")
        for tag in tags:
            try:
                manual_tag(tag)
            except ValueError as e:
                raise InvalidRequest(f"tags: {e}") from e
        kind: SourceType = "agent_generated" if claimed == "agent_generated" else "upload"
        return cls(source_type=kind, tags=list(tags), by_caller=True, **given)


def check_references(c: Container, tenant_id: str, prov: Provenance) -> None:
    """The ids a caller names are of its own tenant: each contact one of the tenant's contacts, each file
    ``derived_from`` one of its files. Otherwise ``NotFound`` naming the field, as for a previous version
    (an id of another tenant reads as one that does not exist: nothing says it exists elsewhere)."""
    for contact_id in prov.contact_ids:
        if c.mail.contact(tenant_id, contact_id) is None:
            raise NotFound(f"contact_ids: no contact {contact_id!r} in this tenant")
    for file_id in prov.extra.get("derived_from") or []:
        try:
            c.repo.get(tenant_id, str(file_id))
        except NotFound:
            raise NotFound(f"derived_from: no file {str(file_id)!r} in this tenant") from None


# the source types a caller may claim for a file it hands in; email_attachment comes only from a message
CALLER_SOURCE_TYPES = ("upload", "agent_generated")


@dataclass(frozen=True)
class Registered:
    record: FileRecord
    created: bool  # False: this identity was registered before (no-op)
    restored: bool = False  # it was in the trash, and sending it again brought it back


# Bidirectional overrides and isolates can make "invoice<U+202E>fdp.exe" read as "invoiceexe.pdf": they go.
# So do the characters that show nothing at all (zero-width space, word joiner, invisible operators, BOM,
# soft hyphen, Mongolian vowel separator) and tag characters outside a flag: text a reader cannot see.
# Joiners stay (a zero-width joiner is part of emoji sequences, a non-joiner of Persian names).
_BIDI = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c")
_INVISIBLE = frozenset("\u200b\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e")
_BLACK_FLAG, _CANCEL_TAG = "\U0001f3f4", "\U000e007f"


def _is_tag(ch: str) -> bool:
    return "\U000e0000" <= ch <= "\U000e007f"


def _visible(name: str) -> str:
    """``name`` without bidi controls, invisible characters and stray tag characters; a subdivision flag
    (U+1F3F4, tag letters, CANCEL TAG) keeps its tags."""
    out: list[str] = []
    in_flag = False
    for ch in name:
        if ch in _BIDI or ch in _INVISIBLE:
            continue
        if _is_tag(ch):
            if in_flag:
                out.append(ch)
                in_flag = ch != _CANCEL_TAG
            continue
        in_flag = ch == _BLACK_FLAG
        out.append(ch)
    return "".join(out)


def safe_filename(name: str) -> str | None:
    """The base name without directories, bidi controls or invisible characters; ``None`` when nothing
    safe is left (empty, too long, only dots once NFKC folds lookalikes, or control characters such as
    newlines or NUL)."""
    base = PurePosixPath(_visible(name).replace("\\", "/")).name.strip()
    if not base or unicodedata.normalize("NFKC", base).strip() in {".", ".."} or len(base) > MAX_NAME:
        return None
    if any(unicodedata.category(ch) in ("Cc", "Cs", "Co", "Cn") for ch in base):
        return None
    return base


def _manual(tags: list[str]) -> list[tuple[str, str]]:
    """Valid manual tags as (slug, label); entry points refuse invalid ones before they get here."""
    out = []
    for tag in tags:
        try:
            out.append(manual_tag(tag))
        except ValueError:
            continue
    return out


def _encodable(prov: Provenance) -> Provenance:
    """Names from a file system or a client as text every store takes (``text.encodable``): a folder holding
    ``bad\\xff.txt`` aborted a whole ``semfs ingest`` and looped in the drop folder (issue 27)."""
    return replace(
        prov,
        source_key=prov.source_key and encodable(prov.source_key),
        version_key=prov.version_key and encodable(prov.version_key),
        thread_subject=prov.thread_subject and encodable(prov.thread_subject),
        contacts=[encodable(x) for x in prov.contacts],
        uploaded_by=prov.uploaded_by and encodable(prov.uploaded_by),
        upload_context=prov.upload_context and encodable(prov.upload_context),
    )


BUSY_RETRY_AFTER_S = 10


def admit_new_file(c: Container, tenant_id: str) -> None:
    """Refuse a new file (``Busy``, nothing stored) while the tenant already has its share of files
    waiting to start; a file already registered is never refused (sending it again is a no-op)."""
    cap = c.settings.limits.tenant_max_queued
    if c.jobs.backlog(tenant_id) >= cap:
        reason = f"{cap} files of this tenant are waiting to be processed: send this one again later"
        raise Busy(reason, BUSY_RETRY_AFTER_S)


# One registration at a time in a process. Whether a file is a copy of one stored (its bytes) or the next
# version of one (its source or version key) is read, then written: two threads registering at once (the
# files `semfs ingest` has in flight, `semfs serve`'s requests) would each find nothing and store two
# originals, or two "version 2"s. Registering is short (the pipeline runs after it), so this costs little.
_REGISTERING = threading.RLock()


def register(c: Container, tenant_id: str, data: bytes, filename: str, prov: Provenance) -> Registered:
    """Register one file. Never raises for a bad input: the record carries the outcome instead. A new
    file while the tenant's queue is full raises ``Busy``, and any file while ingest is switched off
    ``Disabled``, before anything is stored."""
    with _REGISTERING:
        return _register(c, tenant_id, data, filename, prov)


def _register(c: Container, tenant_id: str, data: bytes, filename: str, prov: Provenance) -> Registered:
    require(c.settings, "ingest")
    filename, prov = readable_name(filename), _encodable(prov)
    sha = sha256_hex(data)
    name = safe_filename(filename)
    normalised = normalise_filename(name or "unnamed")
    source_key = prov.source_key or normalised
    file_id = file_id_for(tenant_id, prov.source_type, source_key, sha)
    existing = _existing(c, tenant_id, file_id)
    if existing is not None and not can_read(existing.readers, prov.viewer):
        # the same name and bytes from someone who cannot see the first: a file of their own (saying
        # "already here" would tell them it exists)
        owner = prov.access.owner if prov.access else None
        file_id = file_id_for(tenant_id, prov.source_type, f"{source_key}\x1f{owner or ''}", sha)
        existing = _existing(c, tenant_id, file_id)
    if existing is not None and existing.status is not Status.DELETED:
        return _again(c, existing)
    # (a purged file's tombstone is replaced below: sent again after a purge, it is a new file)
    if prov.by_caller:
        check_references(c, tenant_id, prov)
    admit_new_file(c, tenant_id)
    base = _new_record(tenant_id, file_id, sha, data, name, normalised, source_key, prov)
    refused = _refusal(c, base, name, data, prov.viewer)
    if refused is not None:
        outcome, reason, changes = refused
        return _create(c, base.evolve(status=outcome.final_status, outcome=outcome, error=reason, **changes), existing)
    base = _as_next_version(c, base, prov)
    if not c.blobs.exists(base.blob_key):
        c.blobs.put(base.blob_key, data)
    created = _store(c, base.evolve(status=Status.RECEIVED), existing)
    if created and not c.blobs.exists(base.blob_key):  # a delete of the same bytes erased them meanwhile
        c.blobs.put(base.blob_key, data)
    if created:
        _remember_contacts(c, tenant_id, prov.contacts)
    return Registered(c.repo.get(tenant_id, file_id), created=created)


def _existing(c: Container, tenant_id: str, file_id: str) -> FileRecord | None:
    try:
        return c.repo.get(tenant_id, file_id)
    except NotFound:
        return None


def _again(c: Container, existing: FileRecord) -> Registered:
    """The same file sent again: unchanged, or - from the trash - the user wants it back."""
    if existing.status is Status.TRASHED:
        from semfs.pipeline.catalogue.trash import restore

        (back,) = restore(c, existing.tenant_id, existing.file_id)
        return Registered(back, created=False, restored=True)
    return Registered(existing, created=False)


def _new_record(
    tenant_id: str,
    file_id: str,
    sha: str,
    data: bytes,
    name: str | None,
    normalised: str,
    source_key: str,
    prov: Provenance,
) -> FileRecord:
    """The record of a file not seen before, with its provenance, thread, contacts and manual tags."""
    thread_id = prov.thread_id or (thread_id_for(tenant_id, prov.thread_subject) if prov.thread_subject else None)
    manual = _manual(prov.tags)
    return FileRecord(
        file_id=file_id,
        tenant_id=tenant_id,
        lineage_id=lineage_id_for(file_id),
        sha256=sha,
        blob_key=content_key(tenant_id, sha),
        filename=name or "unnamed",
        normalised_name=normalised,
        size_bytes=len(data),
        source_type=prov.source_type,
        source_key=source_key,
        version_key=prov.version_key or (f"thread:{thread_id}:{normalised}" if thread_id else None),
        source_message_id=prov.source_message_id,
        uploaded_by=prov.uploaded_by,
        upload_context=prov.upload_context,
        contact_ids=list(dict.fromkeys([*prov.contact_ids, *(contact_id_for(x) for x in prov.contacts if x.strip())])),
        thread_id=thread_id,
        tags=list(dict.fromkeys(slug for slug, _ in manual)),
        tag_labels={slug: label for slug, label in manual if slug != label},
        provenance={"thread_subject": prov.thread_subject, "contacts": prov.contacts, **prov.extra},
        **(prov.access or Access()).as_fields(),
    )


def _refusal(
    c: Container, base: FileRecord, name: str | None, data: bytes, viewer: tuple[str, ...] | None = None
) -> tuple[Outcome, str, dict[str, Any]] | None:
    """Why a file ends here, recorded but never read: an unsafe name, too large, empty, or a copy."""
    if name is None:
        return Outcome.REJECTED_UNSAFE_NAME, "the file name is empty, too long or has control characters", {}
    limits = c.settings.limits
    if len(data) > limits.max_file_bytes:
        return (
            Outcome.REJECTED_TOO_LARGE,
            f"{len(data)} bytes exceeds the {limits.max_file_mb:g} MB limit",
            {"blob_key": ""},
        )
    if not data:  # every empty file is empty, not a duplicate of the first one
        return Outcome.SKIPPED_EMPTY, "the file is empty (0 bytes)", {"blob_key": ""}
    found = c.repo.find_by_sha256(base.tenant_id, base.sha256)
    duplicates = [r for r in found if r.outcome is not Outcome.SKIPPED_DUPLICATE and _sees(viewer, r, base)]
    if duplicates:
        first = duplicates[0].file_id
        return Outcome.SKIPPED_DUPLICATE, f"identical bytes already stored as {first}", {"duplicate_of": first}
    return None


def _sees(viewer: tuple[str, ...] | None, other: FileRecord, base: FileRecord) -> bool:
    """Whether the file being registered may be folded into ``other`` (a copy of it): the caller sees
    ``other``, and ``other`` is read by no one the new file is not (a copy readable by fewer people would
    hide the file from those it was shared with)."""
    return can_read(other.readers, viewer) and set(readers_of(base.readers)) <= set(readers_of(other.readers))


def _as_next_version(c: Container, base: FileRecord, prov: Provenance) -> FileRecord:
    """The record as the next version of the file the caller named, or of the latest file with its
    version key (the same path, S3 key or thread and name); as it is when there is none."""
    link = "explicit"
    if prov.previous_version_id:
        try:
            previous: FileRecord | None = c.repo.get(base.tenant_id, prov.previous_version_id)
        except NotFound:  # the caller named a bad id
            raise NotFound("previous_version_id: no such file in this tenant") from None
        if previous is None or not can_read(previous.readers, prov.viewer):  # as if there were none
            raise NotFound("previous_version_id: no such file in this tenant")
    elif base.version_key:
        previous, link = c.repo.find_latest(base.tenant_id, base.version_key), "implicit"
        if previous is not None and not can_read(previous.readers, prov.viewer):
            previous = None  # someone else's file at the same place: not this caller's to revise
    else:
        previous = None
    if previous is None:
        return base
    previous, number = follow_lineage(c, base.tenant_id, previous)
    return base.evolve(
        lineage_id=previous.lineage_id,
        version=number,
        previous_version_id=previous.file_id,
        is_latest=False,
        provenance={**base.provenance, "version_link": link},
        # a new version keeps its lineage's access (the owner changes it with ``semfs share``)
        owner=previous.owner,
        readers=list(previous.readers),
    )


def _remember_contacts(c: Container, tenant_id: str, contacts: list[str]) -> None:
    """Contacts named on an upload (``--contact``) join the tenant's contacts, as mail senders do: the
    organisation of an address is its company domain (as for mail), and a name with a legal form ("Acme
    Corp", "DHL Freight GmbH") is an organisation itself. Before, both left the organisation blank."""
    from semfs.domain.mentions import LEGAL_FORM
    from semfs.domain.tags import contact_tag
    from semfs.ports.mail import Person

    for contact in contacts:
        if not contact.strip():
            continue
        name, address = parseaddr(contact)
        email = address.lower() if "@" in address else ""
        named = name or ("" if email else contact.strip())
        organisation = contact_tag(email) if email else (named if LEGAL_FORM.fullmatch(named) else "")
        c.mail.upsert_contact(tenant_id, Person(contact_id_for(contact), email, named, organisation or None))


def register_rejected(
    c: Container,
    tenant_id: str,
    filename: str,
    size: int,
    source_key: str,
    outcome: Outcome,
    reason: str,
    prov: Provenance | None = None,
) -> Registered:
    """Record a file refused before its bytes were read (too large to fetch, a skipped message)."""
    require(c.settings, "ingest")
    prov = prov or Provenance()
    name = safe_filename(filename) or "unnamed"
    file_id = file_id_for(tenant_id, prov.source_type, source_key, f"unread:{size}")
    record = FileRecord(
        file_id=file_id,
        tenant_id=tenant_id,
        lineage_id=lineage_id_for(file_id),
        sha256="",
        blob_key="",
        filename=name,
        normalised_name=normalise_filename(name),
        size_bytes=size,
        source_type=prov.source_type,
        source_key=source_key,
        # an upload refused by its size keeps its key's version key, so the reconcile sweep sees the
        # object has a record (a skipped record never becomes an implicit previous version)
        version_key=prov.version_key,
        source_message_id=prov.source_message_id,
        upload_context=prov.upload_context,
        status=outcome.final_status,
        outcome=outcome,
        error=reason,
        provenance=dict(prov.extra),
    )
    return _create(c, record)


def _create(c: Container, record: FileRecord, tomb: FileRecord | None = None) -> Registered:
    """Conditionally create ``record`` (in place of ``tomb``, a purged file's tombstone under the same
    identity); if its identity exists already, that record wins (idempotent)."""
    created = _store(c, record, tomb)
    return Registered(record if created else c.repo.get(record.tenant_id, record.file_id), created=created)


def _store(c: Container, record: FileRecord, tomb: FileRecord | None) -> bool:
    if tomb is None:
        return c.repo.create(record)
    try:  # conditional on the tombstone's revision, as every save is
        c.repo.save(record.evolve(revision=tomb.revision, attempt=tomb.attempt + 1, created_at=utcnow()))
        return True
    except Conflict:  # another writer replaced it first
        return False
