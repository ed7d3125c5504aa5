"""DOCX (paragraphs, tables, headers/footers), XLSX (visible sheets), PPTX (slides and notes).

The package has already passed ``guard.check_ooxml``; the libraries parse XML with entity
resolution off (python-docx / python-pptx) or through defusedxml (openpyxl, when installed).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from io import BytesIO
from typing import Any

from semfs.domain.errors import ParseFailed
from semfs.domain.models import Block, ExtractedDocument, Location
from semfs.domain.text import normalise

ROWS_PER_BLOCK = 20


class _Budget:
    """Characters left to take, and optionally CPU seconds: past ``until`` (``time.process_time``) nothing more
    is taken and the reason says so (a workbook read whole is bounded by the worker's CPU, not a busy machine's
    wall clock)."""

    def __init__(self, max_chars: int, cpu_s: float | None = None) -> None:
        self.left = max_chars
        self.truncated = False
        self.until = time.process_time() + cpu_s if cpu_s is not None else None
        self.why: str | None = None

    def take(self, text: str) -> str:
        if self.until is not None and time.process_time() > self.until:
            self.truncated, self.left = True, 0
            self.why = self.why or "the rows read within the extraction's CPU budget kept (SEMFS_EXTRACT_TIMEOUT_S)"
        if len(text) > self.left:
            self.truncated = True
            text = text[: self.left]
        self.left -= len(text)
        return text


_MACRO_TYPES = {
    b"application/vnd.ms-word.document.macroEnabled.main+xml": (
        b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    ),
    b"application/vnd.ms-word.template.macroEnabledTemplate.main+xml": (
        b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    ),
    b"application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml": (
        b"application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
    ),
    b"application/vnd.ms-powerpoint.slideshow.macroEnabled.main+xml": (
        b"application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"
    ),
}


def without_macros(data: bytes) -> bytes:
    """A macro-enabled package (.docm, .pptm, templates) with its main part declared as the plain type, which
    is all python-docx/python-pptx refuse it for; the macros themselves are never run or read."""
    import zipfile

    with zipfile.ZipFile(BytesIO(data)) as zf:
        try:
            types = zf.read("[Content_Types].xml")
        except KeyError:
            return data
        if not any(t in types for t in _MACRO_TYPES):
            return data
        for old, new in _MACRO_TYPES.items():
            types = types.replace(old, new)
        out = BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in zf.infolist():
                dst.writestr(info, types if info.filename == "[Content_Types].xml" else zf.read(info))
        return out.getvalue()


def is_strict(data: bytes) -> bool:
    """Strict OOXML (ISO 29500 strict namespaces), which python-docx and openpyxl cannot read."""
    import zipfile

    with zipfile.ZipFile(BytesIO(data)) as zf:
        for name in ("word/document.xml", "xl/workbook.xml", "ppt/presentation.xml"):
            try:
                with zf.open(name) as fh:
                    return b"http://purl.oclc.org/ooxml/" in fh.read(4096)
            except KeyError:
                continue
    return False


def _dated(props: Any) -> Any:
    """The document's own date from its core properties: last modified, else created (naive means UTC)."""
    import datetime as dt

    for name in ("modified", "created"):
        value = getattr(props, name, None) if props is not None else None
        if isinstance(value, dt.datetime) and value.year > 1980:
            return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
    return None


def _heading_level(style_name: str | None) -> int:
    name = (style_name or "").lower()  # a style may have no name (w:name is optional)
    if name == "title":
        return 1
    if name.startswith("heading"):
        digits = "".join(ch for ch in name if ch.isdigit())
        return int(digits) if digits else 1
    return 0


class _Paragraphs:
    """The blocks of a document as they are read, numbered in order, inside the character budget."""

    def __init__(self, max_chars: int) -> None:
        self.budget = _Budget(max_chars)
        self.blocks: list[Block] = []

    def add(self, kind: str, text: str, level: int = 0) -> None:
        text = self.budget.take(normalise(text))
        if text:
            location = Location(paragraph=len(self.blocks) + 1)
            self.blocks.append(Block(kind=kind, text=text, level=level, location=location))

    @property
    def full(self) -> bool:
        return self.budget.left <= 0


