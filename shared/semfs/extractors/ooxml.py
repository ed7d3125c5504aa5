"""What the document libraries do not read from an OOXML package: charts, comments and the relationships
that say which sheet, slide or document holds them.

The package has already passed ``guard.check_ooxml`` (no DTDs, bounded sizes); every part is parsed with
entity resolution and network access off.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from collections.abc import Iterator
from typing import Any

from semfs.domain.text import normalise

_C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_PLOTS = {
    "barChart": "Bar chart",
    "bar3DChart": "Bar chart",
    "lineChart": "Line chart",
    "line3DChart": "Line chart",
    "pieChart": "Pie chart",
    "pie3DChart": "Pie chart",
    "doughnutChart": "Doughnut chart",
    "areaChart": "Area chart",
    "area3DChart": "Area chart",
    "scatterChart": "Scatter chart",
    "bubbleChart": "Bubble chart",
    "radarChart": "Radar chart",
    "stockChart": "Stock chart",
    "surfaceChart": "Surface chart",
    "ofPieChart": "Pie chart",
}


def parse_xml(blob: bytes) -> Any:
    from lxml import etree

    return etree.fromstring(blob, etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False))


class Package:
    """An OOXML zip read for its parts and relationships."""

    def __init__(self, data: bytes | zipfile.ZipFile) -> None:
        import io

        self.zip = data if isinstance(data, zipfile.ZipFile) else zipfile.ZipFile(io.BytesIO(data))
        self.names = set(self.zip.namelist())
        self._people: dict[str, dict[str, str]] = {}
        self._rels: dict[str, dict[str, tuple[str, str]]] = {}

    def people(self, owner: str, kinds: tuple[str, ...], attr: str) -> dict[str, str]:
        """id -> name from the author/person parts ``owner`` points to (read once per package)."""
        key = f"{owner}|{attr}|{','.join(kinds)}"
        if key not in self._people:
            names: dict[str, str] = {}
            for kind, target in self.rels(owner).values():
                root = self.read(target) if kind in kinds else None
                for person in [] if root is None else root:
                    names[person.get("id", "")] = person.get(attr, "")
            self._people[key] = names
        return self._people[key]

    def read(self, name: str) -> Any | None:
        if name not in self.names:
            return None
        try:
            return parse_xml(self.zip.read(name))
        except Exception:  # one broken part must not cost the rest of the document
            return None

    def rels(self, part: str) -> dict[str, tuple[str, str]]:
        """rId -> (type suffix, target part name) for ``part`` (parsed once per package)."""
        if part not in self._rels:
            self._rels[part] = self._read_rels(part)
        return self._rels[part]

    def _read_rels(self, part: str) -> dict[str, tuple[str, str]]:
        folder, base = posixpath.split(part)
        root = self.read(posixpath.join(folder, "_rels", base + ".rels"))
        out: dict[str, tuple[str, str]] = {}
        if root is None:
            return out
        for rel in root.iter(f"{_REL}Relationship"):
            if rel.get("TargetMode") == "External":
                continue
            target = rel.get("Target", "")
            name = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            out[rel.get("Id", "")] = (rel.get("Type", "").rsplit("/", 1)[-1], name)
        return out

    def charts_of(self, part: str, depth: int = 2) -> list[str]:
        """Chart parts reachable from ``part`` (directly, or through a drawing)."""
        found: list[str] = []
        for kind, target in self.rels(part).values():
            if kind == "chart":
                found.append(target)
            elif kind == "drawing" and depth > 1:
                found.extend(self.charts_of(target, depth - 1))
        return found


def _points(el: Any | None) -> list[str]:
    if el is None:
        return []
    pts: dict[int, str] = {}
    for pt in el.iter(f"{_C}pt"):
        v = pt.find(f"{_C}v")
        if v is not None and v.text is not None:
            pts[int(pt.get("idx", len(pts)))] = _number(v.text)
    return [pts.get(i, "") for i in range(max(pts) + 1)] if pts else []


def _number(text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        return text.strip()
    return str(int(value)) if value.is_integer() else f"{value:g}"


def chart_text(blob: bytes) -> str:
    """A chart's title, its kind and its data (the cached values the chart shows) as a small table."""
    try:
        root = parse_xml(blob)
    except Exception:
        return ""
    chart = root.find(f"{_C}chart")
    if chart is None:
        return ""
    lines: list[str] = []
    title = chart.find(f"{_C}title")
    if title is not None:
        lines.append(" ".join(t.text or "" for t in title.iter(f"{_A}t")).strip())
    plot_area = chart.find(f"{_C}plotArea")
    for plot in [] if plot_area is None else list(plot_area):
        tag = plot.tag.removeprefix(_C) if isinstance(plot.tag, str) else ""
        if tag in _PLOTS:
            lines += [_PLOTS[tag], *_plot_table(plot)]
    return normalise("\n".join(line for line in lines if line))


def _plot_table(plot: Any) -> list[str]:
    """A plot's series as a table: a header of series names, a row per category (or x value)."""
    names: list[str] = []
    columns: list[list[str]] = []
    categories: list[str] = []
    for series in plot.iter(f"{_C}ser"):
        names.append(_series_name(series))
        categories = categories or _points(_first(series, "cat", "xVal"))
        columns.append(_points(_first(series, "val", "yVal")))
    rows = [" | ".join(["", *names]).strip()]
    for i in range(max((len(c) for c in columns), default=0)):
        label = categories[i] if i < len(categories) else ""
        rows.append(" | ".join([label, *(c[i] if i < len(c) else "" for c in columns)]).strip(" |"))
    return rows


