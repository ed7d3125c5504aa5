"""Checks an OOXML (zip) package before any parser opens it (archives are checked first).

Rejects: too many entries, a total or per-entry uncompressed size or ratio beyond the caps (the
ratio of the whole package too, so many small parts at 1000:1 do not pass), entries whose data
overlap (the "overlapping files" zip bomb), ZIP64 size claims beyond the caps, unsafe member names,
and XML parts that declare a DTD or entities anywhere in them. Every XML part is read through once in
chunks (bounded memory; the total size is capped already), so a corrupt member (bad CRC, broken
deflate stream) ends as FAILED_PARSE here instead of crashing a parser.
"""

from __future__ import annotations

import zipfile
import zlib
from io import BytesIO
from itertools import pairwise

from semfs.domain.errors import FileRejected, FileSkipped, ParseFailed
from semfs.domain.outcomes import Outcome
from semfs.extractors.limits import ArchiveLimits


def _bomb(reason: str) -> FileRejected:
    return FileRejected(reason, outcome=Outcome.REJECTED_ARCHIVE_BOMB)


def check_ooxml(data: bytes, limits: ArchiveLimits, public_doctype: bool = False) -> None:
    """Refuse a zip package that is a bomb, holds unsafe names, is encrypted, or has an XML part that
    declares entities. ``public_doctype``: an EPUB's parts may name their DTD (``<!DOCTYPE html PUBLIC
    …>``), which is refused only when entities are declared; an Office package never names one."""
    try:
        zf = zipfile.ZipFile(BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        raise ParseFailed(f"corrupt zip package: {type(e).__name__}") from e
    if len(infos) > limits.max_entries:
        raise _bomb(f"{len(infos)} archive entries (limit {limits.max_entries})")
    total = 0
    for info in infos:
        _check_entry(info, limits)
        total += info.file_size
        if total > limits.max_uncompressed:
            raise _bomb(f"entries claim over {limits.max_uncompressed} bytes uncompressed")
    packed = sum(max(i.compress_size, 1) for i in infos)
    if total > 1024 * 1024 and total > limits.max_ratio * packed:
        raise _bomb(f"package compression ratio {total / packed:.0f} exceeds the limit")
    spans = sorted((i.header_offset, i.header_offset + 30 + len(i.filename) + i.compress_size) for i in infos)
    for (_, end), (start, _) in pairwise(spans):
        if start < end:
            raise _bomb("archive entries overlap")
    for info in infos:
        if not info.is_dir():
            _check_member(zf, info, public_doctype)


def _check_entry(info: zipfile.ZipInfo, limits: ArchiveLimits) -> None:
    """One entry, by what the directory says of it: a safe name, not encrypted, a believable size."""
    name = info.filename
    if name.startswith(("/", "\\")) or ".." in name.replace("\\", "/").split("/") or ":" in name:
        raise FileRejected(f"unsafe member name in package ({len(name)} chars)", outcome=Outcome.REJECTED_UNSAFE_NAME)
    if info.flag_bits & 0x1:
        raise FileSkipped("the package is encrypted", outcome=Outcome.SKIPPED_ENCRYPTED)
    if info.file_size > limits.max_uncompressed:
        raise _bomb(f"an entry claims {info.file_size} bytes uncompressed")
    if info.file_size > 1024 * 1024 and info.file_size > limits.max_ratio * max(info.compress_size, 1):
        raise _bomb(f"compression ratio {info.file_size / max(info.compress_size, 1):.0f} exceeds the limit")


def _check_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, public_doctype: bool) -> None:
    """One member, read through (a corrupt one is found here); an XML part must declare no entities (and,
    but for an EPUB's public DTD, no DTD), looked for across chunk boundaries."""
    xml = info.filename.lower().endswith((".xml", ".rels", ".vml"))
    try:
        with zf.open(info) as fh:
            tail = b""
            while chunk := fh.read(64 * 1024):
                if not xml:
                    continue
                window = (tail + chunk).upper()
                if b"<!ENTITY" in window or (not public_doctype and b"<!DOCTYPE" in window):
                    raise FileRejected("an XML part declares a DTD or entities", outcome=Outcome.REJECTED_XML_ENTITY)
                tail = window[-16:]
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError) as e:
        raise ParseFailed(f"a member of the package is corrupt: {type(e).__name__}") from e
