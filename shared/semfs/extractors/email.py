"""Raw MIME → a parsed message: headers, participants, thread references, attachment leaves, body.

The stdlib parser with ``policy.default`` decodes RFC 2047 / RFC 2231 names and exposes nested
``message/rfc822`` parts, which ``walk()`` descends into, so attachments of forwarded messages are
found too. Parsing never raises for malformed input: what cannot be read becomes a defect.
"""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from email.utils import getaddresses, parsedate_to_datetime
from typing import Any
from urllib.parse import unquote

from semfs.domain.errors import ParseFailed
from semfs.domain.ids import normalise_subject
from semfs.domain.models import Block, ExtractedDocument, Location
from semfs.domain.text import normalise

MAX_PARTS = 500
MAX_HEADER_BYTES = 512 * 1024
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
    """A message's headers, its body (quotes and signature stripped; an HTML-only body by its text) and its
    attachments (not the logos and signature images a body draws). What cannot be read is a defect, never an
    exception: one broken part loses that part."""
    msg, defects = _parse_headers(raw)
    subject, date = _subject_and_date(msg, defects)
    parts = _Parts(min_inline_image_bytes)
    for n, part in enumerate(msg.walk()):
        if n >= MAX_PARTS:
            defects.append(f"more than {MAX_PARTS} parts; the rest were not read")
            break
        if not part.is_multipart():
            assert isinstance(part, EmailMessage)
            parts.read(n, part, subject, defects)
    attachments = _inline_by_reference(parts.attachments, parts.shown_by_cid, parts.html, min_inline_image_bytes)
    senders = _addresses(msg.get("From"))
    references = _ids(msg.get("References")) + _ids(msg.get("In-Reply-To"))
    return ParsedMail(
        message_id=(_ids(msg.get("Message-ID")) or [""])[0],
        subject=subject,
        sender=senders[0] if senders else None,
        to=_addresses(msg.get("To")),
        cc=_addresses(msg.get("Cc")),
        date=date,
        references=list(dict.fromkeys(references)),
        attachments=attachments,
        # an empty text/plain part (some mailers send one beside the HTML) does not hide the HTML's text;
        # NULs (Outlook ends a body with one) are no part of a body and made it read as binary
        body=strip_quotes_and_signature(
            "\n".join([p for p in parts.plain if p.strip()] or [_html_text(h) for h in parts.html]).replace("\x00", "")
        ),
        defects=defects,
    )


def _parse_headers(raw: bytes) -> tuple[EmailMessage, list[str]]:
    """The message as the standard library reads it, its headers cut at ``MAX_HEADER_BYTES``."""
    header_end = raw.find(b"\r\n\r\n")
    if header_end < 0:
        header_end = raw.find(b"\n\n")
    defects: list[str] = []
    if header_end > MAX_HEADER_BYTES or (header_end < 0 and len(raw) > MAX_HEADER_BYTES):
        defects.append("headers exceed the size limit")
        raw = raw[:MAX_HEADER_BYTES]
    msg = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(msg, EmailMessage)
    return msg, defects + [type(d).__name__ for d in msg.defects]


def _subject_and_date(msg: EmailMessage, defects: list[str]) -> tuple[str, datetime | None]:
    try:
        subject = str(msg.get("Subject", "") or "")
    except Exception:  # a header the policy cannot decode
        subject = ""
        defects.append("undecodable subject")
    try:
        return subject, parsedate_to_datetime(str(msg["Date"])) if msg.get("Date") else None
    except (TypeError, ValueError):
        defects.append("bad date")
        return subject, None


class _Parts:
    """A message's leaf parts sorted as they are read: its text, its HTML, its attachments."""

    def __init__(self, min_inline_image_bytes: int) -> None:
        self.min_image = min_inline_image_bytes
        self.plain: list[str] = []
        self.html: list[str] = []
        self.attachments: list[Attachment] = []
        self.shown_by_cid: dict[int, str] = {}  # attachment position -> the Content-ID of an image marked attachment

    def read(self, n: int, part: EmailMessage, subject: str, defects: list[str]) -> None:
        disposition = part.get_content_disposition()
        ctype = part.get_content_type()
        try:
            filename = part.get_filename()
            payload = part.get_payload(decode=True)
        except Exception as e:  # malformed encodings: this part is lost, the others are kept
            defects.append(f"unreadable part: {type(e).__name__}")
            return
        data = payload if isinstance(payload, bytes) else b""
        if not filename and disposition in (None, "inline") and ctype in ("text/plain", "text/html"):
            # the message's own text, marked inline or not; an HTML-only message's body is its HTML's text
            text = body_text(data, part.get_content_charset())
            (self.plain if ctype == "text/plain" else self.html).append(text)
            return
        if not filename and ctype.startswith("text/") and disposition != "attachment":
            return  # alternative bodies
        content_id = _content_id(part)
        is_inline = disposition == "inline" or (disposition is None and bool(content_id))
        if ctype.startswith("image/") and is_inline and len(data) < self.min_image:
            return  # logos and signature images
        if ctype.startswith("image/") and content_id and not is_inline:
            self.shown_by_cid[len(self.attachments)] = content_id
        name = filename or _filename_for(part, subject, n)
        self.attachments.append(Attachment(index=n, filename=name, content_type=ctype, data=data, inline=is_inline))


_CID_REF = re.compile(r"cid:([^\s\"'<>()]+)", re.IGNORECASE)


