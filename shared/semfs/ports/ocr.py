from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class OcrPage:
    page: int  # 1-based
    text: str
    confidence: float  # mean word confidence, 0..1


class Ocr(Protocol):
    """Text from pages without a text layer (Textract in AWS, Tesseract locally)."""

    @property
    def engine(self) -> str:
        """The engine's name, recorded on the file."""
        ...

    @property
    def available(self) -> bool:
        """Whether there is an engine at all (false only for ``NoOcr``: pages without text stay unread)."""
        ...

    @property
    def document_jobs(self) -> bool:
        """Whether this engine reads stored documents as jobs (``start_document``) rather than page images."""
        ...

    @property
    def announces_jobs(self) -> bool:
        """Whether a document job announces its end (Textract with a notification topic): the
        execution then waits for that notice instead of polling on a timer."""
        ...

    def recognise(self, image: bytes, page: int) -> OcrPage:
        """OCR one page image (PNG/JPEG/TIFF bytes) synchronously. Raises ``PermanentError``
        (``FAILED_OCR``) for an image it cannot read, ``RetryableError`` when throttled."""
        ...

    def start_document(
        self, blob_key: str, mime_type: str, pages: int | None, request_token: str | None = None
    ) -> str | None:
        """Start an asynchronous job over a whole stored document (PDF/TIFF) of ``pages`` pages and
        return its id, or ``None`` when this engine works page by page (the caller then renders and
        ``recognise``s). The same ``request_token`` returns the same job instead of starting (and
        paying for) a second one: a retried stage passes the file's attempt. Raises ``PermanentError``
        (``FAILED_OCR``) for a document over its limits."""
        ...

    def poll_document(self, job_id: str) -> list[OcrPage] | None:
        """The pages of a finished job, ``None`` while it runs. Raises ``PermanentError``
        (``FAILED_OCR``) for a failed job, ``RetryableError`` when throttled."""
        ...
