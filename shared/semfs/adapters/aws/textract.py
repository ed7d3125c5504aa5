"""``TextractOcr``: Amazon Textract through amazon-textract-caller.

Single images go to the synchronous ``DetectDocumentText``; PDFs and TIFFs stored in the bucket go
to the asynchronous ``StartDocumentTextDetection``, whose job the state machine polls (Wait → Ocr)
instead of a function waiting. Limits are checked before a call so nothing is sent that Textract
will refuse; throttling is retryable, every other failure ends the file with ``FAILED_OCR``.
"""

from __future__ import annotations

import io
from typing import Any

from semfs.config import Settings
from semfs.domain.errors import PermanentError
from semfs.domain.outcomes import Outcome
from semfs.ports.ocr import OcrPage

from .clients import client, error_code, is_retryable, retryable

SYNC_MAX_BYTES = 10 * 1024 * 1024  # DetectDocumentText: 10 MB for bytes input
ASYNC_MAX_BYTES = 500 * 1024 * 1024
ASYNC_MAX_PAGES = 3000
SYNC_FORMATS = {"PNG", "JPEG", "TIFF"}
ASYNC_TYPES = {"application/pdf", "image/tiff"}


def pages_from_blocks(blocks: list[dict[str, Any]], default_page: int = 1) -> list[OcrPage]:
    """LINE blocks → text per page; WORD confidences → the page's mean confidence (0..1)."""
    lines: dict[int, list[str]] = {}
    confs: dict[int, list[float]] = {}
    for block in blocks:
        page = int(block.get("Page", default_page))
        if block.get("BlockType") == "LINE":
            lines.setdefault(page, []).append(block.get("Text", ""))
        elif block.get("BlockType") == "WORD":
            confs.setdefault(page, []).append(float(block.get("Confidence", 0)) / 100)
    return [
        OcrPage(
            page=p,
            text="\n".join(lines.get(p, [])),
            confidence=sum(confs.get(p, [])) / len(confs[p]) if confs.get(p) else 0.0,
        )
        for p in sorted(set(lines) | set(confs))
    ]


class TextractOcr:
    """Ocr on Textract (see module docstring). The client is created on first use."""

    def __init__(self, settings: Settings, textract_client: Any = None, s3_client: Any = None) -> None:
        self._settings = settings
        self._client = textract_client
        self._s3_client = s3_client

    @property
    def engine(self) -> str:
        return "textract"

    @property
    def _textract(self) -> Any:
        if self._client is None:
            self._client = client(self._settings, "textract")
        return self._client

    def _fail(self, e: Exception, what: str) -> Exception:
        if is_retryable(e) or error_code(e) == "ProvisionedThroughputExceededException":
            return retryable(e, what)
        return PermanentError(f"{what}: {error_code(e) or type(e).__name__}", outcome=Outcome.FAILED_OCR)

    def recognise(self, image: bytes, page: int) -> OcrPage:
        from botocore.exceptions import BotoCoreError, ClientError
        from PIL import Image

        with Image.open(io.BytesIO(image)) as img:
            if img.format not in SYNC_FORMATS:  # e.g. WebP: Textract reads PNG, JPEG, TIFF only
                buf = io.BytesIO()
                img.convert("RGB").save(buf, format="PNG")
                image = buf.getvalue()
        if len(image) > SYNC_MAX_BYTES:
            raise PermanentError(f"page {page} is larger than Textract accepts", outcome=Outcome.FAILED_OCR)
        from textractcaller.t_call import call_textract

        try:
            response = call_textract(input_document=image, boto3_textract_client=self._textract)
        except (ClientError, BotoCoreError) as e:
            raise self._fail(e, "DetectDocumentText failed") from e
        found = pages_from_blocks(response.get("Blocks", []), default_page=page)
        return (
            OcrPage(page=page, text=found[0].text, confidence=found[0].confidence) if found else OcrPage(page, "", 0.0)
        )

    def start_document(
        self, blob_key: str, mime_type: str, pages: int | None, request_token: str | None = None
    ) -> str | None:
        from botocore.exceptions import BotoCoreError, ClientError

        if mime_type not in ASYNC_TYPES:
            return None  # single images: rendered frames go through recognise()
        if pages is not None and pages > ASYNC_MAX_PAGES:
            raise PermanentError(
                f"{pages} pages is more than Textract accepts ({ASYNC_MAX_PAGES})", outcome=Outcome.FAILED_OCR
            )
        s3 = self._s3_client or client(self._settings, "s3")
        head = s3.head_object(Bucket=self._settings.bucket, Key=blob_key)
        if head["ContentLength"] > ASYNC_MAX_BYTES:
            raise PermanentError("the document is larger than Textract accepts", outcome=Outcome.FAILED_OCR)
        from textractcaller.t_call import call_textract

        try:
            response = call_textract(
                input_document=f"s3://{self._settings.bucket}/{blob_key}",
                force_async_api=True,
                return_job_id=True,
                client_request_token=request_token or "",  # Textract's idempotency: the same job again
                boto3_textract_client=self._textract,
            )
        except (ClientError, BotoCoreError) as e:
            raise self._fail(e, "StartDocumentTextDetection failed") from e
        return str(response["JobId"])

    def poll_document(self, job_id: str) -> list[OcrPage] | None:
        from botocore.exceptions import BotoCoreError, ClientError

        blocks: list[dict[str, Any]] = []
        token: str | None = None
        try:
            while True:
                kwargs: dict[str, Any] = {"JobId": job_id, "MaxResults": 1000}
                if token:
                    kwargs["NextToken"] = token
                response = self._textract.get_document_text_detection(**kwargs)
                status = response["JobStatus"]
                if status == "IN_PROGRESS":
                    return None
                if status not in ("SUCCEEDED", "PARTIAL_SUCCESS"):
                    reason = response.get("StatusMessage", status)
                    raise PermanentError(f"Textract job failed: {reason}"[:200], outcome=Outcome.FAILED_OCR)
                blocks += response.get("Blocks", [])
                token = response.get("NextToken")
                if not token:
                    return pages_from_blocks(blocks)
        except (ClientError, BotoCoreError) as e:
            raise self._fail(e, "GetDocumentTextDetection failed") from e
