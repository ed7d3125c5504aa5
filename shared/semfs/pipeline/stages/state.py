"""The state passed between stages: ids, keys and flags only — never text or vectors (256 KiB cap)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    pass


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
    partial_reason: str | None = None  # what bound made the file OK_PARTIAL, and what was kept
    deadline: float | None = None  # epoch seconds by which extract + OCR of this file must be done
    enrich_fallback: bool = False
    # set by the state machine after Enrich timed out (UseExtraction): enrich by extraction, no model call
    enrich_extractive: bool = False
    # the file's attempt (FileRecord.attempt): a retry is a new payment, not the last attempt's cached result
    attempt: int = 0
    error: dict[str, Any] | None = None