def extract_docx(data: bytes, max_chars: int) -> ExtractedDocument:
    """A Word document in reading order: headers, the body (numbering as Word shows it), what the body
    walk does not reach, the parts beside it (notes, comments, charts, alt texts, SmartArt), footers."""
    import docx

    try:
        document = docx.Document(BytesIO(data))
    except Exception as e:  # python-docx raises many types for a broken package
        raise ParseFailed(f"the DOCX cannot be parsed: {type(e).__name__}") from e
    out = _Paragraphs(max_chars)
    _docx_margins(document, out, "header")
    title = _docx_body(document, out, (document.core_properties.title or "").strip() or None)
    _docx_unreached(document, out)
    _docx_beside(data, document, out)
    _docx_margins(document, out, "footer")
    return ExtractedDocument(
        blocks=out.blocks, title=title, truncated=out.budget.truncated, document_date=_dated(document.core_properties)
    )


def _docx_margins(document: Any, out: _Paragraphs, which: str) -> None:
    """Every section's headers or footers (first page, even pages, and the text boxes in them), once."""
    for section in document.sections:
        for part in (
            getattr(section, which),
            getattr(section, f"first_page_{which}"),
            getattr(section, f"even_page_{which}"),
        ):
            if part is not None and not part.is_linked_to_previous:
                out.add("notes", "\n".join(_all_paragraphs(part._element)))


def _docx_body(document: Any, out: _Paragraphs, title: str | None) -> str | None:
    """The body's paragraphs and tables; the title, when the properties have none, is the first heading."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    from semfs.extractors.numbering import Numbering

    numbering = Numbering(document)
    for item in document.iter_inner_content():
        if out.full:
            break
        if isinstance(item, Paragraph):
            level = _heading_level(item.style.name if item.style is not None else "")
            number = numbering.label(item)  # automatic numbering ("2.17") is in no run of the paragraph
            body = _paragraph_text(item._p)
            out.add("heading" if level else "paragraph", f"{number} {body}" if number else body, level)
            if level == 1 and title is None and body.strip():
                title = body.strip()
        elif isinstance(item, Table):
            rows = [" | ".join(dict.fromkeys(c.text.strip() for c in row.cells)) for row in item.rows]
            out.add("table", "\n".join(rows))
    return title


def _docx_unreached(document: Any, out: _Paragraphs) -> None:
    """What python-docx's body walk does not reach: content controls (w:sdt), text boxes, drawing shapes,
    equations (m:t) - each paragraph not already captured."""
    seen = {" ".join(b.text.split()) for b in out.blocks}
    seen_text = "\n".join(seen)
    for text in _all_paragraphs(document.element.body):
        if out.full:
            break
        flat = " ".join(text.split())
        if flat and flat not in seen and flat not in seen_text:
            seen.add(flat)
            out.add("paragraph", text)


def _docx_beside(data: bytes, document: Any, out: _Paragraphs) -> None:
    """The parts beside the body: footnotes, endnotes and comments, charts, images' alt texts, SmartArt."""
    from semfs.extractors.ooxml import Package, chart_text, diagram_texts

    pkg = Package(data)
    main = str(document.part.partname).lstrip("/")
    for kind, target in pkg.rels(main).values():
        root = pkg.read(target) if kind in ("footnotes", "endnotes", "comments") and not out.full else None
        notes = [] if root is None else [t for t in _all_paragraphs(root) if t.strip()]
        if notes:
            out.add("notes", "\n".join(notes))
    for chart in pkg.charts_of(main):
        if chart in pkg.names and not out.full:
            out.add("table", chart_text(pkg.zip.read(chart)))
    body = document.element.body
    alt_texts = [d.get("descr").strip() for d in body.iter(f"{_WP}docPr") if (d.get("descr") or "").strip()]
    if alt_texts:
        out.add("notes", "\n".join(f"Image: {t}" for t in alt_texts))
    smart_art = diagram_texts(pkg, main)
    if smart_art:
        out.add("paragraph", "\n".join(smart_art))


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"


