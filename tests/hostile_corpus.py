"""Hostile files, generated at test time (never committed): bombs, corrupt archives, XML entities in any
part, PDF cycles, pixel floods, encodings, surrogates, huge single lines, naughty names.

Each entry is ``(filename, bytes, expected outcomes)``; ``None`` means "any outcome but FAILED_INTERNAL".
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable

from semfs.domain.outcomes import Outcome

OUT = Outcome
Case = tuple[str, Callable[[], bytes], set[Outcome] | None]


def _docx_parts(extra: dict[str, bytes] | None = None, document: bytes | None = None) -> dict[str, bytes]:
    import docx

    buf = io.BytesIO()
    d = docx.Document()
    d.add_paragraph("A perfectly ordinary paragraph about pallets.")
    d.save(buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    if document is not None:
        parts["word/document.xml"] = document
    parts.update(extra or {})
    return parts


def _zip(parts: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in parts.items():
            zf.writestr(name, data)
    return buf.getvalue()


def docx_bad_crc() -> bytes:
    data = bytearray(_zip(_docx_parts(), zipfile.ZIP_STORED))
    at = data.find(b"ordinary")
    data[at] ^= 0xFF  # the member's bytes no longer match its CRC-32
    return bytes(data)


def docx_broken_deflate() -> bytes:
    data = bytearray(_zip(_docx_parts()))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("word/document.xml")
    start = info.header_offset + 30 + len(info.filename.encode())
    for i in range(start + 4, start + min(info.compress_size, 200)):
        data[i] = 0xFF  # garbage inside the deflate stream
    return bytes(data)


def docx_bad_local_magic() -> bytes:
    data = bytearray(_zip(_docx_parts()))
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("word/document.xml")
    data[info.header_offset : info.header_offset + 4] = b"XXXX"
    return bytes(data)


def docx_dtd_after_4k() -> bytes:
    body = b'<?xml version="1.0"?>' + b"<!-- padding -->" * 400 + b'<!DOCTYPE x [<!ENTITY a "b">]><x/>'
    return _zip(_docx_parts({"word/custom.xml": body}))


def docx_many_small_bombs() -> bytes:
    parts = _docx_parts({f"word/media/pad{i}.xml": b"<a/>" + b" " * (512 * 1024) for i in range(80)})
    return _zip(parts)


def pdf_page_tree_cycle() -> bytes:
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Pages /Kids [2 0 R] /Count 1 /Parent 2 0 R >>",  # a Pages node whose kid is its parent
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objs, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % n + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref))
    return out.getvalue()


def pdf_blank_pages(n: int = 300) -> bytes:
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf)
    for _ in range(n):
        c.showPage()
    c.save()
    return buf.getvalue()


def png_pixel_flood() -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", 60_000, 60_000, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\x00" * 100)) + chunk(b"IEND", b"")
    )


def json_lone_surrogate() -> bytes:
    return b'{"name": "\\ud83d x", "note": "a lone high surrogate, escaped"}'


def one_huge_line() -> bytes:
    return (b"word " * 500_000) + b"\n"  # 2.5 MB, no line break


def wide_csv() -> bytes:
    return (b",".join(b"c%d" % i for i in range(300_000)) + b"\n") * 2


def big_json() -> bytes:
    return b'{"text": "' + b"lorem ipsum " * 200_000 + b'"}'


def binary_garbage(seed: int = 7) -> bytes:
    import random

    rng = random.Random(seed)
    return bytes(rng.choice([*range(0x80, 0x100)]) for _ in range(20_000))  # no NULs, no text either


CASES: list[Case] = [
    ("bad-crc.docx", docx_bad_crc, {OUT.FAILED_PARSE}),
    ("broken-deflate.docx", docx_broken_deflate, {OUT.FAILED_PARSE}),
    ("bad-magic.docx", docx_bad_local_magic, {OUT.FAILED_PARSE}),
    ("late-dtd.docx", docx_dtd_after_4k, {OUT.REJECTED_XML_ENTITY}),
    ("many-small-bombs.docx", docx_many_small_bombs, {OUT.REJECTED_ARCHIVE_BOMB}),
    ("cycle.pdf", pdf_page_tree_cycle, {OUT.FAILED_PARSE, OUT.SKIPPED_NO_TEXT}),
    ("pixels.png", png_pixel_flood, {OUT.REJECTED_IMAGE_PIXELS}),
    ("surrogate.json", json_lone_surrogate, {OUT.OK}),
    ("one-line.txt", one_huge_line, {OUT.OK_PARTIAL}),
    ("wide.csv", wide_csv, {OUT.OK_PARTIAL, OUT.OK}),
    ("big.json", big_json, {OUT.OK_PARTIAL}),
    ("garbage.txt", binary_garbage, {OUT.SKIPPED_UNSUPPORTED_TYPE}),
    ("garbage", lambda: binary_garbage(8), {OUT.SKIPPED_UNSUPPORTED_TYPE}),
    ("empty-1.txt", lambda: b"", {OUT.SKIPPED_EMPTY}),
    ("empty-2.md", lambda: b"", {OUT.SKIPPED_EMPTY}),
    ("mentions-pdf.md", lambda: b"# Notes\n\nThe header of a PDF is %PDF-1.7, then objects follow.", {OUT.OK}),
    ("pdf-with-junk.bin", lambda: b"junk\n" + pdf_blank_pages(1), None),
    ("blank-pages.pdf", lambda: pdf_blank_pages(8), {OUT.SKIPPED_NO_TEXT}),
    ("utf16.txt", lambda: "\ufeffUTF-16 text with an umlaut: Grüße".encode("utf-16"), {OUT.OK}),
    ("latin1.txt", lambda: "Café crème, déjà vu: latin-1 prose.".encode("latin-1"), {OUT.OK}),
    ("👩\u200d💻 notes.md", lambda: b"# Emoji name\n\nA file whose name has a zero-width joiner.", {OUT.OK}),
    ("invoice\u202efdp.exe", lambda: b"Invoice text behind a right-to-left override.", {OUT.OK}),
    ("nul\x00name.txt", lambda: b"text", {OUT.REJECTED_UNSAFE_NAME}),
    ("deep.json", lambda: b"[" * 100_000 + b"]" * 100_000, None),
    ("fake.pdf", lambda: b"not a pdf at all", {OUT.REJECTED_TYPE_MISMATCH}),
    ("fake.docx", lambda: b"plain text pretending", {OUT.REJECTED_TYPE_MISMATCH}),
    ("truncated.docx", lambda: _zip(_docx_parts())[:600], {OUT.FAILED_PARSE}),
]
