"""Plain text, Markdown, source code, JSON, YAML, XML, CSV/TSV and HTML."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Any

from semfs.domain.errors import FileRejected, ParseFailed
from semfs.domain.models import Block, ExtractedDocument, Location
from semfs.domain.outcomes import Outcome
from semfs.domain.text import could_be_title, normalise

ROWS_PER_BLOCK = 20


# how much more "chaos" (charset-normalizer's measure of mess) Windows-1252 may show than the best guess and
# still be chosen: on short Western text the guess is often another code page that decodes as cleanly
WESTERN_SLACK = 0.1


def decode(data: bytes) -> str:
    """UTF-8 (with or without BOM), UTF-16 by BOM, else the best charset-normalizer guess, read from a
    sample and applied to the whole file. Windows-1252 (what Latin-1 means in practice) wins when it reads
    about as cleanly as the guess: ``café crème brûlée`` in Latin-1 was guessed cp1250 (``crčme brűlée``).
    Text in another code page does not read cleanly as cp1252, so it keeps its own."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    matches = from_bytes(data[:2_000_000])
    best = matches.best()
    if best is None:
        return data.decode("cp1252", errors="replace")
    western = next((m for m in matches if m.encoding == "cp1252"), None)
    encoding = "cp1252" if western is not None and western.chaos <= best.chaos + WESTERN_SLACK else best.encoding
    return data.decode(encoding, errors="replace")  # the whole file, not the sample


def _paragraph_blocks(text: str, kind: str = "paragraph") -> list[Block]:
    blocks: list[Block] = []
    for i, para in enumerate(p for p in re.split(r"\n\s*\n", text) if p.strip()):
        blocks.append(Block(kind=kind, text=para.strip(), location=Location(paragraph=i + 1)))
    return blocks


_TITLE_END = re.compile(r"[,;:\-–—(\[]$")  # a line ending like this leads into what follows
_INNER_SENTENCE = re.compile(r"[.!?]\s+\S")  # a second sentence inside the line


def plain_title(blocks: list[Block]) -> str | None:
    """The first line of a plain-text file when it looks like a title: a paragraph of one line, of
    up to 30 words and 250 characters (a paper's title runs that long), with letters, one sentence
    at most, not leading into the next line, and followed by more text. ``8453819.txt`` then gets
    its paper's title, not ``8453819``."""
    if len(blocks) < 2:
        return None
    line = blocks[0].text
    if "\n" in line or len(line) > 250 or len(line.split()) > 30 or not re.search(r"[^\W\d_]{2}", line):
        return None
    if _TITLE_END.search(line) or _INNER_SENTENCE.search(line) or not could_be_title(line):
        return None
    return line.rstrip(".")


def extract_plain(text: str) -> ExtractedDocument:
    blocks = _paragraph_blocks(normalise(text))
    title = plain_title(blocks)
    if title is not None:
        blocks[0] = blocks[0].model_copy(update={"kind": "title"})
    return ExtractedDocument(blocks=blocks, title=title)


def extract_code(text: str) -> ExtractedDocument:
    # Code keeps its line structure: only strip trailing spaces.
    text = "\n".join(line.rstrip() for line in text.splitlines())
    return ExtractedDocument(blocks=_paragraph_blocks(text, kind="code"))


_MD_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


# destinations whose text a reader sees but striprtf skips: footnotes, headers and footers, comments, and
# text boxes (a shape's \shptxt, inside \shp and \shpinst; its \shprslt, the copy for old readers, stays
# skipped, as do the shape's properties, \sp)
_RTF_READ = re.compile(r"(?:\\\*)?\\(?:footnote|header[lrf]?|footer[lrf]?|annotation|shp|shpinst|shptxt)(?![A-Za-z])")


def extract_rtf(text: str) -> ExtractedDocument:
    """RTF's text without its control words (striprtf), never the raw markup. Footnotes, headers,
    footers, comments and text boxes are read as paragraphs of their own (striprtf drops those), and a
    character beyond the BMP (an emoji, written as two \\u surrogates) is one character, not two U+FFFD."""
    from striprtf.striprtf import rtf_to_text

    try:
        plain: str = rtf_to_text(_RTF_READ.sub(r"\\par ", text), errors="ignore")  # type: ignore[no-untyped-call]
    except (ValueError, IndexError) as e:
        raise ParseFailed(f"the RTF cannot be read: {type(e).__name__}") from e
    plain = plain.encode("utf-16", "surrogatepass").decode("utf-16", "replace")  # pairs joined
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


