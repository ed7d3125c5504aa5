"""DOCX (paragraphs, tables, headers/footers), XLSX (visible sheets), PPTX (slides and notes).

The package has already passed ``guard.check_ooxml``; the libraries parse XML with entity
resolution off (python-docx / python-pptx) or through defusedxml (openpyxl, when installed).
"""

from __future__ import annotations

from io import BytesIO
from typing import Any

from semfs.domain.errors import ParseFailed
from semfs.domain.models import Block, ExtractedDocument, Location
from semfs.domain.text import normalise

ROWS_PER_BLOCK = 20


class _Budget:
    def __init__(self, max_chars: int) -> None:
        self.left = max_chars
        self.truncated = False

    def take(self, text: str) -> str:
        if len(text) > self.left:
            self.truncated = True
            text = text[: self.left]
        self.left -= len(text)
        return text


def _heading_level(style_name: str) -> int:
    name = style_name.lower()
    if name == "title":
        return 1
    if name.startswith("heading"):
        digits = "".join(ch for ch in name if ch.isdigit())
        return int(digits) if digits else 1
    return 0


def extract_docx(data: bytes, max_chars: int) -> ExtractedDocument:
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(BytesIO(data))
    except Exception as e:  # python-docx raises many types for a broken package
        raise ParseFailed(f"the DOCX cannot be parsed: {type(e).__name__}") from e
    budget = _Budget(max_chars)
    blocks: list[Block] = []
    title = (document.core_properties.title or "").strip() or None
    n = 0

    def add(kind: str, text: str, level: int = 0) -> None:
        nonlocal n
        text = budget.take(normalise(text))
        if text:
            n += 1
            blocks.append(Block(kind=kind, text=text, level=level, location=Location(paragraph=n)))

    for section in document.sections:
        for part in (section.header, section.first_page_header):
            if part is not None and not part.is_linked_to_previous:
                add("notes", "\n".join(p.text for p in part.paragraphs if p.text.strip()))
    for item in document.iter_inner_content():
        if budget.left <= 0:
            break
        if isinstance(item, Paragraph):
            level = _heading_level(item.style.name if item.style is not None else "")
            add("heading" if level else "paragraph", item.text, level)
            if level == 1 and title is None and item.text.strip():
                title = item.text.strip()
        elif isinstance(item, Table):
            rows = []
            for row in item.rows:
                cells = list(dict.fromkeys(c.text.strip() for c in row.cells))
                rows.append(" | ".join(cells))
            add("table", "\n".join(rows))
    # What python-docx's body walk does not reach: content controls (w:sdt), text boxes, drawing shapes,
    # equations (m:t), then footnotes, endnotes and comments - each paragraph not already captured
    seen = {" ".join(b.text.split()) for b in blocks}
    seen_text = "\n".join(seen)
    for text in _all_paragraphs(document.element.body):
        if budget.left <= 0:
            break
        flat = " ".join(text.split())
        if flat and flat not in seen and flat not in seen_text:
            seen.add(flat)
            add("paragraph", text)
    from lxml import etree

    parts = {str(p.partname): p for p in document.part.package.iter_parts()}
    for partname in ("/word/footnotes.xml", "/word/endnotes.xml", "/word/comments.xml"):
        xml_part = parts.get(partname)
        if xml_part is None or budget.left <= 0:
            continue
        # the archive guard refused any DTD before this point; no entity resolution, no network anyway
        root = etree.fromstring(xml_part.blob, etree.XMLParser(resolve_entities=False, no_network=True))
        notes = [t for t in _all_paragraphs(root) if t.strip()]
        if notes:
            add("notes", "\n".join(notes))
    for section in document.sections:
        for footer in (section.footer, section.first_page_footer):
            if footer is not None and not footer.is_linked_to_previous:
                add("notes", "\n".join(p.text for p in footer.paragraphs if p.text.strip()))
    return ExtractedDocument(blocks=blocks, title=title, truncated=budget.truncated)


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"


