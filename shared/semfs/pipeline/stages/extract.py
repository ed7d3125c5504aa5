"""Extract: original bytes → ``ExtractedDocument`` blob (bounded subprocess), or an outcome code."""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from semfs.domain.errors import FileSkipped
from semfs.domain.outcomes import Outcome, Status
from semfs.pipeline.documents import derived_key
from semfs.pipeline.stages.state import PipelineState
from semfs.pipeline.stages.unit_of_work import stage

if TYPE_CHECKING:
    from semfs.ports import Container


def run(state: PipelineState, c: Container) -> PipelineState:
    """Extract the file's text and structure; decide whether OCR is needed."""
    deadline = state.deadline or time.time() + c.settings.limits.file_budget_s
    with stage("extract", state, c) as work:
        record = work.record
        data = c.blobs.get(record.blob_key)
        out = c.extractor.extract(data, record.filename)
        doc = out.document
        ocr_pages = out.ocr_pages if c.ocr.available else []
        partial, reason = doc.truncated, doc.truncated_by
        if len(ocr_pages) > c.settings.ocr.max_pages:  # OCR the first pages, say the file is partial
            wanted, cap = len(ocr_pages), c.settings.ocr.max_pages
            ocr_pages, partial = ocr_pages[:cap], True
            reason = reason or f"the first {cap:,} of {wanted:,} pages without text were OCR'd (SEMFS_OCR_MAX_PAGES)"
        if out.ocr_pages and not c.ocr.available:
            if not doc.blocks:
                reason = (
                    "no text layer, and OCR is not enabled"
                    if out.kind != "image"
                    else "an image, and OCR is not enabled"
                )
                raise FileSkipped(reason, outcome=Outcome.SKIPPED_NO_TEXT)
            partial = True  # some pages had no text layer and were not OCR'd
            reason = reason or f"{len(out.ocr_pages):,} pages without a text layer were not read (OCR is off)"
        if not doc.blocks and not ocr_pages:
            raise FileSkipped("no text found in the file", outcome=Outcome.SKIPPED_NO_TEXT)
        text_key = derived_key(record.tenant_id, record.file_id, "document.json")
        c.blobs.put(text_key, doc.model_dump_json().encode("utf-8"))
        work.set(
            mime_type=out.mime_type,
            pages=doc.pages,
            text_key=text_key,
            extraction=doc.extraction,
            document_date=doc.document_date or _message_date(record.provenance),
        )
        work.next_status = Status.OCR if ocr_pages else Status.ENRICHING
    return state.model_copy(
        update={
            "needs_ocr": bool(ocr_pages),
            "ocr_pages": ocr_pages,
            "partial": partial,
            "partial_reason": reason if partial else None,
            "ocr_done": not ocr_pages,
            "deadline": deadline,
        }
    )


def _message_date(provenance: dict[str, Any]) -> datetime | None:
    """A mail attachment without a date of its own is dated by its message's ``Date:``."""
    raw = provenance.get("extra", {}).get("received_at") or provenance.get("received_at")
    try:
        return datetime.fromisoformat(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
