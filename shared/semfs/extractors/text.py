"""Plain text, Markdown, source code, JSON, YAML, XML, CSV/TSV and HTML."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import PurePosixPath
from typing import Any

from semfs.domain.errors import FileRejected, ParseFailed
from semfs.domain.models import Block, ExtractedDocument, Location
from semfs.domain.outcomes import Outcome
from semfs.domain.text import normalise

ROWS_PER_BLOCK = 20


def decode(data: bytes) -> str:
    """UTF-8 (with or without BOM), UTF-16 by BOM, else the best charset-normalizer guess."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data[:2_000_000]).best()
    if best is None:
        return data.decode("latin-1")
    return str(best)


def _paragraph_blocks(text: str, kind: str = "paragraph") -> list[Block]:
    blocks: list[Block] = []
    for i, para in enumerate(p for p in re.split(r"\n\s*\n", text) if p.strip()):
        blocks.append(Block(kind=kind, text=para.strip(), location=Location(paragraph=i + 1)))
    return blocks


def extract_plain(text: str) -> ExtractedDocument:
    return ExtractedDocument(blocks=_paragraph_blocks(normalise(text)))


def extract_code(text: str) -> ExtractedDocument:
    # Code keeps its line structure: only strip trailing spaces.
    text = "\n".join(line.rstrip() for line in text.splitlines())
    return ExtractedDocument(blocks=_paragraph_blocks(text, kind="code"))


_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def extract_rtf(text: str) -> ExtractedDocument:
    """RTF's text without its control words (striprtf), never the raw markup."""
    from striprtf.striprtf import rtf_to_text

    try:
        plain: str = rtf_to_text(text, errors="ignore")  # type: ignore[no-untyped-call]
    except (ValueError, IndexError) as e:
        raise ParseFailed(f"the RTF cannot be read: {type(e).__name__}") from e
    return ExtractedDocument(blocks=_paragraph_blocks(normalise(plain)))


def extract_notebook(text: str) -> ExtractedDocument:
    """A Jupyter notebook as its cells: Markdown cells as Markdown (headings kept), code cells as code
    with their text outputs, each located by cell number; never the raw JSON."""
    try:
        nb = json.loads(text)
        cells = nb["cells"]
    except (ValueError, KeyError, TypeError) as e:
        raise ParseFailed("the notebook is not valid JSON with cells") from e
    blocks: list[Block] = []
    title = (nb.get("metadata") or {}).get("title")
    for n, cell in enumerate(cells if isinstance(cells, list) else [], start=1):
        if not isinstance(cell, dict):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        where = Location(paragraph=n, section=f"cell {n}")
        if cell.get("cell_type") == "markdown":
            md = extract_markdown(source)
            title = title or md.title
            blocks += [b.model_copy(update={"location": where}) for b in md.blocks]
        elif source.strip():
            blocks.append(Block(kind="code", text=source.rstrip(), location=where))
            for output in cell.get("outputs") or []:
                shown = output.get("text") or (output.get("data") or {}).get("text/plain") or ""
                shown = "".join(shown) if isinstance(shown, list) else str(shown)
                if shown.strip():
                    blocks.append(Block(kind="paragraph", text=normalise(shown).strip(), location=where))
    return ExtractedDocument(blocks=blocks, title=title if isinstance(title, str) else None)


_SETEXT = re.compile(r"^(=+|-+)\s*$")


def extract_markdown(text: str) -> ExtractedDocument:
    blocks: list[Block] = []
    title: str | None = None
    para: list[str] = []
    n = 0
    in_fence = False

    def flush() -> None:
        nonlocal n
        if para and "".join(para).strip():
            n += 1
            blocks.append(Block(text="\n".join(para).strip(), location=Location(paragraph=n)))
        para.clear()

    for line in normalise(text).splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        setext = None if in_fence or len(para) != 1 or not para[0].strip() else _SETEXT.match(line)
        if setext:  # "Title\n=====" is a level-1 heading, "Section\n-------" a level-2 one
            heading = para.pop().strip()
            level = 1 if line.startswith("=") else 2
            title = title or (heading if level == 1 else None)
            blocks.append(Block(kind="heading", text=heading, level=level, location=Location(paragraph=n + 1)))
            continue
        m = None if in_fence else _MD_HEADING.match(line)
        if m:
            flush()
            level = len(m.group(1))
            heading = m.group(2).strip()
            if title is None and level == 1:
                title = heading
            blocks.append(Block(kind="heading", text=heading, level=level, location=Location(paragraph=n + 1)))
        elif not line.strip() and not in_fence:
            flush()
        else:
            para.append(line)
    flush()
    return ExtractedDocument(blocks=blocks, title=title)


def extract_json(text: str) -> ExtractedDocument:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ParseFailed(f"invalid JSON at line {e.lineno}") from e
    pretty = json.dumps(value, indent=1, ensure_ascii=False)
    return ExtractedDocument(blocks=[Block(kind="code", text=pretty)])


def extract_yaml(text: str) -> ExtractedDocument:
    import yaml

    try:
        list(yaml.safe_load_all(text))
    except yaml.constructor.ConstructorError:
        pass  # application tags (!!python/object, !Ref in CloudFormation): valid YAML, only not safely loadable
    except yaml.YAMLError as e:
        raise ParseFailed(f"invalid YAML: {type(e).__name__}") from e
    return extract_code(text)


