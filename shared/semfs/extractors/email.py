"""Raw MIME → a parsed message: headers, participants, thread references, attachment leaves, body.

The stdlib parser with ``policy.default`` decodes RFC 2047 / RFC 2231 names and exposes nested
``message/rfc822`` parts, which ``walk()`` descends into, so attachments of forwarded messages are
found too. Parsing never raises for malformed input: what cannot be read becomes a defect.
"""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass, field
from datetime import datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime

MAX_PARTS = 500
MAX_HEADER_BYTES = 512 * 1024
_SUBJECT_PREFIX = re.compile(r"^\s*((re|fw|fwd|aw|wg|sv|vs|antw|tr|rv)\s*(\[\d+\])?\s*:\s*)+", re.IGNORECASE)
_QUOTE_START = re.compile(r"^(on .+ wrote:|am .+ schrieb .+:|-----\s*original message\s*-----|from: .+)$", re.I)


@dataclass(frozen=True)
class Address:
    address: str
    name: str = ""

    @property
    def domain(self) -> str:
        return self.address.rsplit("@", 1)[-1]


@dataclass(frozen=True)
class Attachment:
    index: int
    filename: str
    content_type: str
    data: bytes
    inline: bool


@dataclass
class ParsedMail:
    message_id: str
    subject: str
    sender: Address | None
    to: list[Address]
    cc: list[Address]
    date: datetime | None
    references: list[str]
    attachments: list[Attachment]
    body: str
    defects: list[str] = field(default_factory=list)

    @property
    def participants(self) -> list[Address]:
        seen: dict[str, Address] = {}
        for a in [*([self.sender] if self.sender else []), *self.to, *self.cc]:
            seen.setdefault(a.address, a)
        return list(seen.values())


def normalise_subject(subject: str) -> str:
    """``"Re: AW: Fwd: Q3 Financials "`` → ``"q3 financials"``."""
    return " ".join(_SUBJECT_PREFIX.sub("", subject or "").split()).casefold()


def _addresses(value: object) -> list[Address]:
    out = []
    for name, raw in getaddresses([str(value)] if value else []):
        addr = raw.strip().lower()
        if "@" in addr:
            out.append(Address(address=addr, name=name.strip()))
    return out


def _ids(value: object) -> list[str]:
    return re.findall(r"<[^<>\s]+>", str(value or ""))


def strip_quotes_and_signature(text: str) -> str:
    """The new part of a reply: drop quoted lines, the 'On … wrote:' history and the signature."""
    kept: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == "--" or line.startswith("-- "):
            break
        if _QUOTE_START.match(stripped):
            break
        if stripped.startswith(">"):
            continue
        kept.append(line)
    return "\n".join(kept).strip()


def _filename_for(part: EmailMessage, subject: str, index: int) -> str:
    ext = mimetypes.guess_extension(part.get_content_type()) or ".bin"
    base = re.sub(r"[^\w\- ]+", "", normalise_subject(subject)).strip().replace(" ", "-")[:60] or "attachment"
    return f"{base}-{index}{ext}"


def parse_mail(raw: bytes, min_inline_image_bytes: int = 20_000) -> ParsedMail:
    header_end = raw.find(b"\r\n\r\n")
    if header_end < 0:
        header_end = raw.find(b"\n\n")
    defects: list[str] = []
    if header_end > MAX_HEADER_BYTES or (header_end < 0 and len(raw) > MAX_HEADER_BYTES):
        defects.append("headers exceed the size limit")
        raw = raw[:MAX_HEADER_BYTES]
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(msg, EmailMessage)
    defects += [type(d).__name__ for d in msg.defects]
    try:
        subject = str(msg.get("Subject", "") or "")
    except Exception:  # a header the policy cannot decode
        subject, defects = "", [*defects, "undecodable subject"]
    date = None
    try:
        date = parsedate_to_datetime(str(msg["Date"])) if msg.get("Date") else None
    except (TypeError, ValueError):
        defects.append("bad date")
    senders = _addresses(msg.get("From"))
    attachments: list[Attachment] = []
    body_parts: list[str] = []
    for n, part in enumerate(msg.walk()):
        if n >= MAX_PARTS:
            defects.append(f"more than {MAX_PARTS} parts; the rest were not read")
            break
        if part.is_multipart():
            continue
        assert isinstance(part, EmailMessage)
        disposition = part.get_content_disposition()
        ctype = part.get_content_type()
        try:
            filename = part.get_filename()
            payload = part.get_payload(decode=True)
        except Exception as e:  # malformed encodings: this part is lost, the others are kept
            defects.append(f"unreadable part: {type(e).__name__}")
            continue
        data = payload if isinstance(payload, bytes) else b""
        if not filename and disposition is None and ctype in ("text/plain", "text/html"):
            if ctype == "text/plain":
                body_parts.append(data.decode(part.get_content_charset() or "utf-8", errors="replace"))
            continue
        if not filename and ctype.startswith("text/") and disposition != "attachment":
            continue  # alternative bodies
        is_inline = disposition == "inline" or (disposition is None and bool(part.get("Content-ID")))
        if ctype.startswith("image/") and is_inline and len(data) < min_inline_image_bytes:
            continue  # logos and signature images
        attachments.append(
            Attachment(
                index=n,
                filename=filename or _filename_for(part, subject, n),
                content_type=ctype,
                data=data,
                inline=is_inline,
            )
        )
    message_id = (_ids(msg.get("Message-ID")) or [""])[0]
    references = _ids(msg.get("References")) + _ids(msg.get("In-Reply-To"))
    return ParsedMail(
        message_id=message_id,
        subject=subject,
        sender=senders[0] if senders else None,
        to=_addresses(msg.get("To")),
        cc=_addresses(msg.get("Cc")),
        date=date,
        references=list(dict.fromkeys(references)),
        attachments=attachments,
        body=strip_quotes_and_signature("\n".join(body_parts)),
        defects=defects,
    )