def _first(series: Any, *names: str) -> Any:
    """The first of a series' children named ``names`` that it has (a scatter plot's x/y values)."""
    return next((el for name in names if (el := series.find(f"{_C}{name}")) is not None), None)


def _series_name(series: Any) -> str:
    tx = series.find(f"{_C}tx")
    if tx is None:
        return ""
    name = " ".join(_points(tx)) or " ".join(v.text or "" for v in tx.iter(f"{_C}v"))
    return name.strip()


_THREADED = "{http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments}"
_S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def comment_line(author: str, when: str, text: str) -> str:
    who = ", ".join(p for p in (author.strip(), when.strip()) if p)
    return f"Comment ({who}): {text}" if who else f"Comment: {text}"


def _text_of(el: Any, *tags: str) -> str:
    return normalise(" ".join(t.text or "" for t in el.iter(*tags)))


def sheet_comments(pkg: Package, sheet_part: str) -> Iterator[tuple[str, str]]:
    """(cell, line) for every comment on a worksheet: threaded comments with their people and times, then
    legacy notes that are not a threaded comment's fallback copy."""
    rels = pkg.rels(sheet_part)
    threaded_cells: set[str] = set()
    persons = pkg.people("xl/workbook.xml", ("person",), "displayName")
    for kind, target in rels.values():
        if kind == "threadedComment":
            root = pkg.read(target)
            for c in [] if root is None else root.iter(f"{_THREADED}threadedComment"):
                ref = c.get("ref", "")
                threaded_cells.add(ref)
                line = comment_line(
                    persons.get(c.get("personId", ""), ""), c.get("dT", ""), _text_of(c, f"{_THREADED}text")
                )
                yield ref, line
    for kind, target in rels.values():
        if kind == "comments":
            root = pkg.read(target)
            if root is None:
                continue
            authors = [a.text or "" for a in root.iter(f"{_S}author")]
            for c in root.iter(f"{_S}comment"):
                ref = c.get("ref", "")
                if ref in threaded_cells:
                    continue
                idx = int(c.get("authorId", "0") or 0)
                author = authors[idx] if idx < len(authors) else ""
                yield ref, comment_line(author, "", _text_of(c, f"{_S}t"))


_HF_CODES = re.compile(r"&(?:\"[^\"]*\"|\d+|[LCRPNDTZFAGBIUESXYKOH&])")


def sheet_header_footer(pkg: Package, sheet_part: str) -> list[str]:
    """Header and footer text of a worksheet, without the &-codes (page numbers, fonts, alignment)."""
    from lxml import etree

    out: list[str] = []
    if sheet_part not in pkg.names:
        return out
    with pkg.zip.open(sheet_part) as fh:
        for _, el in etree.iterparse(fh, tag=f"{_S}headerFooter", resolve_entities=False, no_network=True):
            for part in el:
                text = normalise(_HF_CODES.sub(" ", part.text or ""))
                if text and text not in out:
                    out.append(text)
            el.clear()
    return out


_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_P188 = "{http://schemas.microsoft.com/office/powerpoint/2018/8/main}"


def slide_comments(pkg: Package, slide_part: str) -> list[str]:
    """Comments on a slide: legacy ``p:cm`` (authors in commentAuthors.xml) and modern threaded comments."""
    legacy_authors = pkg.people("ppt/presentation.xml", ("commentAuthors",), "name")
    modern_authors = pkg.people("ppt/presentation.xml", ("authors",), "name")
    out: list[str] = []
    for kind, target in pkg.rels(slide_part).values():
        if kind not in {"comments", "comment"}:
            continue
        root = pkg.read(target)
        if root is None:
            continue
        for c in root.iter(f"{_P}cm"):
            text = _text_of(c, f"{_P}text")
            out.append(comment_line(legacy_authors.get(c.get("authorId", ""), ""), c.get("dt", ""), text))
        for c in root.iter(f"{_P188}cm", f"{_P188}reply"):
            text = _text_of(c.find(f"{_P188}txBody") if c.find(f"{_P188}txBody") is not None else c, f"{_A}t")
            if text:
                out.append(comment_line(modern_authors.get(c.get("authorId", ""), ""), c.get("created", ""), text))
    return out


def diagram_texts(pkg: Package, part: str) -> list[str]:
    """SmartArt: the text of each diagram data part a slide or document points to."""
    out: list[str] = []
    for kind, target in pkg.rels(part).values():
        if kind == "diagramData":
            root = pkg.read(target)
            texts = [] if root is None else [normalise(t.text or "") for t in root.iter(f"{_A}t")]
            out.extend(t for t in texts if t)
    return out


_XDR = "{http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing}"


def drawing_texts(pkg: Package, sheet_part: str) -> list[str]:
    """What a sheet's drawing shows besides charts: the text of each shape and text box (a paragraph a
    line), then its SmartArt. openpyxl reads cells only, so a note typed into a text box was lost."""
    out: list[str] = []
    for kind, target in pkg.rels(sheet_part).values():
        if kind != "drawing":
            continue
        root = pkg.read(target)
        for shape in [] if root is None else root.iter(f"{_XDR}sp"):
            lines = [normalise("".join(t.text or "" for t in p.iter(f"{_A}t"))) for p in shape.iter(f"{_A}p")]
            text = "\n".join(line for line in lines if line)
            if text:
                out.append(text)
        out.extend(diagram_texts(pkg, target))
    return out
