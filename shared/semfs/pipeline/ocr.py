"""Ocr: text for the pages without a text layer (the OCR issue brings the engines)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.domain.errors import PermanentError
from semfs.domain.outcomes import Outcome, Status
from semfs.pipeline.stage import stage
from semfs.pipeline.state import PipelineState

if TYPE_CHECKING:
    from semfs.bootstrap import Container


def run(state: PipelineState, c: Container) -> PipelineState:
    """OCR ``state.ocr_pages``. Without an OCR engine the file fails with ``FAILED_OCR``."""
    with stage("ocr", state, c, Status.OCR):
        if c.ocr is None:
            raise PermanentError("no OCR engine is configured", outcome=Outcome.FAILED_OCR)
        raise PermanentError("OCR of stored pages is not available in this build", outcome=Outcome.FAILED_OCR)
