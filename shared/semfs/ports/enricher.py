from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from semfs.domain.models import Enrichment, ExtractedDocument


@dataclass(frozen=True)
class EnrichInput:
    """What an enricher sees: the document as data, plus context it must not obey."""

    document: ExtractedDocument
    filename: str
    existing_tags: list[str] = field(default_factory=list)
    # where the file came from (``FileRecord.came_from``: a path, a bucket key), "" when unknown: the folder
    # says whose "README" or "Copyright" a file is
    came_from: str = ""


class Enricher(Protocol):
    """Title, a 2–3 sentence summary and 5–10 auto-tags for a document."""

    def enrich(self, item: EnrichInput) -> Enrichment:
        """Enrich one document. Output is validated (length caps, NFKC, tag slugs, no URLs).
        Raises ``EnrichmentFailed`` (retryable) when the model cannot answer; the pipeline then
        falls back to the extractive enricher with ``OK_ENRICH_FALLBACK``."""
        ...