def _all_paragraphs(root: Any) -> list[str]:
    """The text of every paragraph under ``root`` in document order (``_paragraph_text``: a paragraph
    holding a text box yields its own text, and the box's paragraphs come on their own)."""
    out = []
    for p in root.iter(f"{_W}p"):
        text = _paragraph_text(p)
        if text.strip():
            out.append(text)
    return out


_SPACES = (f"{_W}tab", f"{_W}br", f"{_W}cr", f"{_W}ptab")


def _paragraph_text(p: Any) -> str:
    """A paragraph's text as Word shows it: its runs, inserted ones (``w:ins``) included and deleted ones
    (``w:delText``) not, so a tracked change is one paragraph, not two; tabs and breaks as spaces; a
    ruby's reading aid (``w:rt``) left out, so it does not glue onto its base; an equation's runs as
    symbols of their own ("x 2" for x², never "x2"); the paragraphs of a text box inside it not (they
    are paragraphs of their own)."""
    parts: list[str] = []
    for el in p.iter(f"{_W}t", f"{_M}t", *_SPACES, f"{_W}noBreakHyphen"):
        owner = next(el.iterancestors(f"{_W}p"), None)
        if owner is not None and owner is not p:
            continue  # in a text box's paragraph
        if next(el.iterancestors(f"{_W}rt"), None) is not None:
            continue
        if el.tag == f"{_W}t":
            parts.append(el.text or "")
        elif el.tag == f"{_M}t":
            parts.append(f" {el.text or ''} ")
        elif el.tag == f"{_W}noBreakHyphen":
            parts.append("-")
        else:
            parts.append(" ")
    return re.sub(r"  +", " ", "".join(parts))


def _cell(value: Any, number_format: str = "General") -> str:
    """The value as the sheet shows it: number formats applied (``$1,599.99``, ``2.50%``), dates in ISO."""
    import datetime as dt

    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        timed = value.time() != dt.time() or re.search(r"[hs]", re.sub(r'"[^"]*"', "", number_format.lower()))
        return value.isoformat(sep=" ") if timed else value.date().isoformat()
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (int, float)) and not isinstance(value, bool) and number_format not in ("General", "@"):
        shown = _formatted(value, number_format)
        if shown is not None:
            return shown
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


_BRACKET = re.compile(r"\[(\$([^\]-]*)[^\]]*|[^\]]*)\]")


def _formatted(value: float, number_format: str) -> str | None:
    """Excel's numeric format codes through Babel's LDML patterns (the same #, 0 and % grammar)."""
    from babel.numbers import format_decimal

    pattern: list[str] = []
    i = 0
    code = _BRACKET.sub(lambda m: m.group(2) or "", number_format)  # colours, conditions; [$€-407] -> €
    while i < len(code):
        ch = code[i]
        if ch == '"':
            j = code.find('"', i + 1)
            j = len(code) if j < 0 else j
            pattern.append("'" + code[i + 1 : j].replace("'", "''") + "'")
            i = j + 1
            continue
        if ch == "\\" and i + 1 < len(code):
            pattern.append("'" + code[i + 1].replace("'", "''") + "'")
            i += 2
            continue
        if ch == "_" and i + 1 < len(code):
            pattern.append(" ")
            i += 2
            continue
        if ch == "*" and i + 1 < len(code):
            i += 2
            continue
        pattern.append("#" if ch == "?" else ch)
        i += 1
    sections = "".join(pattern).split(";")
    if any(c in "".join(sections[:2]) for c in "yYdDhHsSeE/") or not any(c in sections[0] for c in "#0"):
        return None  # a date/time, fraction, scientific or text-only code: leave the value as it is
    try:
        return str(format_decimal(value, format=";".join(sections[:2]), locale="en_US")).strip()
    except Exception:  # a code Babel's grammar does not cover
        return None