def _content_id(part: EmailMessage) -> str:
    """A part's Content-ID without its angle brackets, lower-cased ('' when it has none)."""
    return str(part.get("Content-ID", "") or "").strip().strip("<>").strip().lower()


def _inline_by_reference(
    attachments: list[Attachment], shown_by_cid: dict[int, str], html_parts: list[str], min_image_bytes: int
) -> list[Attachment]:
    """An image the HTML body shows by its ``cid:`` is part of the body, whatever its disposition says.

    Outlook marks a newsletter's pictures ``Content-Disposition: attachment`` unless they are hidden, so
    extract-msg writes them so: one Outlook newsletter became 11 logo records. As an .eml's small inline
    images, such a picture under the size bound is no document; a larger one is kept, marked inline."""
    if not shown_by_cid:
        return attachments
    shown = {unquote(ref).strip().lower() for html in html_parts for ref in _CID_REF.findall(html)}
    kept: list[Attachment] = []
    for position, attachment in enumerate(attachments):
        if shown_by_cid.get(position) not in shown:
            kept.append(attachment)
        elif len(attachment.data) >= min_image_bytes:
            kept.append(replace(attachment, inline=True))
        # else: a logo or signature image the body draws
    return kept


def _html_text(html: str) -> str:
    from semfs.extractors.text import extract_html

    return "\n\n".join(b.text for b in extract_html(html).blocks)


def _open_msg(data: bytes) -> Any:
    """An Outlook message (typed by extract-msg as its base MSGFile); ParseFailed for a damaged container."""
    import extract_msg

    try:
        return extract_msg.openMsg(data)
    except Exception as e:  # extract-msg raises its own types for a damaged container
        raise ParseFailed(f"the Outlook message cannot be read: {type(e).__name__}") from e


def msg_to_mime(data: bytes) -> bytes:
    """An Outlook .msg as the RFC 5322 message it holds (headers, bodies, attachments), so it takes the
    same path as an .eml: threads, contacts and per-attachment provenance."""
    message = _open_msg(data)
    try:
        return bytes(message.asEmailMessage().as_bytes())
    except Exception as e:
        raise ParseFailed(f"the Outlook message cannot be read: {type(e).__name__}") from e
    finally:
        message.close()


def extract_msg_document(data: bytes) -> ExtractedDocument:
    """A .msg read as one document (when it arrives as a file rather than as mail), as Outlook shows it: the
    MAPI sender and recipient table (a message's transport headers can name someone else), the subject,
    the date, the body (its HTML's text when there is no plain body) and its attachments' names."""
    message = _open_msg(data)
    try:
        shown = _OutlookShows.of(message)
    except Exception as e:
        raise ParseFailed(f"the Outlook message cannot be read: {type(e).__name__}") from e
    finally:
        message.close()
    blocks = [Block(kind="notes", text=shown.header(), location=Location(paragraph=1))]
    for para in (p for p in re.split(r"\n\s*\n", shown.body.replace("\r\n", "\n")) if p.strip()):
        blocks.append(Block(text=normalise(para), location=Location(paragraph=len(blocks) + 1)))
    if shown.attachments:
        text = "Attachments: " + ", ".join(shown.attachments)
        blocks.append(Block(kind="notes", text=text, location=Location(paragraph=len(blocks) + 1)))
    return ExtractedDocument(
        blocks=[b for b in blocks if b.text], title=shown.subject or None, document_date=shown.date
    )


@dataclass
class _OutlookShows:
    """What Outlook shows of a message: who sent it to whom, when, about what, its body, its attachments."""

    sender: str
    sender_name: str
    to: list[str]
    subject: str
    date: datetime | None
    body: str
    attachments: list[str]

    @classmethod
    def of(cls, message: Any) -> _OutlookShows:
        sender = message.getStringStream("__substg1.0_0C1F") or ""
        sender_name = message.getStringStream("__substg1.0_0C1A") or ""
        if not sender:
            found = _addresses(message.sender)
            sender, sender_name = (found[0].address, found[0].name) if found else ("", "")
        body = str(message.body or "").replace("\x00", "")
        if not body.strip() and message.htmlBody:
            body = _html_text(message.htmlBody.decode("utf-8", errors="replace"))
        return cls(
            sender=sender,
            sender_name=sender_name,
            to=[r.email or r.name for r in message.recipients if int(r.type) == 1 and (r.email or r.name)],
            subject=str(message.subject or ""),
            date=message.date if isinstance(message.date, datetime) else None,
            body=body,
            attachments=[str(a.longFilename or a.shortFilename or "attachment") for a in message.attachments],
        )

    def header(self) -> str:
        named = self.sender_name and self.sender_name != self.sender
        lines = [
            f"From: {self.sender} ({self.sender_name})" if self.sender and named else f"From: {self.sender}",
            "To: " + ", ".join(self.to) if self.to else "",
            f"Date: {self.date.isoformat()}" if self.date else "",
            f"Subject: {self.subject}" if self.subject else "",
        ]
        return "\n".join(h for h in lines if h.strip(" :From"))


def body_text(data: bytes, declared: str | None) -> str:
    """A mail body's text. Bytes that are valid UTF-8 (with non-ASCII in them) are UTF-8 whatever the part
    declares: a message declaring GB2312 whose body was UTF-8 was stored as mojibake (issue 53.3). Else the
    declared charset, when it is known and decodes the bytes; else the charset the bytes read as
    (``text.decode``)."""
    from semfs.extractors.text import decode

    if not data.isascii():
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    if declared:
        try:
            return data.decode(declared)
        except (LookupError, UnicodeDecodeError):
            pass
    return decode(data)
