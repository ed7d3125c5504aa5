"""PDF text layer per page with pypdfium2. Pages without a usable text layer are reported for OCR."""

from __future__ import annotations

from semfs.domain.errors import FileSkipped, ParseFailed
from semfs.domain.models import Block, ExtractedDocument, Location
from semfs.domain.outcomes import Outcome
from semfs.domain.text import normalise

MIN_PAGE_CHARS = 16  # fewer visible characters than this: the page has no usable text layer

# pdfium's FPDF_GetLastError codes
_ERR_PASSWORD = 4
_ERR_SECURITY = 5


def extract_pdf(data: bytes, max_chars: int) -> tuple[ExtractedDocument, list[int]]:
    """The document and the 1-based numbers of pages that need OCR."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as e:
        code = getattr(e, "err_code", None)
        if code in (_ERR_PASSWORD, _ERR_SECURITY):
            raise FileSkipped("the PDF is password-protected", outcome=Outcome.SKIPPED_ENCRYPTED) from e
        raise ParseFailed("the PDF cannot be opened (corrupt or truncated)") from e
    try:
        meta = pdf.get_metadata_dict(skip_empty=True)
        title = (meta.get("Title") or "").strip() or None
        blocks: list[Block] = []
        needs_ocr: list[int] = []
        total = 0
        truncated = False
        for i in range(len(pdf)):
            try:
                page = pdf[i]
            except pdfium.PdfiumError as e:  # a broken page tree (a cycle, a missing page object)
                raise ParseFailed(f"page {i + 1} of the PDF cannot be read (broken page tree)") from e
            textpage = page.get_textpage()
            try:
                text = normalise(textpage.get_text_range())
            finally:
                textpage.close()
                page.close()
            if sum(1 for ch in text if not ch.isspace()) < MIN_PAGE_CHARS:
                needs_ocr.append(i + 1)
                continue
            if total + len(text) > max_chars:
                text = text[: max(0, max_chars - total)]
                truncated = True
            total += len(text)
            if text:
                blocks.append(Block(text=text, location=Location(page=i + 1)))
            if truncated:
                break
        return ExtractedDocument(blocks=blocks, title=title, pages=len(pdf), truncated=truncated), needs_ocr
    finally:
        pdf.close()