def extract_xml(data: bytes) -> ExtractedDocument:
    from xml.etree.ElementTree import ParseError

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring as defused_fromstring

    try:
        root = defused_fromstring(data, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as e:
        raise FileRejected("XML declares a DTD or entities", outcome=Outcome.REJECTED_XML_ENTITY) from e
    except ParseError as e:
        raise ParseFailed(f"invalid XML: {e}") from e
    lines: list[str] = []
    for el in root.iter():
        tag = el.tag.split("}")[-1] if isinstance(el.tag, str) else ""
        text = (el.text or "").strip()
        if text:
            lines.append(f"{tag}: {text}")
    return ExtractedDocument(blocks=_paragraph_blocks("\n".join(lines)) if lines else [])


def extract_table(text: str, delimiter: str) -> ExtractedDocument:
    try:
        rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))
    except csv.Error as e:
        raise ParseFailed(f"invalid delimited text: {e}") from e
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        return ExtractedDocument(blocks=[])
    header = " | ".join(c.strip() for c in rows[0])
    blocks: list[Block] = []
    body = rows[1:] or rows
    for i in range(0, len(body), ROWS_PER_BLOCK):
        part = body[i : i + ROWS_PER_BLOCK]
        lines = [header] + [" | ".join(c.strip() for c in r) for r in part]
        first = i + 2 if rows[1:] else i + 1
        blocks.append(
            Block(
                kind="table",
                text="\n".join(lines),
                location=Location(row_start=first, row_end=first + len(part) - 1),
            )
        )
    return ExtractedDocument(blocks=blocks)


_HTML_BLOCKS = [
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "p",
    "li",
    "pre",
    "blockquote",
    "tr",
    "dt",
    "dd",
    "figcaption",
    "caption",
]


_CHROME_CLASS = re.compile(
    r"(^|[\s_-])(nav|navbar|navigation|nav-panel|breadcrumbs?|menu|sidebar|skip-?link)($|[\s_-])"
)
_CHROME_ROLES = {"navigation", "banner", "contentinfo", "search"}
_NAV_LINE = re.compile(r"^\s*(next|previous|prev|up|contents|index|top)\s*:", re.IGNORECASE)


def _drop_chrome(soup: Any) -> None:
    """Navigation is not content: nav/aside elements, navigation roles and classes, and texinfo-style
    "Next: … Previous: … Up: … [Index]" link lines (a snippet or an answer must never quote them)."""
    # (an element inside one already removed is itself gone: skip it)
    for el in soup.find_all(["nav", "aside"]):
        if not el.decomposed:
            el.decompose()
    for el in soup.find_all(attrs={"role": True}):
        if not el.decomposed and str(el.get("role", "")).lower() in _CHROME_ROLES:
            el.decompose()
    for el in soup.find_all(["div", "ul", "section", "header", "footer", "p"]):
        if el.decomposed:
            continue
        classes = " ".join(el.get("class") or []) + " " + str(el.get("id") or "")
        if _CHROME_CLASS.search(classes.lower()):
            el.decompose()
            continue
        text = el.get_text(" ", strip=True)
        links = el.find_all("a")
        if links and _NAV_LINE.match(text) and len(text) < 300:
            linked = sum(len(a.get_text(" ", strip=True)) for a in links)
            if linked >= 0.3 * len(re.sub(r"\W", "", text) or "x"):
                el.decompose()


def extract_html(text: str) -> ExtractedDocument:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "svg", "iframe", "object", "head"]):
        if tag.name == "head":
            continue
        tag.decompose()
    _drop_chrome(soup)
    title_tag = soup.find("title")
    title = title_tag.get_text(" ", strip=True) if title_tag else None
    blocks: list[Block] = []
    n = 0
    for el in soup.find_all(_HTML_BLOCKS):
        if el.find_parent(_HTML_BLOCKS) is not None:
            continue
        sep = " | " if el.name == "tr" else " "
        content = normalise(el.get_text(sep, strip=True))
        if not content:
            continue
        n += 1
        if el.name in {"h1", "h2", "h3", "h4", "h5", "h6"}:
            level = int(el.name[1])
            title = title or (content if level == 1 else None)
            blocks.append(Block(kind="heading", text=content, level=level, location=Location(paragraph=n)))
        else:
            kind = "code" if el.name == "pre" else ("table" if el.name == "tr" else "paragraph")
            blocks.append(Block(kind=kind, text=content, location=Location(paragraph=n)))
    if not blocks:  # markup without block elements: fall back to all visible text
        body = soup.body or soup
        blocks = _paragraph_blocks(normalise(body.get_text("\n", strip=True)))
    return ExtractedDocument(blocks=blocks, title=title)


def extract_text_kind(kind: str, data: bytes, filename: str) -> ExtractedDocument:
    if kind == "xml":
        return extract_xml(data)
    text = decode(data)
    match kind:
        case "markdown":
            return extract_markdown(text)
        case "code":
            return extract_code(text)
        case "json":
            return extract_json(text)
        case "ipynb":
            return extract_notebook(text)
        case "rtf":
            return extract_rtf(text)
        case "yaml":
            return extract_yaml(text)
        case "csv":
            return extract_table(text, ",")
        case "tsv":
            return extract_table(text, "\t")
        case "html":
            return extract_html(text)
        case _:
            if PurePosixPath(filename).suffix.lower() == ".jsonl":
                return extract_code(text)
            return extract_plain(text)
