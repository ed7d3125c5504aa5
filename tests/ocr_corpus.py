"""Pages with known text, rendered to images (clean and degraded) and image-only PDFs, for OCR tests."""

from __future__ import annotations

import io
import random

LINES = [
    "Invoice 2026-117 from Acme Corp",
    "Payment is due within thirty days of receipt.",
    "Late payments accrue interest at 1.5 percent",
    "per month. Frames ship from Rotterdam.",
]


def text_pdf(lines: list[str], pages: int = 1) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4, invariant=1)
    for _ in range(pages):
        y = 760
        for line in lines:
            c.setFont("Helvetica", 16)
            c.drawString(72, y, line)
            y -= 28
        c.showPage()
    c.save()
    return buf.getvalue()


def page_image(lines: list[str] = LINES, dpi: int = 200) -> object:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(text_pdf(lines))
    try:
        return pdf[0].render(scale=dpi / 72).to_pil().convert("L")
    finally:
        pdf.close()


def encode(img: object, fmt: str = "PNG", **kw: object) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format=fmt, **kw)  # type: ignore[attr-defined]
    return buf.getvalue()


def degraded(rotate: float = 0.0, noise: float = 0.0, contrast: float = 1.0, seed: int = 7) -> bytes:
    from PIL import Image, ImageEnhance

    img = page_image()
    if rotate:
        img = img.rotate(rotate, expand=True, fillcolor=255)  # type: ignore[attr-defined]
    if contrast != 1.0:
        img = ImageEnhance.Contrast(img).enhance(contrast)  # type: ignore[arg-type]
    if noise:
        rng = random.Random(seed)
        px = img.load()  # type: ignore[attr-defined]
        w, h = img.size  # type: ignore[attr-defined]
        for _ in range(int(w * h * noise)):
            px[rng.randrange(w), rng.randrange(h)] = rng.choice((0, 255))
    assert isinstance(img, Image.Image)
    return encode(img)


def tiff_pages(n: int = 2) -> bytes:
    first = page_image()
    rest = [page_image([f"Page {i + 2} of the scanned contract."]) for i in range(n - 1)]
    return encode(first, "TIFF", save_all=True, append_images=rest, compression="tiff_lzw")


def image_only_pdf(images: list[bytes]) -> bytes:
    """A 'scan': each page is only a picture, no text layer."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=A4, invariant=1)
    for png in images:
        c.drawImage(ImageReader(io.BytesIO(png)), 0, 0, width=A4[0], height=A4[1])
        c.showPage()
    c.save()
    return buf.getvalue()


def mixed_pdf() -> bytes:
    """Page 1 has a text layer; page 2 is a scan of different text."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    for part in (
        text_pdf(["Quarterly supplier review for Northwind Cycles.", "Text layer page."]),
        image_only_pdf([encode(page_image())]),
    ):
        for page in PdfReader(io.BytesIO(part)).pages:
            writer.add_page(page)
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def cer(expected: str, got: str) -> float:
    """Character error rate: Levenshtein distance over the expected length (whitespace unified)."""
    a, b = " ".join(expected.split()), " ".join(got.split())
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1] / max(1, len(a))