_NAMED_ENTITY = re.compile(rb"&([A-Za-z][A-Za-z0-9._-]{0,31});")
_XML_PREDEFINED = frozenset({b"amp", b"lt", b"gt", b"quot", b"apos"})


def _resolve_named(data: bytes) -> bytes:
    """Named references the document's (unread) DTD would define: HTML's names as character references
    (``&mdash;`` → ``&#8212;``), any other name kept as its text (``&product;``)."""
    from html.entities import html5

    def one(m: re.Match[bytes]) -> bytes:
        name = m.group(1)
        if name in _XML_PREDEFINED:
            return m.group(0)
        chars = html5.get(name.decode("ascii") + ";")
        return "".join(f"&#{ord(ch)};" for ch in chars).encode() if chars else b"&amp;" + name + b";"

    return _NAMED_ENTITY.sub(one, data)


def extract_xml(data: bytes) -> ExtractedDocument:
    """XML's text, element by element. A document may name its DTD (DocBook, JATS, XHTML, a plist: a
    public identifier is no attack), which is never fetched; entity declarations are refused (expansion
    bombs, external entities), and a named reference the unread DTD would define is read as HTML's."""
    from xml.etree.ElementTree import ParseError
    from xml.parsers.expat import errors

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring as defused_fromstring

    def parse(body: bytes) -> Any:
        return defused_fromstring(body, forbid_dtd=False, forbid_entities=True, forbid_external=True)

    try:
        try:
            root = parse(data)
        except ParseError as e:
            if e.code != errors.codes[errors.XML_ERROR_UNDEFINED_ENTITY]:
                raise
            root = parse(_resolve_named(data))
    except DefusedXmlException as e:
        raise FileRejected("XML declares entities", outcome=Outcome.REJECTED_XML_ENTITY) from e
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
    """Rows in blocks of ``ROWS_PER_BLOCK``, each block led by the header row, read as a stream: a table of a
    million rows is read whole (up to the file-size limit, issue 53.5) without a list of every row's cells."""
    blocks: list[Block] = []
    try:
        rows = (r for r in csv.reader(io.StringIO(text), delimiter=delimiter) if any(c.strip() for c in r))
        first = next(rows, None)
        if first is None:
            return ExtractedDocument(blocks=[])
        header = " | ".join(c.strip() for c in first)
        part: list[str] = []
        for row in rows:
            part.append(" | ".join(c.strip() for c in row))
            if len(part) == ROWS_PER_BLOCK:
                blocks.append(_rows(header, part, first=len(blocks) * ROWS_PER_BLOCK + 2))
                part = []
        if part:
            blocks.append(_rows(header, part, first=len(blocks) * ROWS_PER_BLOCK + 2))
    except csv.Error as e:
        raise ParseFailed(f"invalid delimited text: {e}") from e
    if not blocks:  # the header alone: the table's one row
        blocks.append(_rows(header, [header], first=1))
    return ExtractedDocument(blocks=blocks)


def _rows(header: str, lines: list[str], first: int) -> Block:
    location = Location(row_start=first, row_end=first + len(lines) - 1)
    return Block(kind="table", text="\n".join([header, *lines]), location=location)


_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
# Elements that start a new block; everything else is inline and joins the text around it.
_HTML_BLOCKS = {
    "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "dialog", "div", "dl", "dt",
    "fieldset", "figcaption", "figure", "footer", "form", "header", "hgroup", "hr", "legend", "li", "main", "nav",
    "ol", "p", "section", "summary", "table", "tbody", "thead", "tfoot", "ul", "br", "center", "menu",
}  # fmt: skip
_INVISIBLE = {"script", "style", "noscript", "template", "svg", "iframe", "object", "head", "title", "meta"}


