"""The state passed between stages: ids, keys and flags only — never text or vectors (256 KiB cap)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from semfs.domain.errors import NotFound
from semfs.domain.models import ExtractedDocument, FileRecord

if TYPE_CHECKING:
    from semfs.ports import Container


class PipelineState(BaseModel):
    model_config = ConfigDict(extra="allow")

    tenant_id: str
    file_id: str
    needs_ocr: bool = False
    ocr_pages: list[int] = Field(default_factory=list)
    ocr_done: bool = True
    ocr_job_id: str | None = None
    ocr_polls: int = 0
    ocr_wait_seconds: int = 0
    ocr_job_pages: list[int] = Field(default_factory=list)  # the job read these pages, cut out, in this order
    ocr_notice: bool = False  # the job announces its end: wait for the notice (for at most ocr_wait_seconds)
    partial: bool = False
    deadline: float | None = None  # epoch seconds by which extract + OCR of this file must be done
    enrich_fallback: bool = False
    error: dict[str, Any] | None = None


def derived_key(tenant_id: str, file_id: str, name: str) -> str:
    """Deterministic keys for stage artifacts, under a prefix that triggers nothing."""
    return f"derived/{tenant_id}/{file_id}/{name}"


def content_key(tenant_id: str, sha256: str) -> str:
    """Content-addressed original bytes: identical bytes in a tenant are stored once."""
    return f"content/{tenant_id}/{sha256[:2]}/{sha256}"


def load_document(c: Container, record: FileRecord) -> ExtractedDocument:
    """The stored extraction of ``record`` (``NotFound`` before Extract has written it)."""
    if record.text_key is None:
        raise NotFound(f"file {record.file_id} has no extracted text")
    return ExtractedDocument.model_validate_json(c.blobs.get(record.text_key))