def _sheet_parts(pkg: Any) -> dict[str, str]:
    """Sheet name -> its part in the package (worksheets and chartsheets)."""
    rels = pkg.rels("xl/workbook.xml")
    root = pkg.read("xl/workbook.xml")
    out: dict[str, str] = {}
    for sheet in [] if root is None else root.iter(f"{_SML}sheet"):
        rel = rels.get(sheet.get(f"{_R}id", ""))
        if rel is not None:
            out[sheet.get("name", "")] = rel[1]
    return out


_SML = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"


def extract_xlsx(data: bytes, max_chars: int, cpu_s: float | None = None) -> ExtractedDocument:
    """Every visible sheet: its rows under their header, in blocks of ``ROWS_PER_BLOCK``, then what is drawn
    over or attached to it (comments, header and footer, charts, text boxes). At most ``max_chars`` characters
    and, when given, ``cpu_s`` seconds of CPU: the rows read by then are kept."""
    import openpyxl

    from semfs.extractors.ooxml import Package

    try:
        wb = openpyxl.load_workbook(BytesIO(data), read_only=True, data_only=True)
        pkg = Package(data)
        parts = _sheet_parts(pkg)
    except Exception as e:  # openpyxl raises many types for a broken package
        raise ParseFailed(f"the XLSX cannot be parsed: {type(e).__name__}") from e
    budget = _Budget(max_chars, cpu_s)
    blocks: list[Block] = []
    title = (wb.properties.title or "").strip() or None if wb.properties else None
    try:
        for ws in [*wb.worksheets, *wb.chartsheets]:
            # a hidden sheet is not what a reader sees and, like hidden HTML, must not reach a model's prompt
            if ws.sheet_state != "visible":
                continue
            if hasattr(ws, "iter_rows"):  # (a chartsheet has only its charts)
                blocks += _sheet_rows(ws, _uncached_formulas(pkg, parts.get(ws.title, "")), budget)
            blocks += _sheet_extras(pkg, parts.get(ws.title, ""), ws.title, budget)
            if budget.left <= 0:
                break
    finally:
        wb.close()
    blocks = [b for b in blocks if b.text]
    return ExtractedDocument(
        blocks=blocks,
        title=title,
        truncated=budget.truncated,
        truncated_by=budget.why,
        document_date=_dated(wb.properties),
    )


def _sheet_rows(ws: Any, formulas: dict[tuple[int, int], str], budget: _Budget) -> list[Block]:
    """A sheet's rows as the sheet shows them (a formula without a cached value as its formula), each
    block headed by the sheet's first row; empty rows and cells are layout, not content."""
    blocks: list[Block] = []
    header: str | None = None
    pending: list[str] = []
    start = last = 0
    for r_idx, row in enumerate(ws.iter_rows(), start=1):
        cells = [
            _cell(c.value, getattr(c, "number_format", "General"))
            if c.value is not None or not formulas
            else formulas.get((r_idx, getattr(c, "column", 0)), "")
            for c in row
        ]
        if not any(cells):
            continue
        line = " | ".join(c for c in cells if c)
        if header is None:
            header = line
            continue
        start = start if pending else r_idx
        pending.append(line)
        last = r_idx
        if len(pending) >= ROWS_PER_BLOCK:
            blocks.append(_sheet_block(ws.title, header, pending, start, last, budget))
            pending = []
        if budget.left <= 0:
            break
    if pending or (header and not blocks):
        blocks.append(_sheet_block(ws.title, header or "", pending, start or 1, last or 1, budget))
    return blocks


def _sheet_extras(pkg: Any, part: str, sheet: str, budget: _Budget) -> list[Block]:
    """A sheet's comments, header/footer and charts, and the text boxes, shapes and SmartArt drawn over it."""
    from semfs.extractors.ooxml import chart_text, drawing_texts, sheet_comments, sheet_header_footer

    blocks: list[Block] = []
    notes = [line for _, line in sheet_comments(pkg, part)] + sheet_header_footer(pkg, part)
    if notes:
        blocks.append(
            Block(kind="notes", text=budget.take(normalise("\n".join(notes))), location=Location(sheet=sheet))
        )
    for chart in pkg.charts_of(part):
        text = budget.take(chart_text(pkg.zip.read(chart)) if chart in pkg.names else "")
        blocks.append(Block(kind="table", text=text, location=Location(sheet=sheet)))
    for shown in drawing_texts(pkg, part):
        blocks.append(Block(kind="paragraph", text=budget.take(shown), location=Location(sheet=sheet)))
    return blocks


