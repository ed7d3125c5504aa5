"""The bounds a file is read under, apart from the parsers: the composition root builds them without
loading a parser (`semfs ls` never imports one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from semfs.config import IngestLimits


@dataclass(frozen=True)
class ArchiveLimits:
    """What a zipped container (OOXML, ODF, EPUB) may unpack to before it is refused as a bomb."""

    max_entries: int = 10_000
    max_uncompressed: int = 500 * 1024 * 1024
    max_ratio: float = 200.0
    # a bundle (zip, tar, TNEF, a PDF's attachments: ``bundles.py``): its members, each, and how deep
    max_members: int = 1_000
    max_member: int = 50 * 1024 * 1024
    max_depth: int = 3


@dataclass(frozen=True)
class ExtractLimits:
    max_chars: int = 2_000_000
    # a table (CSV, TSV) is kept whole up to the file-size limit: every row is found by its words, the rows
    # past the embedding cap by keyword only (issue 53.5)
    max_table_chars: int = 50 * 1024 * 1024
    # a workbook read whole stops taking rows after this much CPU in the worker (half its wall clock), so a
    # large one ends OK_PARTIAL with the rows read, not FAILED_TIMEOUT with none
    table_cpu_s: float | None = 30.0
    max_blocks: int = 100_000
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)
    max_image_pixels: int = 80_000_000
    convert_timeout_s: float = 45.0


def archive_limits(limits: IngestLimits) -> ArchiveLimits:
    """The archive and bundle bounds the settings give (the extractors and the intake's unpacking share them)."""
    return ArchiveLimits(
        max_entries=limits.max_archive_entries,
        max_uncompressed=int(limits.max_archive_uncompressed_mb * 1024 * 1024),
        max_ratio=limits.max_archive_ratio,
        max_members=limits.max_bundle_members,
        max_member=limits.max_file_bytes,
        max_depth=limits.max_bundle_depth,
    )
