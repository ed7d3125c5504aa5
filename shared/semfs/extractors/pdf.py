"""PDF text layer per page with pypdfium2. Pages without a usable text layer are reported for OCR."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from semfs.domain.errors import FileSkipped, ParseFailed
from semfs.domain.models import Block, ExtractedDocument, Location
from semfs.domain.outcomes import Outcome
from semfs.domain.text import normalise

MIN_PAGE_CHARS = 16  # fewer visible characters than this: the page has no usable text layer
# a picture over most of the page with no more text than a stamp (a DocuSign id, a Bates number, a scanner's
# footer) is a scan with a stamp on it: OCR'd, the stamp kept beside the OCR's text
SCAN_COVERAGE = 0.5
MAX_STAMP_CHARS = 200

# pdfium's FPDF_GetLastError codes
_ERR_PASSWORD = 4
_ERR_SECURITY = 5


_PDF_DATE = re.compile(r"D:(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+-])?(\d{2})?'?(\d{2})?")


def pdf_date(value: str) -> datetime | None:
    """A PDF date string (``D:20240115103000+01'00'``, fields after the year optional) as an aware datetime."""
    m = _PDF_DATE.match(value.strip())
    if m is None:
        return None
    year, month, day, hour, minute, second, sign, tz_h, tz_m = m.groups()
    offset = timedelta(hours=int(tz_h or 0), minutes=int(tz_m or 0))
    tz = timezone(-offset if sign == "-" else offset) if sign in ("+", "-") else UTC
    try:
        return datetime(
            int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0), int(second or 0), tzinfo=tz
        )
    except ValueError:  # month 13, day 0: a date the producer got wrong is no date
        return None


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
        dated = pdf_date(meta.get("ModDate") or "") or pdf_date(meta.get("CreationDate") or "")
        pages = _Pages(data, max_chars)
        for i in range(len(pdf)):
            if pages.read(pdf, i):
                break
        blocks = pages.blocks
        has_form = pdfium.raw.FPDF_GetFormType(pdf.raw) != pdfium.raw.FORMTYPE_NONE
        form = _form_values(pages.readers, data) if has_form else ""  # (no form: pypdf never parses the file)
        if form:
            blocks.append(Block(kind="notes", text=form, location=Location(page=1)))
        outline = [t for t in _outline(pdf) if t not in "\n".join(b.text for b in blocks[:50])]
        if outline:
            blocks.insert(0, Block(kind="notes", text="Contents: " + " · ".join(outline), location=Location(page=1)))
        truncated = pages.truncated
        doc = ExtractedDocument(blocks=blocks, title=title, pages=len(pdf), truncated=truncated, document_date=dated)
        return doc, pages.needs_ocr
    finally:
        pdf.close()


class _Pages:
    """The pages of a PDF read one by one: their text and annotations, the pages a scan needs OCR for."""

    def __init__(self, data: bytes, max_chars: int) -> None:
        self.data = data
        self.left = max_chars
        self.blocks: list[Block] = []
        self.readers: dict[str, Any] = {}  # pypdf's reading of the file, made once if a page needs it
        self.needs_ocr: list[int] = []
        self.truncated = False

    def read(self, pdf: Any, i: int) -> bool:
        """Read page ``i`` (0-based); True when the character budget is spent."""
        import pypdfium2 as pdfium

        try:
            page = pdf[i]
        except pdfium.PdfiumError as e:  # a broken page tree (a cycle, a missing page object)
            raise ParseFailed(f"page {i + 1} of the PDF cannot be read (broken page tree)") from e
        textpage = page.get_textpage()
        try:
            text = _scripts_apart(normalise(_glyphs_in_logical_order(textpage, textpage.get_text_range())))
            notes = _annotations(page)
            coverage = _image_coverage(page)
        finally:
            textpage.close()
            page.close()
        if notes:
            self.blocks.append(Block(kind="notes", text=notes, location=Location(page=i + 1)))
        if _letter_spaced(text):
            text = _respaced(self.readers, self.data, i) or text
        if _scanned(text, coverage):
            # no text, or little text over a picture: a scan (a text layer it has is kept beside the OCR);
            # a few words and nothing else ("Signed.") are the page's real text and stay as they are
            self.needs_ocr.append(i + 1)
        if len(text) > self.left:
            text, self.truncated = text[: self.left], True
        self.left -= len(text)
        if text.strip():
            self.blocks.append(Block(text=text, location=Location(page=i + 1)))
        return self.truncated


def _scanned(text: str, coverage: float) -> bool:
    visible = sum(1 for ch in text if not ch.isspace())
    return (visible < MIN_PAGE_CHARS and (coverage > 0 or not text.strip())) or (
        coverage >= SCAN_COVERAGE and visible < MAX_STAMP_CHARS
    )


def _annotations(page: object) -> str:
    """The text of a page's annotations (comments, notes, free text, popups) as a reader sees it."""
    import ctypes

    from pypdfium2 import raw

    lines: list[str] = []
    handle = page.raw  # type: ignore[attr-defined]
    for i in range(min(raw.FPDFPage_GetAnnotCount(handle), 500)):
        annot = raw.FPDFPage_GetAnnot(handle, i)
        if not annot:
            continue
        try:
            for key in (b"Contents", b"RC"):
                size = raw.FPDFAnnot_GetStringValue(annot, key, None, 0)
                if size <= 2:
                    continue
                buf = ctypes.create_string_buffer(size)
                raw.FPDFAnnot_GetStringValue(annot, key, ctypes.cast(buf, ctypes.POINTER(raw.FPDF_WCHAR)), size)
                text = buf.raw[: size - 2].decode("utf-16-le", errors="replace")
                if key == b"RC":  # rich text: XHTML
                    text = re.sub(r"<[^>]+>", " ", text)
                text = normalise(text)
                if text and text not in lines:
                    lines.append(text)
                    break
        finally:
            raw.FPDFPage_CloseAnnot(annot)
    return "\n".join(f"Annotation: {line}" for line in lines)


