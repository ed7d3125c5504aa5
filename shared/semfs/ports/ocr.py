from __future__ import annotations

from typing import Protocol


class Ocr(Protocol):
    """Text from page images (Textract in AWS, Tesseract locally). Arrives with the OCR issue."""

    def recognise(self, image: bytes, language: str = "eng") -> tuple[str, float]:
        """The text of one page image and its mean confidence (0–1). Raises ``PermanentError``
        (``FAILED_OCR``) for an unreadable image, ``RetryableError`` when throttled."""
        ...