class _HtmlWalk:
    """Every visible text node once, in document order, in the block its nearest block element makes."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.inline: list[str] = []

    def emit(self, kind: str, text: str, level: int = 0) -> None:
        content = normalise(text)
        if content:
            n = len(self.blocks) + 1
            self.blocks.append(Block(kind=kind, text=content, level=level, location=Location(paragraph=n)))

    def flush(self) -> None:
        if self.inline:
            self.emit("paragraph", re.sub(r"\s+", " ", "".join(self.inline)))
            self.inline = []

    def walk(self, el: Any) -> None:
        from bs4.element import Comment, Declaration, Doctype, NavigableString, ProcessingInstruction, Tag

        for child in el.children:
            if isinstance(child, Tag):
                name = child.name
                if name in _INVISIBLE or child.has_attr("hidden"):
                    continue
                if name in _HEADINGS:
                    self.flush()
                    self.emit("heading", child.get_text(" ", strip=True), int(name[1]))
                elif name == "pre":
                    self.flush()
                    self.emit("code", child.get_text())
                elif name == "tr":
                    self.flush()
                    cells = child.find_all(["td", "th"], recursive=False) or [child]
                    self.emit("table", " | ".join(c.get_text(" ", strip=True) for c in cells))
                elif name in _HTML_BLOCKS:
                    self.flush()
                    self.walk(child)
                    self.flush()
                else:
                    self.walk(child)
            elif isinstance(child, NavigableString) and not isinstance(
                child, (Comment, Doctype, Declaration, ProcessingInstruction)
            ):
                self.inline.append(str(child))


_CHROME_CLASS = re.compile(
    r"(^|[\s_-])(nav|navbar|navigation|nav-panel|breadcrumbs?|menu|sidebar|skip-?link|dropdown|portlet|toc)($|[\s_-])"
)
_CHROME_ROLES = {"navigation", "banner", "contentinfo", "search"}
_CONTENT_ROLES = re.compile(r"^(tablist|tab|tabpanel|main|article)$", re.I)
_NAV_LINE = re.compile(r"^\s*(next|previous|prev|up|contents|index|top)\s*:", re.IGNORECASE)


def _drop_chrome(soup: Any) -> None:
    """Navigation is not content: nav/aside elements, navigation roles and classes, and texinfo-style
    "Next: … Previous: … Up: … [Index]" link lines (a snippet or an answer must never quote them)."""
    # (an element inside one already removed is itself gone: skip it)
    for el in soup.find_all(["nav", "aside", "button"]):
        if not el.decomposed:
            el.decompose()
    for el in soup.find_all(attrs={"role": True}):
        # a page landmark inside the main content is a misuse of the role (a search result's caption)
        if (
            not el.decomposed
            and str(el.get("role", "")).lower() in _CHROME_ROLES
            and el.find_parent(["main", "article"]) is None
        ):
            el.decompose()
    for el in soup.find_all(["div", "ul", "section", "header", "footer", "p"]):
        if el.decomposed:
            continue
        classes = " ".join(el.get("class") or []) + " " + str(el.get("id") or "")
        if _CHROME_CLASS.search(classes.lower()):
            if el.find(attrs={"role": _CONTENT_ROLES}) is None:  # a "tab-menu" of content tabs is content
                el.decompose()
            continue
        text = el.get_text(" ", strip=True)
        links = el.find_all("a")
        if links and _NAV_LINE.match(text) and len(text) < 300:
            linked = sum(len(a.get_text(" ", strip=True)) for a in links)
            if linked >= 0.3 * len(re.sub(r"\W", "", text) or "x"):
                el.decompose()


# What hides an element from a reader, read from its parsed declarations (tinycss2, the CSS Syntax Level 3
# tokenizer WeasyPrint uses; linear in the style's length): display and visibility, no opacity, no font
# size, a zero-sized box that clips what overflows it, a box moved a thousand pixels off the screen, or a
# clip to nothing. A pattern over the raw text was not enough: an unanchored ``width`` alternative matched
# ``border-width: 0``, ``min-width: 0px`` and Apple Mail's ``-webkit-text-stroke-width: 0px``, and threw
# away visible mail text (issue 47.6). What a browser shows stays, whatever its property names contain.
_OFFSETS = frozenset({"left", "top", "right", "text-indent", "margin-left", "margin-top"})
_BOX = frozenset({"width", "height", "max-width", "max-height"})
_OFF_SCREEN_PX = -999.0
_INVISIBLE_OPACITY = 0.02


def _length_px(token: Any) -> float | None:
    """A length token in CSS pixels (``em``/``rem`` at 16 px), ``None`` for anything else."""
    if token.type == "number":
        return float(token.value)
    if token.type == "dimension":
        scale = {"px": 1.0, "pt": 4 / 3, "em": 16.0, "rem": 16.0}.get(token.lower_unit)
        return float(token.value) * scale if scale is not None else None
    return None


def _hides(style: str) -> bool:
    """Whether declarations ``style`` (an inline ``style`` or a rule's body) hide an element from a reader:
    not displayed, invisible, transparent, no size, clipped to nothing, or moved off the screen."""
    import tinycss2

    values: _Declarations = {}
    for item in tinycss2.parse_declaration_list(style, skip_comments=True, skip_whitespace=True):
        if item.type == "declaration":
            values[item.lower_name] = [t for t in item.value if t.type not in ("whitespace", "comment")]
    return _not_shown(values) or _no_room(values) or _clipped_away(values)


_Declarations = dict[str, list[Any]]


def _ident(values: _Declarations, name: str) -> str | None:
    tokens = values.get(name) or []
    return str(tokens[0].lower_value) if len(tokens) == 1 and tokens[0].type == "ident" else None


def _length(values: _Declarations, name: str) -> float | None:
    tokens = values.get(name) or []
    return _length_px(tokens[0]) if len(tokens) == 1 else None


def _not_shown(values: _Declarations) -> bool:
    """``display: none``, ``visibility: hidden``, or an opacity no one can read."""
    if _ident(values, "display") == "none" or _ident(values, "visibility") in ("hidden", "collapse"):
        return True
    opacity = values.get("opacity") or []
    if len(opacity) == 1 and opacity[0].type in ("number", "percentage"):
        return float(opacity[0].value) / (100.0 if opacity[0].type == "percentage" else 1.0) <= _INVISIBLE_OPACITY
    return False


def _no_room(values: _Declarations) -> bool:
    """A zero font size, a box of no size that clips what overflows it, or a place off the screen."""
    if _length(values, "font-size") == 0:
        return True
    clipped = {_ident(values, o) for o in ("overflow", "overflow-x", "overflow-y")} & {"hidden", "clip"}
    if clipped and any(_length(values, b) == 0 for b in _BOX):
        return True
    return any((_length(values, o) or 0.0) <= _OFF_SCREEN_PX for o in _OFFSETS)


def _clipped_away(values: _Declarations) -> bool:
    """``clip: rect(…)`` to a pixel or less, or ``clip-path: inset(…)`` of half the box or more."""
    for name in ("clip", "clip-path"):
        tokens = values.get(name) or []
        if len(tokens) != 1 or tokens[0].type != "function":
            continue
        args = [_length_px(t) for t in tokens[0].arguments if t.type not in ("whitespace", "literal")]
        percent = [float(t.value) for t in tokens[0].arguments if t.type == "percentage"]
        if tokens[0].lower_name == "rect" and args and all(a is not None and a <= 1 for a in args):
            return True
        if tokens[0].lower_name == "inset" and percent and percent[0] >= 50:
            return True
    return False


_SIMPLE_SELECTOR = re.compile(r"(?:[a-z][a-z0-9]*)?([.#])([\w-]+)", re.I)


def _hidden_by_stylesheet(soup: Any) -> tuple[set[str], set[str]]:
    """The classes and ids that a ``<style>`` rule hides (simple ``.class``, ``#id``, ``tag.class`` selectors;
    read by splitting on braces, never by a pattern that could rescan the sheet)."""
    classes: set[str] = set()
    ids: set[str] = set()
    for style in soup.find_all("style"):
        for rule in style.get_text().split("}"):
            selectors, _, body = rule.rpartition("{")
            if not _hides(body):
                continue
            for selector in selectors.split(","):
                m = _SIMPLE_SELECTOR.fullmatch(selector.strip())
                if m:
                    (classes if m.group(1) == "." else ids).add(m.group(2))
    return classes, ids


def _drop_hidden(soup: Any) -> None:
    """Text a reader never sees is no part of the document: it is where instructions to a model hide
    (issue 27). Removed before anything reads the page: elements with ``hidden`` or ``aria-hidden="true"``,
    an inline style that hides them (``_hides``), or a class or id a stylesheet hides."""
    classes, ids = _hidden_by_stylesheet(soup)
    for el in soup.find_all(True):
        if el.decomposed:
            continue
        attrs = el.attrs or {}
        if (
            "hidden" in attrs
            or str(attrs.get("aria-hidden", "")).strip().lower() == "true"
            or ("style" in attrs and _hides(str(attrs["style"])))
            or (classes and classes.intersection(el.get("class") or []))
            or (ids and str(attrs.get("id", "")) in ids)
        ):
            el.decompose()


def _html_blocks(soup: Any) -> list[Block]:
    walk = _HtmlWalk()
    walk.walk(soup)
    walk.flush()
    return walk.blocks


def extract_html(text: str) -> ExtractedDocument:
    """All visible text with its block structure. Hidden elements are dropped (``_drop_hidden``), and so is
    navigation chrome, unless it is the page: a page that is nothing but links keeps them (a site map is still
    worth finding)."""
    import warnings

    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    with warnings.catch_warnings():  # XHTML (EPUB chapters, .xhtml) is read as HTML on purpose
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(text, "lxml")
    title_tag = soup.find("title")
    title = title_tag.get_text(" ", strip=True) if title_tag else None
    _drop_hidden(soup)
    everything = _html_blocks(soup)
    _drop_chrome(soup)
    content = _html_blocks(soup)
    total = sum(len(b.text) for b in everything)
    blocks = content if sum(len(b.text) for b in content) >= min(200, 0.2 * total) else everything
    if not title:
        title = next((b.text for b in blocks if b.kind == "heading" and b.level == 1), None)
    return ExtractedDocument(blocks=blocks, title=title or None)


def extract_epub(data: bytes) -> ExtractedDocument:
    """An EPUB's chapters in reading (spine) order, each through the HTML walk; the chapter file is the
    section of its blocks. ebooklib parses the package XML with entity resolution off."""
    import io

    import ebooklib
    from ebooklib import epub

    try:
        book = epub.read_epub(io.BytesIO(data), {"ignore_ncx": True})
    except Exception as e:  # ebooklib raises EpubException, KeyError, lxml errors for a broken book
        raise ParseFailed(f"the EPUB cannot be read: {type(e).__name__}") from e
    titles = book.get_metadata("DC", "title")
    meta = [
        (label, ", ".join(str(v) for v, _ in book.get_metadata("DC", field) if v))
        for label, field in (("Authors", "creator"), ("Description", "description"), ("Publisher", "publisher"))
    ]
    about = "\n".join(f"{label}: {value}" for label, value in meta if value)
    blocks: list[Block] = [Block(kind="notes", text=normalise(about), location=Location(paragraph=1))] if about else []
    for item_id, _ in book.spine:
        item = book.get_item_with_id(item_id)
        if item is None or item.get_type() != ebooklib.ITEM_DOCUMENT:
            continue
        chapter = extract_html(item.get_content().decode("utf-8", errors="replace"))
        section = PurePosixPath(item.get_name()).stem
        for block in chapter.blocks:
            location = Location(section=section, paragraph=len(blocks) + 1)
            blocks.append(block.model_copy(update={"location": location}))
    return ExtractedDocument(blocks=blocks, title=(titles[0][0] if titles else None) or None)


# a page formatted for a terminal (man, grotty) keeps its bold, underline and colour as ANSI codes and
# overstrikes: the words a reader sees are what remains
TERMINAL_FORMATTING = r"\x1b\[[0-9;]*[A-Za-z]|[^\x08]\x08"  # ANSI SGR and cursor codes; "X\bX" overstrikes
_TERMINAL = re.compile(TERMINAL_FORMATTING)


def extract_text_kind(kind: str, data: bytes, filename: str) -> ExtractedDocument:
    """A text format through its parser, as the format registry names it (``formats.py``): the row the
    file's name names when it is of this kind (``.jsonl`` is text read as code), else the kind's first row."""
    from semfs.extractors.formats import TEXT_BY_NAME, reader_of

    if kind == "xml":  # parsed from its bytes: the declaration says their encoding
        return extract_xml(data)
    named = TEXT_BY_NAME.get(PurePosixPath(filename).suffix.lower())
    fmt = named if named is not None and named.kind == kind else reader_of(kind)
    parse: Callable[[str], ExtractedDocument] = globals()[fmt.parser]
    return parse(decode(data))


def extract_plain_text(text: str) -> ExtractedDocument:
    """Plain text, a terminal's formatting (colours, overstrikes) left out."""
    return extract_plain(_TERMINAL.sub("", text) if "\x1b" in text or "\x08" in text else text)


def extract_csv(text: str) -> ExtractedDocument:
    return extract_table(text, csv_delimiter(text))


_DELIMITERS = (",", ";", "\t", "|")  # a comma first: it wins a tie


def csv_delimiter(text: str, lines: int = 50) -> str:
    """The delimiter a ``.csv`` file uses: the one that splits its first ``lines`` lines (read by ``csv``,
    quotes and all) into the same number of columns, more than one, most often. A German spreadsheet's
    export (``Preis;Menge`` with ``0,25`` decimal commas) was split on its commas."""
    sample = "\n".join(text[:65_536].splitlines()[:lines])
    best, best_score = ",", (0.0, 0)
    for delimiter in _DELIMITERS:
        try:
            counts = [len(r) for r in csv.reader(io.StringIO(sample), delimiter=delimiter) if any(r)]
        except csv.Error:
            continue
        if not counts:
            continue
        width = max(set(counts), key=counts.count)
        score = (counts.count(width) / len(counts), width) if width > 1 else (0.0, 0)
        if score > best_score:
            best, best_score = delimiter, score
    return best


def extract_tsv(text: str) -> ExtractedDocument:
    return extract_table(text, "\t")


def extract_man_page(text: str) -> ExtractedDocument:
    from semfs.extractors.troff import extract_man

    return extract_man(text)


# ---- calendars and contact cards: what a person reads of them, in lines the entity patterns know
# ("Name <address>" is a person with an address, ISO dates are dates)

_CALENDAR_ITEMS = ("VEVENT", "VTODO", "VJOURNAL")


def extract_calendar(text: str) -> ExtractedDocument:
    """An iCalendar file (``.ics``, RFC 5545, read by ``icalendar``: folded lines rejoined, escapes undone):
    each event, to-do or journal entry a heading (its summary) and what it says — when, where, who
    organises it and who attends (``Name <address>``), its description. A calendar of one event is titled
    by it."""
    import icalendar

    cal = icalendar.Calendar.from_ical(text)
    blocks: list[Block] = []
    for n, item in enumerate(cal.walk(), start=1):
        if item.name not in _CALENDAR_ITEMS:
            continue
        summary = " ".join(str(item.get("SUMMARY") or "").split()) or f"{item.name.title()[1:]} {n}"
        blocks.append(Block(kind="heading", text=summary, level=2, location=Location(section=summary)))
        lines = [f"{label}: {value}" for label, value in _calendar_fields(item) if value]
        if lines:
            blocks.append(Block(kind="paragraph", text="\n".join(lines), location=Location(section=summary)))
        description = str(item.get("DESCRIPTION") or "").strip()
        if description:
            blocks.append(Block(kind="paragraph", text=description, location=Location(section=summary)))
    headings = [b.text for b in blocks if b.kind == "heading"]
    name = str(cal.get("X-WR-CALNAME") or "").strip()
    return ExtractedDocument(blocks=blocks, title=headings[0] if len(headings) == 1 else (name or None))


def _calendar_fields(item: Any) -> list[tuple[str, str]]:
    def when(key: str) -> str:
        value = item.get(key)
        if value is None:
            return ""
        moment = value.dt
        return str(moment.isoformat(sep=" ", timespec="minutes") if hasattr(moment, "hour") else moment.isoformat())

    def person(value: Any) -> str:
        address = str(value).removeprefix("mailto:").removeprefix("MAILTO:")
        name = str(value.params.get("CN", "")).strip() if hasattr(value, "params") else ""
        return f"{name} <{address}>" if name else address

    attendees = item.get("ATTENDEE") or []
    attendees = attendees if isinstance(attendees, list) else [attendees]
    start, end = when("DTSTART"), when("DTEND") or when("DUE")
    return [
        ("When", f"{start} to {end}" if start and end else start or end),
        ("Where", " ".join(str(item.get("LOCATION") or "").split())),
        ("Organizer", person(item["ORGANIZER"]) if item.get("ORGANIZER") else ""),
        ("Attendees", ", ".join(person(a) for a in attendees)),
        ("Status", str(item.get("STATUS") or "").title()),
    ]


def extract_vcard(text: str) -> ExtractedDocument:
    """Contact cards (``.vcf``, vCard 2.1 to 4.0, read by ``vobject``: quoted-printable and charsets undone,
    so ``Anton=C3=ADn`` reads Antonín): each card a heading (its name) and its organisation, title,
    ``Name <address>``, phone numbers, postal addresses and note. A file of one card is titled by it."""
    import vobject

    blocks: list[Block] = []
    for n, card in enumerate(vobject.readComponents(text), start=1):
        name = _card_value(card, "fn") or f"Contact {n}"
        blocks.append(Block(kind="heading", text=name, level=2, location=Location(section=name)))
        emails = [str(e.value) for e in card.contents.get("email", [])]
        lines = [f"Email: {name} <{e}>" for e in emails]
        for label, key in (("Organisation", "org"), ("Title", "title"), ("Role", "role"), ("Birthday", "bday")):
            if value := _card_value(card, key):
                lines.append(f"{label}: {value}")
        lines += [f"Phone: {t.value}" for t in card.contents.get("tel", [])]
        lines += [f"Address: {' '.join(str(a.value).split())}" for a in card.contents.get("adr", [])]
        if note := _card_value(card, "note"):
            lines.append(note)
        blocks.append(Block(kind="paragraph", text="\n".join(lines), location=Location(section=name)))
    headings = [b.text for b in blocks if b.kind == "heading"]
    return ExtractedDocument(blocks=blocks, title=headings[0] if len(headings) == 1 else None)


MAX_CARD_PEOPLE = 200  # contacts one card file or calendar may add


def people_of(kind: str, text: str) -> list[str]:
    """The people a contact-card file (``vcard``) or a calendar (``calendar``: organisers and attendees) names
    with a mail address, as ``Name <address>`` (at most ``MAX_CARD_PEOPLE``); none for another kind or a file
    its library cannot read (its extraction says why)."""
    import icalendar
    import vobject

    found: list[str] = []
    try:
        if kind == "vcard":
            for card in vobject.readComponents(text):
                found += [f"{_card_value(card, 'fn')} <{e.value}>".strip() for e in card.contents.get("email", [])]
        elif kind == "calendar":
            for item in icalendar.Calendar.from_ical(text).walk():
                for person in [item.get("ORGANIZER"), *_as_list(item.get("ATTENDEE"))]:
                    address = str(person or "").removeprefix("mailto:").removeprefix("MAILTO:")
                    if "@" in address:
                        name = str(getattr(person, "params", {}).get("CN", "")).strip()
                        found.append(f"{name} <{address}>" if name else address)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, vobject.base.ParseError):
        return []
    return list(dict.fromkeys(found))[:MAX_CARD_PEOPLE]


def _as_list(value: Any) -> list[Any]:
    return [] if value is None else list(value) if isinstance(value, list) else [value]


def _card_value(card: Any, key: str) -> str:
    found = card.contents.get(key)
    if not found:
        return ""
    value = found[0].value
    return " ".join(" ".join(str(v) for v in value).split() if isinstance(value, list) else str(value).split())
