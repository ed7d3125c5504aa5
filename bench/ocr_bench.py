"""OCR throughput (pages/s) and character error rate on generated pages, through the local pipeline's
own path: pages of known text → image-only PDF → rendered by pdfium at SEMFS_OCR_DPI (300) → Tesseract.

    .venv/bin/python bench/ocr_bench.py [--pages 6]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import ocr_corpus as oc

from semfs.adapters.local.tesseract_ocr import TesseractOcr
from semfs.bootstrap import extract_limits
from semfs.config import Settings
from semfs.extractors.runner import SubprocessExtractor

CASES = {
    "clean": {},
    "rotated 2°": {"rotate": 2},
    "noise 1%": {"noise": 0.01},
    "low contrast": {"contrast": 0.25},
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=6)
    args = parser.parse_args()
    settings = Settings()
    extractor = SubprocessExtractor(extract_limits(settings.limits), timeout_s=300, memory_mb=2048)
    ocr = TesseractOcr()
    expected = "\n".join(oc.LINES)
    try:
        for name, kw in CASES.items():
            scan = oc.image_only_pdf([oc.degraded(**kw, seed=i) for i in range(args.pages)])  # type: ignore[arg-type]
            t0 = time.perf_counter()
            images = extractor.render(scan, "pdf", list(range(1, args.pages + 1)), settings.ocr.dpi)
            t1 = time.perf_counter()
            pages = [ocr.recognise(img, n) for n, img in images]
            t2 = time.perf_counter()
            cers = [oc.cer(expected, p.text) for p in pages]
            print(
                f"{name:13s} {args.pages} pages: {args.pages / (t2 - t0):.2f} pages/s "
                f"(render {(t1 - t0) / args.pages * 1000:.0f} ms/page, "
                f"OCR {(t2 - t1) / args.pages * 1000:.0f} ms/page), "
                f"CER median {statistics.median(cers):.2%} max {max(cers):.2%}, "
                f"confidence {statistics.mean(p.confidence for p in pages):.2f}"
            )
    finally:
        extractor.close()


if __name__ == "__main__":
    main()
