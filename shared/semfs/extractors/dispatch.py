"""Choose the parser for a file and run it. This function is what the bounded subprocess executes."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from io import BytesIO
from pathlib import PurePosixPath
from typing import Any

from semfs.domain.errors import FileRejected, FileSkipped, ParseFailed, PermanentError, SemfsError
from semfs.domain.models import ExtractedDocument
from semfs.domain.outcomes import Outcome
from semfs.extractors.formats import Reader, reader_of
from semfs.extractors.guard import check_ooxml
from semfs.extractors.limits import ArchiveLimits, ExtractLimits
from semfs.extractors.sniff import OLE_MAGIC, sniff

# Libraries whose exceptions always mean "this input is malformed" (never a bug of ours).
_PARSER_PACKAGES = frozenset(
    {
        "icalendar",
        "vobject",
        "pypdfium2",
        "zipfile",
        "lxml",
        "docx",
        "pptx",
        "openpyxl",
        "PIL",
        "xml",
        "defusedxml",
        "ebooklib",
        "extract_msg",
        "olefile",
    }
)


@dataclass(frozen=True)
class ExtractOutput:
    mime_type: str
    kind: str
    document: ExtractedDocument
    ocr_pages: list[int]  # 1-based pages (or [1] for an image) that have no text layer


def check_image(data: bytes, max_pixels: int) -> int:
    """Declared frame count of an image, after checking its declared size (never decoding pixels)."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(__import__("io").BytesIO(data)) as img:
            width, height = img.size
            if width * height > max_pixels:
                raise FileRejected(
                    f"image declares {width}x{height} pixels (limit {max_pixels})",
                    outcome=Outcome.REJECTED_IMAGE_PIXELS,
                )
            return int(getattr(img, "n_frames", 1))
    except Image.DecompressionBombError as e:
        raise FileRejected("image declares too many pixels", outcome=Outcome.REJECTED_IMAGE_PIXELS) from e
    except (UnidentifiedImageError, OSError, SyntaxError) as e:
        raise ParseFailed(f"the image is truncated or corrupt: {type(e).__name__}") from e


def extract_file(data: bytes, filename: str, limits: ExtractLimits) -> ExtractOutput:
    """Sniff, guard and parse. Raises a ``SemfsError`` leaf with its outcome for every bad input."""
    if not data:
        raise FileSkipped("the file is empty (0 bytes)", outcome=Outcome.SKIPPED_EMPTY)
    try:
        kind = sniff(data, filename)
    except FileSkipped as skipped:
        opened = _with_default_password(data) if skipped.outcome is Outcome.SKIPPED_ENCRYPTED else None
        if opened is None:
            raise
        data, kind = opened, sniff(opened, filename)
    try:
        return _extract(kind.kind, kind.mime, data, filename, limits)
    except SemfsError:
        raise
    except MemoryError as e:
        raise PermanentError("the parser ran out of memory", outcome=Outcome.FAILED_MEMORY) from e
    except RecursionError as e:
        raise ParseFailed(f"the {kind.kind} structure is nested too deeply") from e
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, OSError, EOFError, zlib.error) as e:
        # Parsers surface malformed input as these; the type name is enough to diagnose it.
        raise ParseFailed(f"the {kind.kind} cannot be parsed: {type(e).__name__}") from e
    except Exception as e:
        # A parser library's own error class (pdfium's, zipfile's, lxml's): still the input's fault.
        if type(e).__module__.split(".")[0] in _PARSER_PACKAGES:
            raise ParseFailed(f"the {kind.kind} cannot be parsed: {type(e).__name__}") from e
        raise


# Excel encrypts a workbook whose sheets are only write-protected with this documented default password
# (MS-OFFCRYPTO 2.3.6.1): it opens in Excel without asking, so it is no password-protected document.
EXCEL_DEFAULT_PASSWORD = "VelvetSweatshop"  # noqa: S105


