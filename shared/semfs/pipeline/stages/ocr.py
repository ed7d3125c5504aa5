"""Ocr: text for the pages without a text layer, merged into the document page by page.

Engines that work page by page (Tesseract) get pages rendered in the bounded worker; engines with
document jobs (Textract's async API) are started here, and the state machine waits for the job without
holding a function: for the job's end notice (``WaitForOcrNotice``, resumed through ``job_waiting`` and
``job_ended``) when the engine announces its jobs, on a timer (``WaitForOcr``) when it does not. Either
wait ends in Ocr again, which reads the finished job; a notice that never comes is a timeout, after
which Ocr looks once and waits again.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING

from semfs.domain.errors import FileSkipped, PermanentError
from semfs.domain.models import Block, Location
from semfs.domain.outcomes import Outcome, Status
from semfs.domain.text import normalise_ocr
from semfs.observability import get_logger
from semfs.pipeline.documents import derived_key, load_document
from semfs.pipeline.stages.state import PipelineState
from semfs.pipeline.stages.unit_of_work import Work, stage
from semfs.ports.ocr import OcrPage

if TYPE_CHECKING:
    from semfs.domain.models import FileRecord
    from semfs.ports import Container
log = get_logger(__name__)


RENDER_BATCH = 4  # pages rendered per worker call: bounded memory at 300 dpi


def run(state: PipelineState, c: Container) -> PipelineState:
    """Start, poll or run OCR for ``state.ocr_pages``; when the text is in, merge it and go on."""
    out_of_time = False
    with stage("ocr", state, c) as work:
        record = work.record
        wanted = set(state.ocr_pages)
        if state.ocr_job_id:
            if state.ocr_polls >= c.settings.ocr.max_polls:
                raise PermanentError("the OCR job did not finish in time", outcome=Outcome.FAILED_TIMEOUT)
            polled = c.ocr.poll_document(state.ocr_job_id)
            if polled is None:
                return state.model_copy(update={**_waiting(c), "ocr_polls": state.ocr_polls + 1})
            if state.ocr_job_pages:  # the job read only the pages that need OCR: its page n is the nth of them
                cut = state.ocr_job_pages
                polled = [replace(p, page=cut[p.page - 1]) for p in polled if 1 <= p.page <= len(cut)]
            pages = [p for p in polled if p.page in wanted]
        else:
            # a retried Ocr task (a timeout, a throttled poll) gets the job it already started
            token = f"{record.file_id}-a{record.attempt}"
            key, count, cut = _job_document(c, record, sorted(wanted))
            job = c.ocr.start_document(key, record.mime_type, count, request_token=token)
            if job is not None:
                update = {**_waiting(c), "ocr_job_id": job, "ocr_polls": 0, "ocr_job_pages": cut}
                return state.model_copy(update=update)
            kind = "pdf" if record.mime_type == "application/pdf" else "image"
            data = c.blobs.get(record.blob_key)
            pages = []
            numbers = sorted(wanted)
            for i in range(0, len(numbers), RENDER_BATCH):
                if state.deadline is not None and time.time() > state.deadline:
                    # one wall-clock budget per file across extract + OCR: keep what is read, say partial
                    log.warning("ocr stopped at the file's time budget", file_id=record.file_id, pages=len(pages))
                    out_of_time = True
                    break
                for number, image in c.extractor.render(data, kind, numbers[i : i + RENDER_BATCH], c.settings.ocr.dpi):
                    pages.append(c.ocr.recognise(image, number))
        merge(c, work, pages, out_of_time)
        work.next_status = Status.ENRICHING
    update = {"ocr_done": True, "ocr_job_id": None, "ocr_wait_seconds": 0, "ocr_notice": False, "ocr_job_pages": []}
    reason = state.partial_reason
    if out_of_time and not reason:
        budget = c.settings.limits.file_budget_s
        reason = f"OCR stopped at the file's time budget of {budget:.0f} s; the pages read by then are kept"
    return state.model_copy(update={**update, "partial": state.partial or out_of_time, "partial_reason": reason})


def _job_document(c: Container, record: FileRecord, numbers: list[int]) -> tuple[str, int | None, list[int]]:
    """What a document job reads: the stored file, or — a PDF whose other pages have a text layer — those
    pages cut into a PDF of their own, so Textract reads and bills 3 pages of a 300-page report, not 300.
    Returns (blob key, its pages, the original number of each of its pages; empty when uncut)."""
    whole = record.pages is not None and len(numbers) >= record.pages
    if not c.ocr.document_jobs or record.mime_type != "application/pdf" or whole or not numbers:
        return record.blob_key, record.pages, []
    key = derived_key(record.tenant_id, record.file_id, "ocr-pages.pdf")
    c.blobs.put(key, c.extractor.pdf_pages(c.blobs.get(record.blob_key), numbers))
    return key, len(numbers), numbers


def _waiting(c: Container) -> dict[str, object]:
    """What the state machine's wait for a running job reads: the notice, or the timer."""
    notice = c.ocr.announces_jobs
    seconds = c.settings.ocr.notice_timeout_s if notice else c.settings.ocr.poll_seconds
    return {"ocr_done": False, "ocr_notice": notice, "ocr_wait_seconds": seconds}


def job_waiting(c: Container, job_id: str, token: str) -> None:
    """``WaitForOcrNotice``: the execution's task token waits for the job's end (resumed at once when
    the notice came first)."""
    resumed = c.job_waits.wait(job_id, token)
    log.info("ocr job waited on", job_id=job_id, already_ended=resumed)


def job_ended(c: Container, job_id: str, status: str) -> None:
    """Textract's notice that a job ended (whatever its status: Ocr reads the job and says what became
    of the file): the waiting execution goes on."""
    resumed = c.job_waits.ended(job_id)
    log.info("ocr job ended", job_id=job_id, status=status, resumed=resumed)


def merge(c: Container, work: Work, pages: list[OcrPage], out_of_time: bool = False) -> None:
    """Insert the OCR'd pages into the stored document in page order and record engine + confidence."""
    record = work.record
    doc = load_document(c, record)
    found = [p for p in pages if p.text.strip()]
    new_blocks = [Block(text=normalise_ocr(p.text), location=Location(page=p.page)) for p in found]
    if not doc.blocks and not new_blocks:
        if out_of_time:
            reason = f"the file's time budget ({c.settings.limits.file_budget_s:g} s) ran out before OCR found text"
            raise PermanentError(reason, outcome=Outcome.FAILED_TIMEOUT)
        raise FileSkipped("OCR found no text", outcome=Outcome.SKIPPED_NO_TEXT)
    blocks = sorted([*doc.blocks, *new_blocks], key=lambda b: b.location.page or 0)
    extraction = "ocr" if not doc.blocks else "mixed"
    merged = doc.model_copy(update={"blocks": blocks, "extraction": extraction})
    assert record.text_key is not None
    c.blobs.put(record.text_key, merged.model_dump_json().encode("utf-8"))
    confidence = round(sum(p.confidence for p in found) / len(found), 4) if found else None
    work.set(
        extraction=extraction,
        ocr_engine=c.ocr.engine,
        ocr_confidence=confidence,
        ocr_low_confidence=confidence is not None and confidence < c.settings.ocr.min_confidence,
    )