def _all_paragraphs(root: Any) -> list[str]:
    """The text of every innermost paragraph under ``root`` in document order (w:t and equation m:t runs;
    a paragraph holding a text box yields the box's paragraphs, not their text twice)."""
    out = []
    for p in root.iter(f"{_W}p"):
        if any(True for _ in p.iter(f"{_W}p") if _ is not p):
            continue  # it contains paragraphs (a text box): those are visited themselves
        parts = [t.text or "" for t in p.iter(f"{_W}t", f"{_M}t")]
        text = "".join(parts)
        if text.strip():
            out.append(text)
    return out


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def extract_xlsx(data: bytes, max_chars: int) -> ExtractedDocument:
    import openpyxl

    try:
        wb = openpyxl.load_workbook(BytesIO(data), read_only=True, data_only=True)
    except Exception as e:  # openpyxl raises many types for a broken package
        raise ParseFailed(f"the XLSX cannot be parsed: {type(e).__name__}") from e
    budget = _Budget(max_chars)
    blocks: list[Block] = []
    title = (wb.properties.title or "").strip() or None if wb.properties else None
    try:
        for ws in wb.worksheets:
            if ws.sheet_state != "visible":
                continue
            header: str | None = None
            pending: list[str] = []
            start = 0
            last = 0
            for r_idx, row in enumerate(ws.iter_rows(values_only=True), start=1):
                cells = [_cell(v) for v in row]
                if not any(cells):
                    continue
                line = " | ".join(cells).rstrip(" |")
                if header is None:
                    header = line
                    continue
                if not pending:
                    start = r_idx
                pending.append(line)
                last = r_idx
                if len(pending) >= ROWS_PER_BLOCK:
                    blocks.append(_sheet_block(ws.title, header, pending, start, last, budget))
                    pending = []
                if budget.left <= 0:
                    break
            if pending or (header and not any(b.location.sheet == ws.title for b in blocks)):
                blocks.append(_sheet_block(ws.title, header or "", pending, start or 1, last or 1, budget))
            if budget.left <= 0:
                break
    finally:
        wb.close()
    return ExtractedDocument(blocks=[b for b in blocks if b.text], title=title, truncated=budget.truncated)


def _sheet_block(sheet: str, header: str, rows: list[str], start: int, end: int, budget: _Budget) -> Block:
    text = budget.take("\n".join([f"Sheet {sheet}", header, *rows]).strip())
    return Block(kind="table", text=text, location=Location(sheet=sheet, row_start=start, row_end=end))


def extract_pptx(data: bytes, max_chars: int) -> ExtractedDocument:
    from pptx import Presentation

    try:
        prs = Presentation(BytesIO(data))
    except Exception as e:  # python-pptx raises many types for a broken package
        raise ParseFailed(f"the PPTX cannot be parsed: {type(e).__name__}") from e
    budget = _Budget(max_chars)
    blocks: list[Block] = []
    title = (prs.core_properties.title or "").strip() or None
    for number, slide in enumerate(prs.slides, start=1):
        loc = Location(slide=number)
        slide_title = slide.shapes.title.text_frame.text.strip() if slide.shapes.title is not None else ""
        if slide_title:
            blocks.append(Block(kind="heading", text=budget.take(slide_title), level=2, location=loc))
            if title is None:
                title = slide_title
        texts: list[str] = []
        for shape in slide.shapes:
            if shape == slide.shapes.title:
                continue
            if shape.has_text_frame and shape.text_frame.text.strip():
                texts.append(shape.text_frame.text)
            if getattr(shape, "has_table", False) and shape.has_table:
                for row in shape.table.rows:
                    texts.append(" | ".join(c.text.strip() for c in row.cells))
        body = budget.take(normalise("\n".join(texts)))
        if body:
            blocks.append(Block(text=body, location=loc))
        if slide.has_notes_slide:
            notes = budget.take(normalise(slide.notes_slide.notes_text_frame.text or ""))
            if notes:
                blocks.append(Block(kind="notes", text=f"Speaker notes: {notes}", location=loc))
        if budget.left <= 0:
            break
    return ExtractedDocument(blocks=blocks, title=title, pages=len(prs.slides), truncated=budget.truncated)