def _image_coverage(page: object) -> float:
    """The share of the page its pictures cover (image and form objects' bounding boxes, summed, at most
    1); a picture whose bounds cannot be read counts as a small one."""
    import ctypes

    from pypdfium2 import raw

    handle = page.raw  # type: ignore[attr-defined]
    width, height = page.get_size()  # type: ignore[attr-defined]
    area = max(width * height, 1.0)
    covered = 0.0
    for i in range(min(raw.FPDFPage_CountObjects(handle), 2000)):
        obj = raw.FPDFPage_GetObject(handle, i)
        if raw.FPDFPageObj_GetType(obj) not in (raw.FPDF_PAGEOBJ_IMAGE, raw.FPDF_PAGEOBJ_FORM):
            continue
        left, bottom, right, top = (ctypes.c_float() for _ in range(4))
        if raw.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            box = max(0.0, min(right.value, width) - max(left.value, 0.0)) * max(
                0.0, min(top.value, height) - max(bottom.value, 0.0)
            )
            covered += box / area
        else:
            covered += 0.01
        if covered >= 1:
            return 1.0
    return covered


# letters of the right-to-left scripts: Hebrew, Arabic (with its supplements and presentation forms)
_RTL_LETTERS = "\u0590-\u05ff\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb1d-\ufdff\ufe70-\ufeff"
_RTL = re.compile(f"[{_RTL_LETTERS}]")
_LATIN = "A-Za-z0-9\u00c0-\u024f"
_SCRIPT_BOUNDARY = re.compile(f"(?<=[{_RTL_LETTERS}])(?=[{_LATIN}])|(?<=[{_LATIN}])(?=[{_RTL_LETTERS}])")


def _glyphs_in_logical_order(textpage: Any, text: str) -> str:
    """A right-to-left page's text with each glyph's own characters back in their order.

    pdfium puts a right-to-left run into reading order by reversing its characters, and with them the two a
    ligature glyph stands for: Arabic's lam-alef (لا, لإ) came out alef-lam, so 'خلال' read 'خالل' and
    'الإنتاجية' 'اإلنتاجية', words no one types. The characters of one glyph share its box exactly; such a
    run of right-to-left letters is turned back. Pages without those scripts are not looked at."""
    if not _RTL.search(text):
        return text
    import ctypes

    import pypdfium2.raw as pdfium_c

    if pdfium_c.FPDFText_CountChars(textpage.raw) != len(text):
        return text  # a character outside the BMP: indices and characters no longer line up
    edges = [ctypes.c_double() for _ in range(4)]

    def box(index: int) -> tuple[float, ...]:
        pdfium_c.FPDFText_GetCharBox(textpage.raw, index, *edges)
        return tuple(e.value for e in edges)

    return logical_glyph_runs(text, box)


