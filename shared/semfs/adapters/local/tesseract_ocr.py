"""``TesseractOcr``: the Debian ``tesseract-ocr`` binary through pytesseract, page by page."""

from __future__ import annotations

import io
import os
import shutil

from semfs.domain.errors import PermanentError
from semfs.domain.outcomes import Outcome
from semfs.ports.ocr import OcrPage


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

    def recognise(self, image: bytes, page: int) -> OcrPage:
        import pytesseract
        from PIL import Image, ImageFilter, UnidentifiedImageError

        # Tesseract's OpenMP threads slow it down on a shared 2-core machine (TOOLCHAIN: 1.2-1.9 s/page with 1).
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        try:
            with Image.open(io.BytesIO(image)) as img:
                # a 3x3 median removes speckle noise from scans and leaves 300 dpi strokes intact
                page_img = img.convert("L").filter(ImageFilter.MedianFilter(3))
                data = pytesseract.image_to_data(
                    page_img,
                    lang=self._languages,
                    config="--psm 3",
                    output_type=pytesseract.Output.DICT,
                    timeout=self._timeout,
                )
        except (UnidentifiedImageError, OSError) as e:
            raise PermanentError(f"page {page} cannot be read as an image", outcome=Outcome.FAILED_OCR) from e
        except RuntimeError as e:  # pytesseract's timeout
            raise PermanentError(f"OCR of page {page} timed out", outcome=Outcome.FAILED_OCR) from e
        except pytesseract.TesseractError as e:
            raise PermanentError(f"tesseract failed on page {page}", outcome=Outcome.FAILED_OCR) from e
        lines: dict[tuple[int, int, int], list[str]] = {}
        confs: list[float] = []
        for i, word in enumerate(data["text"]):
            conf = float(data["conf"][i])
            if not word.strip() or conf < 0:
                continue
            lines.setdefault((data["block_num"][i], data["par_num"][i], data["line_num"][i]), []).append(word)
            confs.append(conf / 100)
        blocks: list[str] = []
        last_block = None
        for (block, _, _), words in lines.items():
            if last_block is not None and block != last_block:
                blocks.append("")
            blocks.append(" ".join(words))
            last_block = block
        return OcrPage(page=page, text="\n".join(blocks), confidence=sum(confs) / len(confs) if confs else 0.0)

    def start_document(self, blob_key: str, mime_type: str, pages: int | None) -> str | None:
        return None

    def poll_document(self, job_id: str) -> list[OcrPage] | None:  # pragma: no cover - never starts jobs
        raise PermanentError("tesseract runs no document jobs", outcome=Outcome.FAILED_OCR)
