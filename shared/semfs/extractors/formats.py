"""The format registry: every format semfs reads, declared once (issue 48: the formats were dispatched by two
``match`` blocks and named by tables the sniffer, the parsers and the web page each kept).

A ``Format`` says what a file of it is (``kind``, the MIME type stored on its record, the words people read
for it), how it is recognised (the names that say it; binary formats are recognised by their bytes first,
``sniff.py``), and how it is read (``reader``: the parser family, and for text formats the parser of
``extractors/text.py``). Everything else derives from this table: the sniffer's extension tables, the reader
dispatch (``dispatch._extract``, ``text.extract_text_kind``), and the web page's type names are checked
against it (``tests/unit/test_vocabulary.py``). The bounds a format is read under are ``limits.py``'s, the
same for all.

A new format: a row here, a parser (a text one in ``text.py``, named by ``parser``; another reader family in
``dispatch.READERS``), the magic bytes in ``sniff.py`` when it is binary, its words in ``web/js/core.js``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

Reader = Literal[
    "text", "pdf", "postscript", "ooxml", "converted", "odf", "epub", "msg", "image", "compressed", "bundle"
]


@dataclass(frozen=True)
class Format:
    kind: str  # what the sniffer answers and the readers are keyed by
    mime: str  # stored on the record
    label: str  # what people read for it (the web page's Type facet)
    names: tuple[str, ...] = ()  # extensions that say it (lowercase, with the dot)
    reader: Reader = "text"
    parser: str = ""  # a text format's parser in extractors/text.py (``extract_…``: of the text; XML's, of the bytes)


FORMATS: tuple[Format, ...] = (
    # text, recognised by name once the bytes are text
    Format("text", "text/plain", "Text", (".txt", ".text", ".log"), parser="extract_plain_text"),
    Format("text", "application/jsonl", "JSON lines", (".jsonl",), parser="extract_code"),
    Format("markdown", "text/markdown", "Markdown", (".md", ".markdown"), parser="extract_markdown"),
    Format("markdown", "text/x-rst", "reStructuredText", (".rst",), parser="extract_markdown"),
    Format("json", "application/json", "JSON", (".json",), parser="extract_json"),
    Format("ipynb", "application/x-ipynb+json", "Notebook", (".ipynb",), parser="extract_notebook"),
    Format("rtf", "application/rtf", "RTF", (".rtf",), parser="extract_rtf"),
    Format("yaml", "application/yaml", "YAML", (".yaml", ".yml"), parser="extract_yaml"),
    Format("xml", "application/xml", "XML", (".xml",), parser="extract_xml"),
    Format("csv", "text/csv", "CSV", (".csv",), parser="extract_csv"),
    Format("tsv", "text/tab-separated-values", "TSV", (".tsv",), parser="extract_tsv"),
    Format("calendar", "text/calendar", "Calendar", (".ics", ".ical", ".ifb"), parser="extract_calendar"),
    Format("vcard", "text/vcard", "Contact card", (".vcf", ".vcard"), parser="extract_vcard"),
    Format("html", "text/html", "Web page", (".html", ".htm"), parser="extract_html"),
    Format("html", "application/xhtml+xml", "Web page", (".xhtml",), parser="extract_html"),
    Format("man", "text/troff", "Manual page", parser="extract_man_page"),  # by its name's section and .TH
    Format(
        "code",
        "text/x-source",
        "Source code",
        tuple(
            ".py .js .ts .tsx .jsx .java .go .rs .c .h .cpp .hpp .cs .rb .php .sh .bash .sql .kt .swift .scala .r"
            " .m .toml .ini .cfg .css .scss .lua .pl .tf .proto .graphql .dockerfile .makefile".split()
        ),
        parser="extract_code",
    ),
    # binary, recognised by their bytes; a name that claims one must match them
    Format("pdf", "application/pdf", "PDF", (".pdf",), reader="pdf"),
    Format(
        "docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "Word", (".docx",), "ooxml"
    ),
    Format("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "Excel", (".xlsx",), "ooxml"),
    Format(
        "pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "PowerPoint",
        (".pptx",),
        "ooxml",
    ),
    Format("doc", "application/msword", "Word (old)", (".doc",), "converted"),
    Format("xls", "application/vnd.ms-excel", "Excel (old)", (".xls",), "converted"),
    Format("ppt", "application/vnd.ms-powerpoint", "PowerPoint (old)", (".ppt",), "converted"),
    Format("postscript", "application/postscript", "PostScript", (".ps", ".eps"), "postscript"),
    Format("odt", "application/vnd.oasis.opendocument.text", "OpenDocument text", (".odt",), "odf"),
    Format("ods", "application/vnd.oasis.opendocument.spreadsheet", "OpenDocument sheet", (".ods",), "odf"),
    Format("odp", "application/vnd.oasis.opendocument.presentation", "OpenDocument presentation", (".odp",), "odf"),
    Format("epub", "application/epub+zip", "EPUB", (".epub",), "epub"),
    Format("msg", "application/vnd.ms-outlook", "Outlook message", (".msg",), "msg"),
    Format("image", "image/png", "PNG image", (".png",), "image"),
    Format("image", "image/jpeg", "JPEG image", (".jpg", ".jpeg"), "image"),
    Format("image", "image/tiff", "TIFF image", (".tif", ".tiff"), "image"),
    Format("image", "image/gif", "GIF image", (".gif",), "image"),
    Format("image", "image/webp", "WebP image", (".webp",), "image"),
    # bundles: each file inside becomes a file of its own (bundles.py); their own text lists what they hold
    Format("zip", "application/zip", "ZIP archive", (".zip",), "bundle"),
    Format("tar", "application/x-tar", "tar archive", (".tar",), "bundle"),
    Format("tnef", "application/vnd.ms-tnef", "Outlook attachments (TNEF)", (), "bundle"),
    # a message saved as a file (not delivered: no thread, no contacts): its text, its attachments as members
    Format("email", "message/rfc822", "Email", (".eml",), "bundle"),
    Format("compressed:gzip", "application/gzip", "gzip", (".gz",), "compressed"),
    Format("compressed:bzip2", "application/x-bzip2", "bzip2", (".bz2",), "compressed"),
    Format("compressed:xz", "application/x-xz", "xz", (".xz",), "compressed"),
)

# what the sniffer, the readers and the tests look up
BY_NAME: dict[str, Format] = {name: f for f in FORMATS for name in f.names}
TEXT_BY_NAME: dict[str, Format] = {name: f for name, f in BY_NAME.items() if f.reader == "text"}
BY_MIME: dict[str, Format] = {f.mime: f for f in FORMATS}


def reader_of(kind: str) -> Format:
    """The format a sniffed kind is read as: its first row (a kind's rows share their reader)."""
    for f in FORMATS:
        if f.kind == kind:
            return f
    raise KeyError(kind)


def names_of(reader: Reader) -> frozenset[str]:
    """The extensions of every format one reader family reads (``image``: the names an image must match)."""
    return frozenset(name for f in FORMATS if f.reader == reader for name in f.names)


def type_label(mime: str) -> str:
    """The name a person reads for a MIME type: its format's label (``Manual page``), else its subtype."""
    known = BY_MIME.get(mime)
    return known.label if known is not None else (mime.rsplit("/", 1)[-1] or mime)


def compressed_name(filename: str) -> bool:
    """Whether ``filename`` says its bytes are compressed (``notes.txt.gz``)."""
    return PurePosixPath(filename).suffix.lower() in names_of("compressed")
