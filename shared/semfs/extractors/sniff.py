"""What a file really is: magic bytes first, the extension second, and a mismatch is a rejection."""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from io import BytesIO
from pathlib import PurePosixPath

from semfs.domain.errors import FileRejected, FileSkipped
from semfs.domain.outcomes import Outcome
from semfs.extractors.bundles import TAR_MAGIC_AT, TNEF_MAGIC
from semfs.extractors.formats import BY_NAME, FORMATS, TEXT_BY_NAME, names_of, reader_of
from semfs.extractors.text import TERMINAL_FORMATTING
from semfs.extractors.troff import looks_like_man

# The names and MIME types come from the format registry (formats.py); what is only the sniffer's is here:
# magic bytes, and the parts that make a zip an OOXML package.
TEXT_KINDS = {name: (f.kind, f.mime) for name, f in TEXT_BY_NAME.items() if f.kind != "code"}
CODE_EXTS = frozenset(reader_of("code").names)
_PACKAGE_PARTS = {"docx": "word/", "xlsx": "xl/", "pptx": "ppt/"}
OOXML = {name: (f.kind, f.mime, _PACKAGE_PARTS[f.kind]) for f in FORMATS if f.reader == "ooxml" for name in f.names}
IMAGES = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"II*\x00": "image/tiff",
    b"MM\x00*": "image/tiff",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
}
IMAGE_EXTS = names_of("image")
# one file compressed on its own (a man page, a changelog): read as what it holds
COMPRESSED = {
    b"\x1f\x8b": ("gzip", BY_NAME[".gz"].mime),
    b"BZh": ("bzip2", BY_NAME[".bz2"].mime),
    b"\xfd7zXZ\x00": ("xz", BY_NAME[".xz"].mime),
}
COMPRESSED_EXTS = names_of("compressed")
COMPRESSED_TARS = frozenset({".tgz", ".tbz2", ".txz"})
_MAN_EXT = re.compile(r"^\.(?:[1-9][a-z0-9]{0,8}|man|n|l)$")
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"


@dataclass(frozen=True)
class FileKind:
    kind: str  # text|markdown|code|json|yaml|xml|csv|tsv|html|pdf|docx|xlsx|pptx|image
    mime: str


def _image_magic(head: bytes) -> FileKind | None:
    for magic, mime in IMAGES.items():
        if head.startswith(magic):
            return FileKind("image", mime)
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return FileKind("image", "image/webp")
    return None


_CONTROL = frozenset(range(0x00, 0x09)) | frozenset(range(0x0E, 0x20)) | {0x7F}
_TERMINAL = re.compile(TERMINAL_FORMATTING.encode())