def _with_default_password(data: bytes) -> bytes | None:
    """The package an encrypted Office file holds when Excel's default password opens it, else None."""
    if not data.startswith(OLE_MAGIC):
        return None
    import msoffcrypto
    import msoffcrypto.exceptions as crypto_errors

    out = BytesIO()
    try:
        office = msoffcrypto.OfficeFile(BytesIO(data))
        office.load_key(password=EXCEL_DEFAULT_PASSWORD, verify_password=True)
        office.decrypt(out)
    except (
        crypto_errors.FileFormatError,
        crypto_errors.ParseError,
        crypto_errors.DecryptionError,
        crypto_errors.InvalidKeyError,
        ValueError,
        KeyError,
        OSError,
        EOFError,
    ):
        return None  # another password, or a scheme the library cannot read: still password-protected
    return out.getvalue() or None


def _extract(kind: str, mime: str, data: bytes, filename: str, limits: ExtractLimits) -> ExtractOutput:
    """The kind's reader, as the format registry names it (``formats.py``), under the limits."""
    reader = reader_of(kind).reader
    if reader == "compressed":
        return _compressed(kind.removeprefix("compressed:"), mime, data, filename, limits)
    doc, ocr = READERS[reader](kind, data, filename, limits)
    if doc.truncated and not doc.truncated_by:  # an extractor's own budget (Office, PDF) cut it
        doc = doc.model_copy(update={"truncated_by": _chars_kept(limits.max_chars)})
    return ExtractOutput(mime_type=mime, kind=kind, document=_clean(doc), ocr_pages=ocr)


Read = tuple[ExtractedDocument, list[int]]  # the document, and the 1-based pages that need OCR


