"""Bundles: files that hold other files, each of which becomes a file of its own (issue 53.1).

A zip (one that is not an Office, OpenDocument or EPUB package), a tar (plain or gzip/bzip2/xz-compressed),
Outlook's TNEF (``winmail.dat``), a message saved as ``.eml`` with attachments and a PDF's embedded files are
bundles (a PDF's are read in the extraction worker: ``pdf_attachments``). ``members`` lists what one holds
after checking it whole against ``ArchiveLimits`` — the member count, each member's size, the total, and
(past the first megabyte) the ratio to the bundle's own size — reading every member once as a stream, so a
bomb is refused before anything is stored and memory holds one member at a time. ``read`` then hands out the
members one by one. A bundle's own document (``listing``) names its members, so the bundle is found by them.

Directories, links, devices, encrypted zip members and the litter of other systems (``__MACOSX/``,
``.DS_Store``, ``Thumbs.db``, ``desktop.ini``) are not members. A member's path is only a name: it is never
written to disk, so ``..`` and leading slashes are dropped from it rather than refused.
"""

from __future__ import annotations

import struct
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from io import BytesIO
from pathlib import PurePosixPath
from typing import IO, Any

from semfs.domain.errors import FileRejected, ParseFailed
from semfs.domain.models import Block, ExtractedDocument, Location
from semfs.domain.outcomes import Outcome
from semfs.extractors.limits import ArchiveLimits

TNEF_MAGIC = b"\x78\x9f\x3e\x22"
TAR_MAGIC_AT = 257  # "ustar" in a POSIX tar header
_LITTER = frozenset({".ds_store", "thumbs.db", "desktop.ini"})
_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Member:
    path: str  # inside the bundle, "/"-separated
    size: int


def _clean_path(name: str) -> str | None:
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("/", ".", "..")]
    if not parts or parts[0] == "__MACOSX" or parts[-1].lower() in _LITTER or parts[-1].startswith("._"):
        return None
    return "/".join(parts)


def bundle_kind(data: bytes, kind: str) -> str | None:
    """Which bundle ``data`` is, given the sniffer's ``kind``: ``zip``, ``tar``, ``tnef`` or ``pdf`` (a PDF
    with embedded files); None when it holds no files."""
    if kind in ("zip", "tar", "tnef"):
        return kind
    if kind == "email":  # a saved message: a bundle when it has attachments
        from semfs.extractors.email import parse_mail

        return "email" if parse_mail(data).attachments else None
    if kind.startswith("compressed:"):  # a .tar.gz, .tbz2, .txz: a tar once decompressed
        return (
            "tar"
            if _head(kind.removeprefix("compressed:"), data)[TAR_MAGIC_AT : TAR_MAGIC_AT + 5] == b"ustar"
            else None
        )
    return None


def _head(method: str, data: bytes, size: int = 512) -> bytes:
    """The first ``size`` bytes a compressed stream holds (nothing more is decompressed)."""
    import bz2
    import gzip
    import lzma

    openers: dict[str, Callable[[BytesIO], Any]] = {
        "gzip": lambda b: gzip.GzipFile(fileobj=b),
        "bzip2": bz2.BZ2File,
        "xz": lzma.LZMAFile,
    }
    try:
        with openers[method](BytesIO(data)) as f:
            return bytes(f.read(size))
    except (OSError, EOFError, KeyError, lzma.LZMAError):
        return b""


class _Budget:
    """The bundle's bounds, spent as its members are read."""

    def __init__(self, limits: ArchiveLimits, packed: int) -> None:
        self.limits, self.packed, self.total, self.count = limits, max(packed, 1), 0, 0

    def member(self, path: str, declared: int) -> None:
        self.count += 1
        if self.count > self.limits.max_members:
            raise FileRejected(
                f"the archive holds more than {self.limits.max_members:,} files (SEMFS_MAX_BUNDLE_MEMBERS)",
                outcome=Outcome.REJECTED_ARCHIVE_BOMB,
            )
        self._check(path, declared, declared)

    def _check(self, path: str, member_bytes: int, added: int) -> None:
        if member_bytes > self.limits.max_member:
            raise FileRejected(
                f"{path!r} in the archive is larger than {self.limits.max_member:,} bytes",
                outcome=Outcome.REJECTED_ARCHIVE_BOMB,
            )
        total = self.total + added
        if total > self.limits.max_uncompressed or (total > _CHUNK and total > self.limits.max_ratio * self.packed):
            raise FileRejected(
                f"the archive expands past {total:,} bytes ({total / self.packed:.0f}x its size)",
                outcome=Outcome.REJECTED_ARCHIVE_BOMB,
            )

    def read(self, path: str, stream: IO[bytes]) -> bytes:
        """The member's bytes, read a megabyte at a time under the bounds (a header may lie about a size)."""
        out = bytearray()
        while chunk := stream.read(_CHUNK):
            out += chunk
            self._check(path, len(out), len(out))
        self.total += len(out)
        return bytes(out)


def _zip_members(data: bytes) -> Iterator[tuple[str, zipfile.ZipInfo]]:
    archive = zipfile.ZipFile(BytesIO(data))
    for info in archive.infolist():
        path = _clean_path(info.filename)
        if info.is_dir() or path is None or info.flag_bits & 0x1:  # 0x1: encrypted
            continue
        yield path, info


