"""Checks an OOXML (zip) package before any parser opens it (DESIGN §7: archives checked first).

Rejects: too many entries, a total or per-entry uncompressed size or ratio beyond the caps, entries
whose data overlap (the "overlapping files" zip bomb), ZIP64 size claims beyond the caps, unsafe
member names, and XML parts that declare a DTD or entities. Reads only the central directory and the
first bytes of each XML part.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from io import BytesIO
from itertools import pairwise

from semfs.domain.errors import FileRejected, FileSkipped, ParseFailed
from semfs.domain.outcomes import Outcome


@dataclass(frozen=True)
class ArchiveLimits:
    max_entries: int = 10_000
    max_uncompressed: int = 500 * 1024 * 1024
    max_ratio: float = 200.0


def _bomb(reason: str) -> FileRejected:
    return FileRejected(reason, outcome=Outcome.REJECTED_ARCHIVE_BOMB)


def check_ooxml(data: bytes, limits: ArchiveLimits) -> None:
    try:
        zf = zipfile.ZipFile(BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        raise ParseFailed(f"corrupt zip package: {type(e).__name__}") from e
    if len(infos) > limits.max_entries:
        raise _bomb(f"{len(infos)} archive entries (limit {limits.max_entries})")
    total = 0
    spans: list[tuple[int, int]] = []
    for info in infos:
        name = info.filename
        if name.startswith(("/", "\\")) or ".." in name.replace("\\", "/").split("/") or ":" in name:
            raise FileRejected(
                f"unsafe member name in package ({len(name)} chars)", outcome=Outcome.REJECTED_UNSAFE_NAME
            )
        if info.flag_bits & 0x1:
            raise FileSkipped("the package is encrypted", outcome=Outcome.SKIPPED_ENCRYPTED)
        if info.file_size > limits.max_uncompressed:
            raise _bomb(f"an entry claims {info.file_size} bytes uncompressed")
        total += info.file_size
        if total > limits.max_uncompressed:
            raise _bomb(f"entries claim over {limits.max_uncompressed} bytes uncompressed")
        if info.file_size > 1024 * 1024 and info.file_size > limits.max_ratio * max(info.compress_size, 1):
            raise _bomb(f"compression ratio {info.file_size / max(info.compress_size, 1):.0f} exceeds the limit")
        spans.append((info.header_offset, info.header_offset + 30 + len(info.filename) + info.compress_size))
    spans.sort()
    for (_, end), (start, _) in pairwise(spans):
        if start < end:
            raise _bomb("archive entries overlap")
    for info in infos:
        if info.filename.endswith((".xml", ".rels")) and info.file_size:
            with zf.open(info) as fh:
                head = fh.read(4096).upper()
            if b"<!DOCTYPE" in head or b"<!ENTITY" in head:
                raise FileRejected("an XML part declares a DTD or entities", outcome=Outcome.REJECTED_XML_ENTITY)