_NO_CACHED_VALUE = re.compile(rb"</f>\s*(?:<v\s*/>|<v>\s*</v>)?\s*</c>")


def _uncached_formulas(pkg: Any, part: str) -> dict[tuple[int, int], str]:
    """(row, column) → ``=FORMULA`` for the cells whose formula has no cached value: a file written by a
    program rather than Excel, never recalculated. openpyxl's values-only read gives those cells nothing,
    so they came out empty; the formula says at least what the cell computes. Only a sheet that has such a
    cell (a quick scan of its XML) is parsed a second time."""
    from lxml import etree
    from openpyxl.utils.cell import coordinate_to_tuple

    raw = pkg.zip.read(part) if part in pkg.names else b""
    if not _NO_CACHED_VALUE.search(raw):
        return {}
    out: dict[tuple[int, int], str] = {}
    for _, cell in etree.iterparse(BytesIO(raw), tag=f"{_SML}c", resolve_entities=False, no_network=True):
        formula = cell.find(f"{_SML}f")
        value = cell.find(f"{_SML}v")
        if formula is not None and formula.text and (value is None or not (value.text or "").strip()):
            out[coordinate_to_tuple(cell.get("r", "A1"))] = "=" + formula.text.strip()
        cell.clear()
    return out


def _sheet_block(sheet: str, header: str, rows: list[str], start: int, end: int, budget: _Budget) -> Block:
    text = budget.take("\n".join([f"Sheet {sheet}", header, *rows]).strip())
    return Block(kind="table", text=text, location=Location(sheet=sheet, row_start=start, row_end=end))


def _is_page_furniture(text: str) -> bool:
    """A slide number or page field left as text ("‹#›", "12"): nothing to read."""
    bare = text.strip()
    return not bare or bare in ("\u2039#\u203a", "<#>") or bare.isdigit()


def _shape_texts(shapes: Any, skip: Any) -> Iterator[str]:
    """Text of every shape, group shapes opened recursively: text frames, table rows (empty cells left out),
    and charts' titles and data."""
    from pptx.shapes.group import GroupShape

    from semfs.extractors.ooxml import chart_text

    for shape in shapes:
        if skip is not None and shape == skip:  # proxies: equal when they wrap the same element
            continue
        if isinstance(shape, GroupShape):
            yield from _shape_texts(shape.shapes, skip)
            continue
        described = shape._element.find(".//{*}cNvPr")
        if described is not None and (described.get("descr") or "").strip():
            yield f"Image: {described.get('descr').strip()}"  # alt text: what the picture says to a reader
        if getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
            yield shape.text_frame.text
        if getattr(shape, "has_table", False):
            yield from _table_rows(shape.table)
        if getattr(shape, "has_chart", False):
            yield chart_text(shape.chart_part.blob)


def _table_rows(table: Any) -> Iterator[str]:
    """A slide table row by row; a merged cell's text stands in every cell it spans (as a reader sees the
    grid), and empty cells are left out."""
    grid = [[c.text.strip() for c in row.cells] for row in table.rows]
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            if cell.is_merge_origin:
                for dr in range(cell.span_height):
                    for dc in range(cell.span_width):
                        if r + dr < len(grid) and c + dc < len(grid[r + dr]):
                            grid[r + dr][c + dc] = grid[r][c]
    for cells in grid:
        if any(cells):
            yield " | ".join(c for c in cells if c)