def _read_pdf(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    from semfs.extractors import pdf

    return pdf.extract_pdf(data, limits.max_chars)


def _read_ooxml(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    check_ooxml(data, limits.archive)
    return _ooxml(kind, data, limits), []


def _read_postscript(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    """PostScript rendered to PDF by Ghostscript and read as a PDF's text layer. Pages without text are not
    OCR'd (the stored bytes are the PostScript): the document says so."""
    from semfs.extractors import convert, pdf

    doc, ocr = pdf.extract_pdf(convert.postscript_to_pdf(data, limits.convert_timeout_s), limits.max_chars)
    if ocr:
        reason = f"{len(ocr):,} pages without text inside a PostScript file are not OCR'd"
        doc = doc.model_copy(update={"truncated": True, "truncated_by": doc.truncated_by or reason})
    return doc, []


def _read_converted(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    """Legacy Office (.doc, .xls, .ppt), converted to OOXML by LibreOffice."""
    from semfs.extractors import convert

    target, converted = convert.to_ooxml(data, kind, limits.convert_timeout_s)
    return _ooxml(target, converted, limits), []


def _read_odf(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    """OpenDocument from its own XML, no converter (``odf.py``), once the package passes the archive guard."""
    from semfs.extractors import odf

    check_ooxml(data, limits.archive)
    budget = limits.max_table_chars if kind == "ods" else limits.max_chars  # a sheet is a table: whole
    return odf.extract_odf(kind, data, budget), []


def _read_epub(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    from semfs.extractors import text

    check_ooxml(data, limits.archive, public_doctype=True)
    return _within(text.extract_epub(data), limits.max_chars, limits.max_blocks), []


def _read_msg(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    from semfs.extractors.email import extract_msg_document

    return _within(extract_msg_document(data), limits.max_chars, limits.max_blocks), []


def _read_image(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    """An image has no text of its own: every frame goes to OCR."""
    frames = check_image(data, limits.max_image_pixels)
    return ExtractedDocument(blocks=[], pages=frames, extraction="ocr"), list(range(1, frames + 1))


def _read_bundle(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    """A zip, tar or TNEF: its members are files of their own (the intake unpacks them); its own text lists
    them, after the same bounds the unpacking is held to (a bomb ends here with its outcome)."""
    from semfs.extractors import bundles

    own = bundles.message_blocks(data) if kind == "email" else None
    found = bundles.members(data, kind, limits.archive) if kind != "email" or bundles.bundle_kind(data, kind) else []
    if own is not None and not found:  # a message without attachments is its text alone
        return ExtractedDocument(blocks=own, title=own[0].text), []
    return bundles.listing(filename, found, own), []


def _read_text(kind: str, data: bytes, filename: str, limits: ExtractLimits) -> Read:
    from semfs.extractors import text

    budget = limits.max_table_chars if kind in TABLE_KINDS else limits.max_chars
    return _within(text.extract_text_kind(kind, data, filename), budget, limits.max_blocks), []


TABLE_KINDS = frozenset({"csv", "tsv"})  # kept whole up to the file-size limit (``ExtractLimits.max_table_chars``)


READERS: dict[Reader, Callable[[str, bytes, str, ExtractLimits], Read]] = {
    "postscript": _read_postscript,
    "odf": _read_odf,
    "pdf": _read_pdf,
    "ooxml": _read_ooxml,
    "converted": _read_converted,
    "epub": _read_epub,
    "msg": _read_msg,
    "image": _read_image,
    "text": _read_text,
    "bundle": _read_bundle,
}


def _chars_kept(max_chars: int) -> str:
    return f"the first {max_chars:,} characters of text kept (SEMFS_MAX_TEXT_CHARS)"


def decompress(method: str, data: bytes, limits: ArchiveLimits) -> bytes:
    """One compressed file's bytes, under the archives' guards: at most ``max_uncompressed`` bytes and,
    past the first megabyte, at most ``max_ratio`` times the compressed size (read a megabyte at a time,
    so a bomb stops at the bound instead of filling memory)."""
    import bz2
    import gzip
    import lzma

    openers: dict[str, Callable[[BytesIO], Any]] = {
        "gzip": lambda b: gzip.GzipFile(fileobj=b),
        "bzip2": bz2.BZ2File,
        "xz": lzma.LZMAFile,
    }
    out = bytearray()
    try:
        with openers[method](BytesIO(data)) as f:
            while chunk := f.read(1024 * 1024):
                out += chunk
                if len(out) > limits.max_uncompressed or (
                    len(out) > 1024 * 1024 and len(out) > limits.max_ratio * len(data)
                ):
                    raise FileRejected(
                        f"the {method} file expands past {len(out):,} bytes ({len(out) / len(data):.0f}x)",
                        outcome=Outcome.REJECTED_ARCHIVE_BOMB,
                    )
    except (OSError, EOFError, lzma.LZMAError) as e:
        raise ParseFailed(f"the {method} file is corrupt or truncated: {type(e).__name__}") from e
    return bytes(out)


def _compressed(method: str, mime: str, data: bytes, filename: str, limits: ExtractLimits) -> ExtractOutput:
    """A file compressed on its own (``ls.1.gz``, ``changelog.Debian.gz``): read as the file it holds,
    named without the compression suffix. A compressed archive (``.tar.gz``) or a file compressed twice is
    not unpacked; pages inside that would need OCR are not OCR'd (the stored bytes are the compressed ones)."""
    from semfs.extractors.sniff import COMPRESSED, COMPRESSED_EXTS

    inner = decompress(method, data, limits.archive)
    path = PurePosixPath(filename)
    name = path.stem if path.suffix.lower() in COMPRESSED_EXTS else path.name
    if inner[257:262] == b"ustar":  # a compressed tar: a bundle (its members are files of their own)
        doc, _ = _read_bundle("tar", data, filename, limits)
        return ExtractOutput(mime_type=mime, kind="tar", document=doc, ocr_pages=[])
    if any(inner.startswith(magic) for magic in COMPRESSED):
        raise FileSkipped(f"a file compressed twice ({method} inside)", outcome=Outcome.SKIPPED_UNSUPPORTED_TYPE)
    out = extract_file(inner, name, limits)
    doc = out.document
    if out.ocr_pages:
        reason = f"{len(out.ocr_pages):,} pages without a text layer inside a {method} file are not OCR'd"
        doc = doc.model_copy(update={"truncated": True, "truncated_by": doc.truncated_by or reason})
    # the type names the content (a manual page, a changelog's text), not the wrapping: the Type facet
    # listed ``gzip`` for every page of /usr/share/man (issue 51.3); the stored name keeps the ``.gz``
    return ExtractOutput(mime_type=out.mime_type, kind=out.kind, document=doc, ocr_pages=[])


def _ooxml(kind: str, data: bytes, limits: ExtractLimits) -> ExtractedDocument:
    """An OOXML package through its extractor. Strict OOXML (which the libraries cannot read) and a package
    they refuse are rewritten by LibreOffice, where there is one, and read again."""
    from semfs.extractors import convert, office

    def xlsx(data: bytes, max_chars: int) -> ExtractedDocument:  # a workbook is a table: whole, within CPU
        doc = office.extract_xlsx(data, limits.max_table_chars, limits.table_cpu_s)
        if doc.truncated and not doc.truncated_by:
            cut = f"the first {limits.max_table_chars:,} characters kept (a table's bound: SEMFS_MAX_FILE_MB)"
            doc = doc.model_copy(update={"truncated_by": cut})
        return doc

    fn = {"docx": office.extract_docx, "xlsx": xlsx, "pptx": office.extract_pptx}[kind]
    if office.is_strict(data) and convert.soffice() is not None:
        _, data = convert.to_ooxml(data, kind, limits.convert_timeout_s)
    try:
        return fn(office.without_macros(data), limits.max_chars)
    except (ParseFailed, ValueError, KeyError, IndexError, TypeError, AttributeError):
        # the library refused the package, or tripped on a part it did not expect: LibreOffice may read it
        if convert.soffice() is None:
            raise
        _, data = convert.to_ooxml(data, kind, limits.convert_timeout_s)
        check_ooxml(data, limits.archive)
        return fn(data, limits.max_chars)


def _within(doc: ExtractedDocument, max_chars: int, max_blocks: int) -> ExtractedDocument:
    """Blocks up to the text budget; the block that crosses it is cut (at a space when one is near), so
    one 2.5 MB line is its first 2 M characters and ``OK_PARTIAL``, never "no text found". At most
    ``max_blocks`` blocks (a million blank-separated paragraphs cost time in every later stage)."""
    total = 0
    kept = []
    if len(doc.blocks) > max_blocks:
        reason = f"the first {max_blocks:,} of {len(doc.blocks):,} paragraphs, rows or pages kept (SEMFS_MAX_BLOCKS)"
        doc = doc.model_copy(update={"blocks": doc.blocks[:max_blocks], "truncated": True, "truncated_by": reason})
    for block in doc.blocks:
        room = max_chars - total
        if len(block.text) > room:
            cut = block.text[:room]
            space = cut.rfind(" ", max(0, room - 200))
            cut = cut[:space] if space > 0 else cut
            if cut.strip():
                kept.append(block.model_copy(update={"text": cut}))
            return doc.model_copy(update={"blocks": kept, "truncated": True, "truncated_by": _chars_kept(max_chars)})
        total += len(block.text)
        kept.append(block)
    return doc.model_copy(update={"blocks": kept})


_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean(doc: ExtractedDocument) -> ExtractedDocument:
    """No lone surrogates (an escaped ``\\ud83d`` in JSON): they cannot be serialised as UTF-8."""
    if not any(_SURROGATE.search(b.text) for b in doc.blocks) and not _SURROGATE.search(doc.title or ""):
        return doc
    blocks = [b.model_copy(update={"text": _SURROGATE.sub("\ufffd", b.text)}) for b in doc.blocks]
    title = _SURROGATE.sub("\ufffd", doc.title) if doc.title else None
    return doc.model_copy(update={"blocks": blocks, "title": title})


def render_pages(data: bytes, kind: str, pages: list[int], dpi: int, max_pixels: int) -> list[tuple[int, bytes]]:
    """Page images (PNG) for OCR: PDF pages rendered by pdfium at ``dpi``, image frames as they are
    (a multi-page TIFF yields one per frame). Runs in the bounded worker like every parse."""
    import io

    from PIL import Image

    out: list[tuple[int, bytes]] = []
    if kind == "pdf":
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(data)
        try:
            for number in pages:
                page = pdf[number - 1]
                try:
                    image = page.render(scale=dpi / 72).to_pil()
                finally:
                    page.close()
                buf = io.BytesIO()
                image.save(buf, format="PNG")
                out.append((number, buf.getvalue()))
        finally:
            pdf.close()
        return out
    check_image(data, max_pixels)
    try:
        with Image.open(io.BytesIO(data)) as img:
            for number in pages:
                img.seek(number - 1)
                buf = io.BytesIO()
                img.convert("RGB").save(buf, format="PNG")
                out.append((number, buf.getvalue()))
    except (OSError, EOFError, SyntaxError) as e:
        # one answer for every damaged image, whether its header or its pixels are cut short
        raise ParseFailed(f"the image is truncated or corrupt: {type(e).__name__}") from e
    return out
