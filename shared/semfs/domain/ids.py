"""Deterministic identifiers: the same identity always yields the same id (idempotency)."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from email.utils import parseaddr

from semfs.domain.tags import slugify

_SEP = "\x1f"


def _digest(*parts: str) -> str:
    # surrogatepass: an id never fails on text an entry point did not clean (a lone surrogate from an
    # undecodable file name); the record itself stores ``text.encodable`` forms (register does that)
    return hashlib.sha256(_SEP.join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def file_id_for(tenant_id: str, source_type: str, source_key: str, sha256: str) -> str:
    """``file_id`` from the identity (tenant, source, where it came from, content hash)."""
    return "f_" + _digest("file", tenant_id, source_type, source_key, sha256)[:24]


def lineage_id_for(file_id: str) -> str:
    """A lineage is named after its first version."""
    return "l_" + file_id.removeprefix("f_")


def chunk_id(file_id: str, n: int) -> str:
    return f"{file_id}:{n}"


def card_id(file_id: str) -> str:
    """The file card (title + summary + tags) sorts after every chunk id of the file."""
    return f"{file_id}:card"


def notes_id(file_id: str) -> str:
    """People's notes on the file, one keyword document of its chunks (their meaning is in the card)."""
    return f"{file_id}:notes"


def execution_name(tenant_id: str, file_id: str, attempt: int = 0) -> str:
    """Step Functions execution names are ≤ 80 chars of [A-Za-z0-9-_], and a name once used — even by a
    closed execution — is refused (``ExecutionAlreadyExists``) whatever the input. So each attempt (a
    retry, a redrive) has its own name, deterministic per attempt: duplicate deliveries of one attempt
    are still one execution."""
    if attempt == 0:
        return "pf-" + _digest("exec", tenant_id, file_id)[:40]
    return f"pf-{_digest('exec', tenant_id, file_id)[:40]}-a{attempt}"


def thread_id_for(tenant_id: str, subject: str) -> str:
    """A thread named by its normalised subject within a tenant (mail threads refine this)."""
    return "t_" + _digest("thread", tenant_id, " ".join(subject.casefold().split()))[:20]


# reply and forward prefixes, in the languages mail clients write them
_SUBJECT_PREFIX = re.compile(r"^\s*((re|fw|fwd|aw|wg|sv|vs|antw|tr|rv)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)


def normalise_subject(subject: str) -> str:
    """``"Re: AW: Fwd: Q3 Financials "`` → ``"q3 financials"``: what names a thread."""
    return " ".join(_SUBJECT_PREFIX.sub("", subject or "").split()).casefold()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def normalise_filename(name: str) -> str:
    """The filename as versions of one document share it: NFKC, case-folded, trimmed.

    ``Contract v2 (final).docx`` and ``contract.docx`` are different names on purpose; only
    cosmetic differences are folded. NFKC folds lookalike separators (``．．／x.txt`` into ``../x.txt``):
    a separator it makes is put back as the fullwidth form, so the result is never a path.
    """
    base = unicodedata.normalize("NFKC", name).strip().casefold()
    base = base.replace("/", "\uff0f").replace("\\", "\uff3c")
    return " ".join(base.split())


def contact_id_for(contact: str) -> str:
    """``"Jane <jane@Acme.example>"`` → ``c_jane@acme.example``; a bare name → ``c_`` + its slug."""
    _, address = parseaddr(contact)
    if address and "@" in address:
        return "c_" + address.strip().lower()
    return "c_" + (slugify(contact) or contact.strip().lower())
