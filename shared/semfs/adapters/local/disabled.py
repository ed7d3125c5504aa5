"""What runs where a feature is switched off or has no engine: adapters that do nothing, so the
pipeline calls every port the same way and never asks whether one is there."""

from __future__ import annotations

from collections.abc import Sequence

from semfs.domain.errors import PermanentError
from semfs.domain.outcomes import Outcome
from semfs.ports.ocr import OcrPage


class NoOcr:
    """No OCR engine (switched off, or Tesseract not installed): pages without a text layer stay
    unread and the file says so (``SKIPPED_NO_TEXT`` or ``OK_PARTIAL``). Extract never sends a page
    here; a stage that does gets ``FAILED_OCR``."""

    engine = "none"
    available = False
    document_jobs = False
    announces_jobs = False

    def recognise(self, image: bytes, page: int) -> OcrPage:
        raise PermanentError("no OCR engine is configured", outcome=Outcome.FAILED_OCR)

    def start_document(
        self, blob_key: str, mime_type: str, pages: int | None, request_token: str | None = None
    ) -> str | None:
        raise PermanentError("no OCR engine is configured", outcome=Outcome.FAILED_OCR)

    def poll_document(self, job_id: str) -> list[OcrPage] | None:
        raise PermanentError("no OCR engine is configured", outcome=Outcome.FAILED_OCR)


class NoReranking:
    """No reranker configured: it reorders the top none of the fused files, so the fused order stands."""

    top_n = 0

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        return [0.0] * len(documents)
