"""The bounds a file is read under, apart from the parsers: the composition root builds them without
loading a parser (`semfs ls` never imports one)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ArchiveLimits:
    """What a zipped container (OOXML, ODF, EPUB) may unpack to before it is refused as a bomb."""

    max_entries: int = 10_000
    max_uncompressed: int = 500 * 1024 * 1024
    max_ratio: float = 200.0


@dataclass(frozen=True)
class ExtractLimits:
    max_chars: int = 2_000_000
    max_blocks: int = 100_000
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)
    max_image_pixels: int = 80_000_000
    convert_timeout_s: float = 45.0
