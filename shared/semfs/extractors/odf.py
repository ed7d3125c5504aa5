"""OpenDocument (``.odt``, ``.ods``, ``.odp``) read from its own XML, no converter needed (issue 53.4): the
package's ``content.xml`` (checked by the archive guard first, parsed by defusedxml) in reading order.

- text: headings (their outline level makes the heading path), paragraphs, list items, tables (a row a line,
  cells joined by `` | ``), footnotes and frames' text where they stand;
- spreadsheet: each sheet's rows under its first row, ``ROWS_PER_BLOCK`` a block, repeated rows and cells
  counted once (a sheet's 1,048,576 empty rows are one element);
- presentation: each slide's text boxes, then its speaker notes.

The title is the document's own (``meta.xml``'s ``dc:title``), else the first heading.
"""

from __future__ import annotations

import zipfile
from io import BytesIO
from typing import Any

from semfs.domain.errors import ParseFailed
from semfs.domain.models import Block, ExtractedDocument, Location
from semfs.extractors.office import ROWS_PER_BLOCK

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "presentation": "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
}
MAX_REPEAT = 1_000  # a repeated row or cell with text is shown this many times at most


def _q(prefix: str, name: str) -> str:
    return f"{{{NS[prefix]}}}{name}"


def extract_odf(kind: str, data: bytes, max_chars: int) -> ExtractedDocument:
    """``kind``: odt, ods or odp (the sniffer's); the package passed ``check_ooxml`` before."""
    from defusedxml import ElementTree

    try:
        with zipfile.ZipFile(BytesIO(data)) as package:
            content = ElementTree.fromstring(package.read("content.xml"))
            meta = ElementTree.fromstring(package.read("meta.xml")) if "meta.xml" in package.namelist() else None
    except KeyError as e:
        raise ParseFailed("the OpenDocument package has no content.xml") from e
    body = content.find(f"{_q('office', 'body')}")
    if body is None:
        raise ParseFailed("the OpenDocument has no body")
    reader = {"odt": _text, "ods": _sheets, "odp": _slides}[kind]
    blocks = reader(body)
    kept, used, truncated = [], 0, False
    for b in blocks:
        if used + len(b.text) > max_chars:
            truncated = True
            break
        kept.append(b)
        used += len(b.text)
    title = _meta_title(meta) or next((b.text for b in kept if b.kind == "heading"), None)
    return ExtractedDocument(blocks=kept, title=title, truncated=truncated)


def _meta_title(meta: Any) -> str | None:
    if meta is None:
        return None
    found = meta.find(f".//{_q('dc', 'title')}")
    return " ".join((found.text or "").split()) or None if found is not None else None


def inline_text(element: Any) -> str:
    """The text of a paragraph or heading as it reads: spans, links, spaces (``text:s``), tabs and line
    breaks; a footnote's body after the paragraph's own words, in brackets."""
    parts: list[str] = []
    notes: list[str] = []

    def walk(node: Any) -> None:
        tag = node.tag
        if tag == _q("text", "s"):
            parts.append(" " * int(node.get(_q("text", "c"), "1")))
        elif tag == _q("text", "tab"):
            parts.append("\t")
        elif tag == _q("text", "line-break"):
            parts.append("\n")
        elif tag == _q("text", "note"):
            cited = node.find(_q("text", "note-body"))
            if cited is not None:
                notes.append(" ".join(inline_text(p) for p in cited.iter(_q("text", "p"))))
            return
        elif node.text:
            parts.append(node.text)
        if tag != _q("text", "note"):
            for child in node:
                walk(child)
                if child.tail:
                    parts.append(child.tail)

    if element.text:
        parts.append(element.text)
    for child in element:
        walk(child)
        if child.tail:
            parts.append(child.tail)
    text = "".join(parts).strip()
    return text + "".join(f" [{n}]" for n in notes if n)


