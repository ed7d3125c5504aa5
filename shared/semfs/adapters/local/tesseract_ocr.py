"""``TesseractOcr``: the Debian ``tesseract-ocr`` binary through pytesseract, page by page."""

from __future__ import annotations

import io
import os
import shutil
import statistics
from dataclasses import dataclass
from typing import Any

from semfs.domain.errors import PermanentError
from semfs.domain.outcomes import Outcome
from semfs.ports.ocr import OcrPage

RECHECK_BELOW = 0.8  # mean word confidence under which a page is checked for a sideways or upside-down scan
MIN_SIDE_PX = 1200  # a page image whose shorter side is smaller is a low-dpi scan: upscaled before reading
# Tesseract reads words whose boxes are ~20-40 px tall best. Small print on a large page (a newspaper, a
# footnote, 9 px text on an A4 scan at 200 dpi: a quarter of its words read) is read again enlarged until
# its words are about this tall, at most 3x, and the reading with more characters read confidently is kept
SMALL_TEXT_PX = 16
TARGET_TEXT_PX = 28
MAX_PIXELS = 60_000_000  # an enlarged page stays under this (a 3x A4 at 300 dpi is ~75 MP)


@dataclass(frozen=True)
class _Reading:
    page: OcrPage
    height: float  # median height of the words read, in pixels (0: none read)
    score: float  # characters read, each weighted by its word's confidence


def _upscaled(img: Any) -> Any:
    """Tesseract reads text whose capitals are ~20-30 px tall best: a low-dpi scan is enlarged (at most 3x)."""
    from PIL import Image

    short = min(img.size)
    if short >= MIN_SIDE_PX or short == 0:
        return img
    factor = min(3.0, 1600 / short)
    return img.resize((round(img.width * factor), round(img.height * factor)), Image.Resampling.LANCZOS)


def _has_ink(img: Any) -> bool:
    """Whether a page has anything dark on it (a blank scan is not read again, enlarged, for nothing)."""
    histogram: list[int] = img.histogram()  # a greyscale page: 256 bins
    return bool(sum(histogram[:128]) > 0.002 * img.width * img.height)


def tesseract_available() -> bool:
    return shutil.which("tesseract") is not None


class TesseractOcr:
    """Synchronous OCR of rendered pages; never starts document jobs."""

    def __init__(self, languages: str = "eng", timeout_s: float = 120) -> None:
        self._languages = languages
        self._timeout = timeout_s

    @property
    def engine(self) -> str:
        return "tesseract"

    @property
    def available(self) -> bool:
        return True

    @property
    def document_jobs(self) -> bool:
        return False

    @property
    def announces_jobs(self) -> bool:
        return False  # works page by page: no jobs

    def recognise(self, image: bytes, page: int) -> OcrPage:
        """One page: small (low-dpi) input upscaled first; a page that reads badly is checked for its
        orientation (Tesseract's OSD) and read again turned upright when that reads better."""
        from PIL import Image, ImageFilter, UnidentifiedImageError

        # Tesseract's OpenMP threads slow it down on a shared 2-core machine (TOOLCHAIN: 1.2-1.9 s/page with 1).
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        try:
            with Image.open(io.BytesIO(image)) as img:
                page_img = _upscaled(img.convert("L"))
        except (UnidentifiedImageError, OSError) as e:
            raise PermanentError(f"page {page} cannot be read as an image", outcome=Outcome.FAILED_OCR) from e
        first = self._read(page_img, page)
        best = first.page
        if (first.height and first.height < SMALL_TEXT_PX) or (not first.height and _has_ink(page_img)):
            factor = min(3.0, TARGET_TEXT_PX / first.height) if first.height else 3.0
            factor = min(factor, (MAX_PIXELS / max(1, page_img.width * page_img.height)) ** 0.5)
            if factor >= 1.25:
                size = (round(page_img.width * factor), round(page_img.height * factor))
                enlarged = page_img.resize(size, Image.Resampling.LANCZOS)
                second = self._read(enlarged, page)
                if second.score > first.score:
                    best, page_img = second.page, enlarged
        if best.confidence < RECHECK_BELOW:
            # a 3x3 median removes a noisy scan's speckle, but also the strokes of small print (a newspaper
            # page kept 1,748 of 4,440 characters with it always on): tried only when the page reads badly
            cleaned = page_img.filter(ImageFilter.MedianFilter(3))
            filtered = self._read(cleaned, page).page
            if filtered.confidence > best.confidence:
                best, page_img = filtered, cleaned
        if best.confidence < RECHECK_BELOW:
            angle = self._orientation(page_img)
            if angle:
                turned = self._read(page_img.rotate(-angle, expand=True, fillcolor=255), page).page
                best = turned if turned.confidence > best.confidence else best
        return best

    def _orientation(self, img: Any) -> int:
        """Degrees clockwise that make the page upright (0 when OSD cannot tell)."""
        import pytesseract

        try:
            osd = pytesseract.image_to_osd(
                img, config="--psm 0", output_type=pytesseract.Output.DICT, timeout=self._timeout
            )
        except (pytesseract.TesseractError, RuntimeError):  # too few characters to tell, or out of time
            return 0
        return int(osd.get("rotate", 0)) if float(osd.get("orientation_conf", 0)) >= 1.0 else 0

    def _read(self, img: Any, page: int) -> _Reading:
        import pytesseract

        try:
            data = pytesseract.image_to_data(
                img, lang=self._languages, config="--psm 3", output_type=pytesseract.Output.DICT, timeout=self._timeout
            )
        except RuntimeError as e:  # pytesseract's timeout
            raise PermanentError(f"OCR of page {page} timed out", outcome=Outcome.FAILED_OCR) from e
        except pytesseract.TesseractError as e:
            raise PermanentError(f"tesseract failed on page {page}", outcome=Outcome.FAILED_OCR) from e
        lines: dict[tuple[int, int, int], list[str]] = {}
        confs: list[float] = []
        heights: list[int] = []
        score = 0.0
        for i, word in enumerate(data["text"]):
            conf = float(data["conf"][i])
            if not word.strip() or conf < 0:
                continue
            lines.setdefault((data["block_num"][i], data["par_num"][i], data["line_num"][i]), []).append(word)
            confs.append(conf / 100)
            heights.append(int(data["height"][i]))
            score += len(word.strip()) * conf / 100
        blocks: list[str] = []
        last_block = None
        for (block, _, _), words in lines.items():
            if last_block is not None and block != last_block:
                blocks.append("")
            blocks.append(" ".join(words))
            last_block = block
        read = OcrPage(page=page, text="\n".join(blocks), confidence=sum(confs) / len(confs) if confs else 0.0)
        return _Reading(read, float(statistics.median(heights)) if heights else 0.0, score)

    def start_document(
        self, blob_key: str, mime_type: str, pages: int | None, request_token: str | None = None
    ) -> str | None:
        return None

    def poll_document(self, job_id: str) -> list[OcrPage] | None:  # pragma: no cover - never starts jobs
        raise PermanentError("tesseract runs no document jobs", outcome=Outcome.FAILED_OCR)