def extract_pptx(data: bytes, max_chars: int) -> ExtractedDocument:
    """Every slide (its title, its shapes and SmartArt, its speaker notes and comments), then what every
    slide and every notes page shows from its master."""
    from pptx import Presentation

    from semfs.extractors.ooxml import Package

    try:
        prs = Presentation(BytesIO(data))
        pkg = Package(data)
    except Exception as e:  # python-pptx raises many types for a broken package
        raise ParseFailed(f"the PPTX cannot be parsed: {type(e).__name__}") from e
    budget = _Budget(max_chars)
    blocks: list[Block] = []
    title = (prs.core_properties.title or "").strip() or None
    for number, slide in enumerate(prs.slides, start=1):
        slide_blocks = _slide(pkg, slide, Location(slide=number), budget)
        blocks += slide_blocks
        if title is None and slide_blocks and slide_blocks[0].kind == "heading":
            title = slide_blocks[0].text
        if budget.left <= 0:
            break
    blocks += _masters(pkg, prs, budget)
    dated = _dated(prs.core_properties)
    return ExtractedDocument(
        blocks=blocks, title=title, pages=len(prs.slides), truncated=budget.truncated, document_date=dated
    )


def _slide(pkg: Any, slide: Any, loc: Location, budget: _Budget) -> list[Block]:
    """One slide's blocks: its title (a heading), its text, its speaker notes, its comments."""
    from semfs.extractors.ooxml import diagram_texts, slide_comments

    blocks: list[Block] = []
    title_shape = slide.shapes.title
    slide_title = title_shape.text_frame.text.strip() if title_shape is not None else ""
    if slide_title:
        blocks.append(Block(kind="heading", text=budget.take(slide_title), level=2, location=loc))
    part = str(slide.part.partname).lstrip("/")
    texts = [*_shape_texts(slide.shapes, title_shape), *diagram_texts(pkg, part)]
    body = budget.take(normalise("\n".join(texts)))
    if body:
        blocks.append(Block(text=body, location=loc))
    if slide.has_notes_slide:
        notes_slide = slide.notes_slide
        box = notes_slide.notes_text_frame
        # the notes box, and any text a presenter put elsewhere on the notes page (a text box beside it)
        extra = [
            t for t in _shape_texts(notes_slide.shapes, notes_slide.notes_placeholder) if not _is_page_furniture(t)
        ]
        notes = budget.take(normalise("\n".join([(box.text if box is not None else "") or "", *extra]).strip()))
        if notes:
            blocks.append(Block(kind="notes", text=f"Speaker notes: {notes}", location=loc))
    comments = budget.take(normalise("\n".join(slide_comments(pkg, part))))
    if comments:
        blocks.append(Block(kind="notes", text=comments, location=loc))
    return blocks


def _masters(pkg: Any, prs: Any, budget: _Budget) -> list[Block]:
    """What every slide shows from its master (a footer, a confidentiality line), once - not the master's
    placeholders, whose text is the template's own ("Click to edit Master title style"); and what every
    notes page shows from the notes master (printed handouts: "Internal: do not forward"), when the deck
    has notes pages and a notes master of its own (python-pptx would make a default one)."""

    def drawn(shapes: Any) -> list[str]:
        texts = _shape_texts([s for s in shapes if not s.is_placeholder], None)
        return list(dict.fromkeys(t for t in texts if not _is_page_furniture(t)))

    blocks: list[Block] = []
    masters = list(dict.fromkeys(t for master in prs.slide_masters for t in drawn(master.shapes)))
    if masters and budget.left > 0:
        text = budget.take(normalise("\n".join(masters)))
        blocks.append(Block(kind="notes", text=f"On every slide: {text}", location=Location(slide=1)))
    has_notes_master = any(kind == "notesMaster" for kind, _ in pkg.rels("ppt/presentation.xml").values())
    if budget.left > 0 and has_notes_master and any(slide.has_notes_slide for slide in prs.slides):
        notes_master = drawn(prs.notes_master.shapes)
        if notes_master:
            text = budget.take(normalise("\n".join(notes_master)))
            blocks.append(Block(kind="notes", text=f"On every notes page: {text}", location=Location(slide=1)))
    return blocks