def _text(body: Any) -> list[Block]:
    """A text document's headings, paragraphs, lists and tables in order, each with its heading path."""
    root = body.find(_q("office", "text"))
    blocks: list[Block] = []
    path: list[str] = []

    def visit(node: Any) -> None:
        tag = node.tag
        if tag == _q("text", "h"):
            level = int(node.get(_q("text", "outline-level"), "1"))
            text = inline_text(node)
            if text:
                path[:] = [*path[: level - 1], text]
                blocks.append(
                    Block(kind="heading", text=text, level=level, location=Location(section=" › ".join(path)))
                )
        elif tag == _q("text", "p"):
            text = inline_text(node)
            if text:
                blocks.append(Block(kind="paragraph", text=text, location=Location(section=" › ".join(path) or None)))
        elif tag == _q("table", "table"):
            rows = [" | ".join(_cell_text(c) for c in r.iter(_q("table", "table-cell"))) for r in _rows(node)]
            rows = [r for r in rows if r.strip(" |")]
            if rows:
                blocks.append(
                    Block(kind="table", text="\n".join(rows), location=Location(section=" › ".join(path) or None))
                )
        else:
            for child in node:
                visit(child)

    if root is not None:
        for child in root:
            visit(child)
    return blocks


def _rows(table: Any) -> list[Any]:
    return list(table.iter(_q("table", "table-row")))


def _cell_text(cell: Any) -> str:
    return " ".join(inline_text(p) for p in cell.iter(_q("text", "p"))).strip()


def _sheets(body: Any) -> list[Block]:
    """Each sheet's rows under its first row, in blocks of ``ROWS_PER_BLOCK`` rows."""
    blocks: list[Block] = []
    root = body.find(_q("office", "spreadsheet"))
    for sheet in root.iter(_q("table", "table")) if root is not None else []:
        name = sheet.get(_q("table", "name"), "Sheet")
        lines = _sheet_lines(sheet)
        if not lines:
            continue
        (_, header), rest = lines[0], lines[1:]
        for i in range(0, max(1, len(rest)), ROWS_PER_BLOCK):
            part = rest[i : i + ROWS_PER_BLOCK] or lines[:1]
            text = "\n".join([header, *(t for _, t in part)]) if rest else header
            blocks.append(
                Block(kind="table", text=text, location=Location(sheet=name, row_start=part[0][0], row_end=part[-1][0]))
            )
    return blocks


def _sheet_lines(sheet: Any) -> list[tuple[int, str]]:
    """(row number, its cells joined) of every row with text; a repeated row counts its repeats in the
    numbering and is shown ``MAX_REPEAT`` times at most."""
    lines: list[tuple[int, str]] = []
    number = 0
    for row in sheet.iter(_q("table", "table-row")):
        repeat = int(row.get(_q("table", "number-rows-repeated"), "1"))
        cells: list[str] = []
        for cell in row:
            if cell.tag in (_q("table", "table-cell"), _q("table", "covered-table-cell")):
                times = min(int(cell.get(_q("table", "number-columns-repeated"), "1")), MAX_REPEAT)
                cells += [_cell_text(cell)] * times
        line = " | ".join(cells).rstrip(" |")
        if line:
            lines += [(number + k + 1, line) for k in range(min(repeat, MAX_REPEAT))]
        number += repeat
    return lines


def _slides(body: Any) -> list[Block]:
    """Each slide's text boxes in order, then its speaker notes."""
    blocks: list[Block] = []
    root = body.find(_q("office", "presentation"))
    for n, page in enumerate(root.iter(_q("draw", "page")) if root is not None else [], start=1):
        notes = page.find(_q("presentation", "notes"))
        said = [inline_text(p) for p in page.iter(_q("text", "p")) if notes is None or not _inside(notes, p)]
        if text := "\n".join(t for t in said if t):
            blocks.append(Block(kind="paragraph", text=text, location=Location(slide=n)))
        spoken = [inline_text(p) for p in notes.iter(_q("text", "p"))] if notes is not None else []
        if text := "\n".join(t for t in spoken if t):
            blocks.append(Block(kind="notes", text=text, location=Location(slide=n)))
    return blocks


def _inside(container: Any, element: Any) -> bool:
    return any(e is element for e in container.iter())
