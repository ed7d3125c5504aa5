"""``TextractOcr``: Amazon Textract through boto3 (two calls: a convenience wrapper was not worth its
four packages in the Lambda layer).

Single images go to the synchronous ``DetectDocumentText``; PDFs and TIFFs stored in the bucket go
to the asynchronous ``StartDocumentTextDetection``. With a notification topic configured (the template
does), Textract announces the job's end there and the execution waits for that notice; without one, the
state machine polls (Wait → Ocr). Either way no function is held while the job runs. Limits are
checked before a call so nothing is sent that Textract will refuse; throttling is retryable, every
other failure ends the file with ``FAILED_OCR``.
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


class PageTexts:
    """Text per page, gathered block by block: a response's blocks (with their geometry, most of their
    size) are dropped once read, so a 3,000-page job holds its text, never all its blocks at once."""

    def __init__(self, default_page: int = 1) -> None:
        self._default = default_page
        self._lines: dict[int, list[str]] = {}
        self._confidence: dict[int, tuple[float, int]] = {}  # page → (sum, count) of WORD confidences

    def add(self, blocks: list[dict[str, Any]]) -> None:
        for block in blocks:
            page = int(block.get("Page", self._default))
            if block.get("BlockType") == "LINE":
                self._lines.setdefault(page, []).append(block.get("Text", ""))
            elif block.get("BlockType") == "WORD":
                total, n = self._confidence.get(page, (0.0, 0))
                self._confidence[page] = (total + float(block.get("Confidence", 0)) / 100, n + 1)

    def pages(self) -> list[OcrPage]:
        def mean(p: int) -> float:
            total, n = self._confidence.get(p, (0.0, 0))
            return total / n if n else 0.0

        return [
            OcrPage(page=p, text="\n".join(self._lines.get(p, [])), confidence=mean(p))
            for p in sorted(set(self._lines) | set(self._confidence))
        ]


def pages_from_blocks(blocks: list[dict[str, Any]], default_page: int = 1) -> list[OcrPage]:
    """LINE blocks → text per page; WORD confidences → the page's mean confidence (0..1)."""
    texts = PageTexts(default_page)
    texts.add(blocks)
    return texts.pages()


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

    @property
    def available(self) -> bool:
        return True

    @property
    def document_jobs(self) -> bool:
        return True  # PDFs and TIFFs in the bucket (images go to recognise)

    @property
    def announces_jobs(self) -> bool:
        return bool(self._settings.ocr.textract_topic_arn and self._settings.ocr.textract_role_arn)

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
        try:
            response = self._textract.detect_document_text(Document={"Bytes": image})
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
        head = s3.head_object(Bucket=self._settings.aws.bucket, Key=blob_key)
        if head["ContentLength"] > ASYNC_MAX_BYTES:
            raise PermanentError("the document is larger than Textract accepts", outcome=Outcome.FAILED_OCR)
        request: dict[str, Any] = {
            "DocumentLocation": {"S3Object": {"Bucket": self._settings.aws.bucket, "Name": blob_key}}
        }
        if request_token:
            request["ClientRequestToken"] = request_token  # Textract's idempotency: the same job again
        if self.announces_jobs:  # the job's end is published to the topic, as the template's role
            request["NotificationChannel"] = {
                "SNSTopicArn": self._settings.ocr.textract_topic_arn,
                "RoleArn": self._settings.ocr.textract_role_arn,
            }
        try:
            response = self._textract.start_document_text_detection(**request)
        except (ClientError, BotoCoreError) as e:
            raise self._fail(e, "StartDocumentTextDetection failed") from e
        return str(response["JobId"])

    def poll_document(self, job_id: str) -> list[OcrPage] | None:
        from botocore.exceptions import BotoCoreError, ClientError

        texts = PageTexts()
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
                texts.add(response.get("Blocks", []))
                token = response.get("NextToken")
                del response  # this page of results is read: let it go before the next is fetched
                if not token:
                    return texts.pages()
        except (ClientError, BotoCoreError) as e:
            raise self._fail(e, "GetDocumentTextDetection failed") from e