def logical_glyph_runs(text: str, box: Callable[[int], tuple[float, ...]]) -> str:
    """``text`` with every run of right-to-left letters that share one glyph box (``box(i)``) reversed."""
    chars = list(text)
    i, n = 0, len(chars)
    while i < n - 1:
        if not (_RTL.match(chars[i]) and _RTL.match(chars[i + 1])):
            i += 1
            continue
        first = box(i)
        end = i + 1
        while end < n and _RTL.match(chars[end]) and box(end) == first:
            end += 1
        if end - i > 1:
            chars[i:end] = chars[i:end][::-1]
        i = end if end - i > 1 else i + 1
    return "".join(chars)


def _scripts_apart(text: str) -> str:
    """A Latin word set beside an Arabic or Hebrew one is a word of its own: a right-to-left line's space
    can sit at the other end of the Latin run once laid out ('R و Python' read 'وPython')."""
    return _SCRIPT_BOUNDARY.sub(" ", text) if _RTL.search(text) else text


def _letter_spaced(text: str) -> bool:
    """Text set with a gap after every glyph ("H e r e i s"), which pdfium reads as one-letter words:
    most of its words are single characters."""
    words = text.split()
    return len(words) >= 12 and sum(1 for w in words if len(w) == 1) > 0.6 * len(words)


def _respaced(readers: dict[str, Any], data: bytes, index: int) -> str | None:
    """The page's text through pypdf, which keeps a wider gap between words than between letters
    ("H e r e  i s"): letters joined, words kept. ``None`` when it does not tell the two apart."""
    try:
        raw = _pypdf(readers, data).pages[index].extract_text() or ""
    except Exception:  # pypdf raises many types for a damaged page: pdfium's reading stands
        return None
    if "  " not in raw:
        return None
    lines = []
    for line in raw.splitlines():
        words = [w.replace(" ", "") for w in re.split(r" {2,}", line.strip())]
        lines.append(" ".join(w for w in words if w))
    joined = normalise("\n".join(lines))
    return joined if joined and not _letter_spaced(joined) else None


MAX_FORM_FIELDS = 2000


def _pypdf(readers: dict[str, Any], data: bytes) -> Any:
    """pypdf's reading of the file, made once for every page and the form that need it."""
    import io

    from pypdf import PdfReader

    if "pdf" not in readers:
        readers["pdf"] = PdfReader(io.BytesIO(data))
    return readers["pdf"]


def _form_values(readers: dict[str, Any], data: bytes) -> str:
    """What a filled form says: each field's name and value (``Claimant: Jane Okafor``), checked boxes by
    name. pdfium's text layer has none of them (a widget's value is drawn by its appearance, not as
    page text): a filled form showed 1 of its 4 values. Read with pypdf; a broken form costs the form."""
    try:
        fields = _pypdf(readers, data).get_fields() or {}
    except Exception:  # pypdf raises many types for a damaged form
        return ""
    lines: list[str] = []
    for name, field in list(fields.items())[:MAX_FORM_FIELDS]:
        value = field.get("/V")
        if value is None:
            continue
        values = value if isinstance(value, list) else [value]
        shown = []
        for v in values:
            text = str(v)
            if text.startswith("/"):  # a button's state: /Yes, /On, or its own export name; /Off is unchecked
                text = "" if text in ("/Off", "/") else ("yes" if text in ("/Yes", "/On") else text[1:])
            text = normalise(text)[:2000]
            if text:
                shown.append(text)
        label = normalise(str(field.get("/TU") or name))[:200]
        if shown:
            lines.append(f"{label}: {', '.join(shown)}")
    return "Form: " + " · ".join(lines) if lines else ""


def _outline(pdf: object) -> list[str]:
    """Bookmark titles (at most 500)."""
    titles: list[str] = []
    try:
        for item in pdf.get_toc(max_depth=8):  # type: ignore[attr-defined]
            title = normalise(item.get_title() or "")
            if title:
                titles.append(title)
            if len(titles) >= 500:
                break
    except Exception:  # a broken outline costs the outline, not the document
        return titles
    return titles


def pdf_pages(data: bytes, pages: list[int]) -> bytes:
    """A PDF of these 1-based pages of ``data``, in this order: what a document OCR job reads when only
    some pages lack a text layer (Textract bills every page it is given)."""
    import io

    import pypdfium2 as pdfium

    src = pdfium.PdfDocument(data)
    out = pdfium.PdfDocument.new()
    try:
        out.import_pages(src, [p - 1 for p in pages])
        buf = io.BytesIO()
        out.save(buf)
        return buf.getvalue()
    finally:
        out.close()
        src.close()