def _read_zip(data: bytes, budget: _Budget) -> Iterator[tuple[Member, bytes]]:
    archive = zipfile.ZipFile(BytesIO(data))
    for path, info in _zip_members(data):
        budget.member(path, info.file_size)
        with archive.open(info) as stream:
            body = budget.read(path, stream)
        yield Member(path, len(body)), body


def _read_tar(data: bytes, budget: _Budget) -> Iterator[tuple[Member, bytes]]:
    # a stream ("r|*": gzip, bzip2 or xz decided by the bytes): members in order, nothing seeked or cached
    with tarfile.open(fileobj=BytesIO(data), mode="r|*") as archive:
        for info in archive:
            path = _clean_path(info.name)
            if not info.isfile() or path is None:
                continue
            budget.member(path, info.size)
            stream = archive.extractfile(info)
            if stream is None:
                continue
            body = budget.read(path, stream)
            yield Member(path, len(body)), body


def _read_tnef(data: bytes, budget: _Budget) -> Iterator[tuple[Member, bytes]]:
    import tnefparse

    try:
        parsed = tnefparse.TNEF(data)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, struct.error) as e:
        raise ParseFailed(f"the TNEF (winmail.dat) cannot be parsed: {type(e).__name__}") from e
    for n, attachment in enumerate(parsed.attachments, 1):
        name = attachment.long_filename() or attachment.name or f"attachment-{n}"
        path = _clean_path(name) or f"attachment-{n}"
        body = bytes(attachment.data or b"")
        budget.member(path, len(body))
        yield Member(path, len(body)), budget.read(path, BytesIO(body))


def _read_pdf(data: bytes, budget: _Budget) -> Iterator[tuple[Member, bytes]]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        for n in range(pdf.count_attachments()):
            attachment = pdf.get_attachment(n)
            path = _clean_path(attachment.get_name() or "") or f"attachment-{n + 1}"
            body = bytes(attachment.get_data())
            budget.member(path, len(body))
            yield Member(path, len(body)), budget.read(path, BytesIO(body))
    finally:
        pdf.close()


def _read_email(data: bytes, budget: _Budget) -> Iterator[tuple[Member, bytes]]:
    from semfs.extractors.email import parse_mail

    for n, attachment in enumerate(parse_mail(data).attachments, 1):
        path = _clean_path(attachment.filename) or f"attachment-{n}"
        budget.member(path, len(attachment.data))
        yield Member(path, len(attachment.data)), budget.read(path, BytesIO(attachment.data))


_READERS = {"zip": _read_zip, "tar": _read_tar, "tnef": _read_tnef, "pdf": _read_pdf, "email": _read_email}


def read(data: bytes, bundle: str, limits: ArchiveLimits) -> Iterator[tuple[Member, bytes]]:
    """Each member and its bytes, in the bundle's order, under ``limits`` (``FileRejected`` past them,
    ``ParseFailed`` for a corrupt bundle). Stop early and nothing more is read."""
    try:
        yield from _READERS[bundle](data, _Budget(limits, len(data)))
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, RuntimeError, NotImplementedError) as e:
        # RuntimeError and NotImplementedError: zipfile's words for a password or a method it cannot read
        raise ParseFailed(f"the {bundle} archive is corrupt or truncated: {type(e).__name__}") from e


def pdf_attachments(data: bytes, limits: ArchiveLimits) -> list[tuple[Member, bytes]]:
    """A PDF's embedded files and their bytes, under ``limits`` (none: a PDF that embeds nothing). pdfium is
    native code: the intake runs this in the bounded extraction worker, never in its own process."""
    import pypdfium2 as pdfium

    try:
        return list(read(data, "pdf", limits))
    except pdfium.PdfiumError as e:
        raise ParseFailed(f"the PDF cannot be opened: {type(e).__name__}") from e


def members(data: bytes, bundle: str, limits: ArchiveLimits) -> list[Member]:
    """What the bundle holds, checked whole against ``limits`` before any member is stored."""
    return [m for m, _ in read(data, bundle, limits)]


def listing(filename: str, found: list[Member], before: list[Block] | None = None) -> ExtractedDocument:
    """The bundle's own document: what it says itself (``before``: a message's headers and body), then one
    line per member, so the bundle is found by what it holds."""
    lines = [f"{m.path} ({m.size:,} bytes)" for m in found]
    head = f"{filename} holds {len(found):,} file{'s' if len(found) != 1 else ''}"
    blocks = [*(before or []), Block(text=head, kind="heading", level=1)]
    blocks += [Block(text=line, location=Location(paragraph=n)) for n, line in enumerate(lines, 1)]
    return ExtractedDocument(blocks=blocks, title=filename)


def message_blocks(data: bytes) -> list[Block]:
    """A saved message's own text: who wrote to whom, when, about what, and its body."""
    from semfs.extractors.email import parse_mail

    mail = parse_mail(data)
    people = ", ".join(str(a.address) for a in mail.to + mail.cc)
    header = [
        f"From: {mail.sender.name} <{mail.sender.address}>" if mail.sender else "",
        f"To: {people}" if people else "",
        f"Date: {mail.date.isoformat()}" if mail.date else "",
    ]
    blocks = [Block(text=mail.subject or "(no subject)", kind="heading", level=1)]
    blocks += [Block(text=line) for line in header if line]
    blocks += [
        Block(text=p.strip(), location=Location(paragraph=n))
        for n, p in enumerate(mail.body.split("\n\n"), 1)
        if p.strip()
    ]
    return blocks