def _utf8(head: bytes) -> bool:
    """Valid UTF-8, allowing a character the 8 KB cut split at the end."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        return e.reason == "unexpected end of data" and e.start >= len(head) - 3
    return True


def looks_binary(data: bytes) -> bool:
    """Bytes that are no text in any encoding: NULs (unless a UTF-16 BOM says so), more than 1 % control
    bytes, or no encoding under which charset-normalizer finds them coherent."""
    head = data[:8192]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False  # UTF-16 text has NULs; only a BOM lets it through
    if b"\x00" in head:
        return True
    if sum(1 for b in _TERMINAL.sub(b"", head) if b in _CONTROL) > len(head) / 100:
        return True  # (a terminal's formatting, ANSI colours and overstrikes, is text: nroff/grotty output)
    if head.isascii() or _utf8(head):
        return False  # (valid UTF-8 with non-ASCII in it is text: random bytes almost never are; charset-
        # normalizer judged Japanese and Russian man pages, troff requests between the words, as chaos)
    from charset_normalizer import from_bytes

    best = from_bytes(head).best()
    return best is None or best.chaos > 0.3


def sniff(data: bytes, filename: str) -> FileKind:
    """Classify ``data``. Raises ``FileRejected(REJECTED_TYPE_MISMATCH)`` when the extension claims a
    format the bytes are not, ``FileSkipped`` for formats semfs does not read. The bytes decide first
    (magic numbers), then, for text, the name."""
    ext = PurePosixPath(filename.lower()).suffix
    # PDF readers accept junk before the header (within 1 KB); a text that merely mentions %PDF-1.7 does
    # not also end with the end-of-file marker
    is_pdf = data.startswith(b"%PDF-") or (b"%PDF-" in data[:1024] and b"%%EOF" in data[-2048:])
    claimed = _as_claimed(data, ext, is_pdf)
    if claimed is not None:
        return claimed
    found = _by_magic(data, ext, is_pdf)
    if found is not None:
        return found
    _refuse_unread(data, ext)
    return _text_kind(data, ext, filename)


def _as_claimed(data: bytes, ext: str, is_pdf: bool) -> FileKind | None:
    """An extension that names a binary format must be that format: a .docx that is a zip is Word (the
    archive guard checks the package before it is opened); one that is not is refused, or skipped when
    it is an encrypted package."""
    if ext == ".pdf" and not is_pdf:
        raise FileRejected("the .pdf extension does not match the content", outcome=Outcome.REJECTED_TYPE_MISMATCH)
    if ext in IMAGE_EXTS and _image_magic(data[:64]) is None:
        raise FileRejected(f"the {ext} extension does not match the content", outcome=Outcome.REJECTED_TYPE_MISMATCH)
    if ext not in OOXML:
        return None
    kind, mime, _ = OOXML[ext]
    if data.startswith(b"PK\x03\x04"):
        return FileKind(kind, mime)
    # An encrypted OOXML file is an OLE container holding EncryptionInfo + EncryptedPackage.
    if (
        data.startswith(OLE_MAGIC)
        and b"E\x00n\x00c\x00r\x00y\x00p\x00t\x00e\x00d\x00P\x00a\x00c\x00k\x00a\x00g\x00e" in data
    ):
        raise FileSkipped("the document is password-protected", outcome=Outcome.SKIPPED_ENCRYPTED)
    raise FileRejected(f"the {ext} extension does not match the content", outcome=Outcome.REJECTED_TYPE_MISMATCH)


def _by_magic(data: bytes, ext: str, is_pdf: bool) -> FileKind | None:
    """What the first bytes say, whatever the name: PDF, an image, a zip or OLE container, RTF, a
    compressed stream."""
    head = data[:64]
    image = _image_magic(head)
    if is_pdf:
        return FileKind("pdf", "application/pdf")
    if image is not None:
        return image
    if head.startswith(b"PK\x03\x04"):
        return _sniff_zip(data)
    if data.startswith(OLE_MAGIC):
        return _sniff_ole(data, ext)
    if data.startswith((b"%!PS", b"\xc5\xd0\xd3\xc6")):  # PostScript (and DOS EPS) by its header
        return FileKind("postscript", "application/postscript")
    if data.startswith(TNEF_MAGIC):  # Outlook's winmail.dat: the attachments of a message sent as RTF
        return FileKind("tnef", "application/vnd.ms-tnef")
    if data[TAR_MAGIC_AT : TAR_MAGIC_AT + 5] == b"ustar":
        return FileKind("tar", "application/x-tar")
    if data.lstrip()[:5] == b"{\\rtf":  # RTF by its header, whatever the name says
        return FileKind("rtf", "application/rtf")
    for magic, (method, mime) in COMPRESSED.items():
        if head.startswith(magic):
            return FileKind(f"compressed:{method}", mime)
    return None


def _refuse_unread(data: bytes, ext: str) -> None:
    """Audio, video and other binary formats are skipped, the reason naming what the file is."""
    media = _media_magic(data[:64])
    if media is not None:
        raise FileSkipped(
            f"{media} is not read: semfs indexes text and images", outcome=Outcome.SKIPPED_UNSUPPORTED_TYPE
        )
    if looks_binary(data):
        raise FileSkipped(
            f"unsupported binary format ({ext or 'no extension'})", outcome=Outcome.SKIPPED_UNSUPPORTED_TYPE
        )


def _text_kind(data: bytes, ext: str, filename: str) -> FileKind:
    """A text by its name (a man page, markdown, CSV, source code…), else by its first markup."""
    if _MAN_EXT.match(ext) and looks_like_man(data[:4096]):
        return FileKind("man", "text/troff")
    if ext == ".eml":
        return FileKind("email", "message/rfc822")
    if ext in TEXT_KINDS:
        kind, mime = TEXT_KINDS[ext]
        return FileKind(kind, mime)
    if ext in CODE_EXTS or PurePosixPath(filename).name.lower() in {"dockerfile", "makefile"}:
        return FileKind("code", "text/x-source")
    stripped = data.lstrip()[:256].lower()
    if stripped.startswith((b"<!doctype html", b"<html")):
        return FileKind("html", "text/html")
    if stripped.startswith(b"<?xml"):
        return FileKind("xml", "application/xml")
    return FileKind("text", "text/plain")


def _media_magic(head: bytes) -> str | None:
    """Audio and video by their magic bytes, so the reason names what the file is."""
    if head[:4] == b"RIFF" and head[8:12] == b"WAVE":
        return "WAV audio"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "AVI video"
    if head[:3] == b"ID3" or head[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2", b"\xff\xfa"):  # never FF FE (a BOM)
        return "MP3 audio"
    if head[4:8] == b"ftyp":
        brand = head[8:12].decode("ascii", "replace").strip()
        return f"MP4 media ({brand})"
    if head[:4] == b"OggS":
        return "Ogg media"
    if head[:4] == b"fLaC":
        return "FLAC audio"
    if head[:4] == b"\x1aE\xdf\xa3":
        return "Matroska/WebM video"
    return None


def _sniff_zip(data: bytes) -> FileKind:
    """A zip without an OOXML extension: recognise the package by its parts, else unsupported."""
    try:
        archive = zipfile.ZipFile(BytesIO(data))
        names = set(archive.namelist()[:2000])
    except zipfile.BadZipFile:
        raise FileSkipped("unsupported archive", outcome=Outcome.SKIPPED_UNSUPPORTED_TYPE) from None
    for kind, mime, prefix in OOXML.values():
        if "[Content_Types].xml" in names and any(n.startswith(prefix) for n in names):
            return FileKind(kind, mime)
    if "mimetype" in names:  # OpenDocument and EPUB name their type in a first, stored member
        try:
            declared = archive.read("mimetype")[:100].decode("ascii", "replace").strip()
        except (zipfile.BadZipFile, KeyError, OSError, RuntimeError):
            declared = ""
        if declared in ZIP_TYPES:
            return FileKind(ZIP_TYPES[declared], declared)
        if declared.startswith("application/vnd.oasis.opendocument"):
            raise FileSkipped(
                f"an OpenDocument file of a kind semfs does not read ({declared})",
                outcome=Outcome.SKIPPED_UNSUPPORTED_TYPE,
            )
    return FileKind("zip", "application/zip")  # a bundle: each member a file of its own (bundles.py)


# a zip that names its type in a first, stored member (OpenDocument, EPUB): that MIME type -> its kind
ZIP_TYPES = {f.mime: f.kind for f in FORMATS if f.kind in ("odt", "ods", "odp", "epub")}
# OLE2 compound files: the stream that names the format -> (kind, MIME type)
OLE_STREAMS = {
    stream: (kind, reader_of(kind).mime)
    for stream, kind in (
        ("worddocument", "doc"),
        ("workbook", "xls"),
        ("book", "xls"),
        ("powerpoint document", "ppt"),
        ("__properties_version1.0", "msg"),
    )
}


def _sniff_ole(data: bytes, ext: str) -> FileKind:
    """An OLE2 compound file (legacy Office, Outlook .msg, an encrypted OOXML package) by its streams."""
    import olefile

    try:
        with olefile.OleFileIO(data) as ole:
            streams = {"/".join(entry).lower() for entry in ole.listdir(streams=True, storages=False)}
    except (OSError, ValueError, IndexError, KeyError) as e:  # olefile's NotOleFileError is an OSError
        raise FileSkipped(
            f"a damaged OLE compound file ({ext or 'no extension'})", outcome=Outcome.SKIPPED_UNSUPPORTED_TYPE
        ) from e
    if "encryptedpackage" in streams or any(s.endswith("encryptioninfo") for s in streams):
        raise FileSkipped("the document is password-protected", outcome=Outcome.SKIPPED_ENCRYPTED)
    for stream, (kind, mime) in OLE_STREAMS.items():
        if stream in streams:
            return FileKind(kind, mime)
    raise FileSkipped(
        f"an OLE compound file that is no Word, Excel, PowerPoint or Outlook document ({ext or 'no extension'})",
        outcome=Outcome.SKIPPED_UNSUPPORTED_TYPE,
    )
