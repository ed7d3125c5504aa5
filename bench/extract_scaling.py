"""How extraction grows with the file: seconds at 1x, 4x and 16x a base size, and the ratio per doubling.

A linear extractor doubles its time when the file doubles (ratio ~2); a quadratic one quadruples it (~4).
Each format is generated here at three sizes (CSV and TSV rows, XLSX rows, DOCX paragraphs, PDF pages,
plain-text paragraphs; the 16x CSV is the 200,000 rows of issue 29 and the 16x XLSX its 60,000) and read
by ``extract_file`` in this process with the default limits: the median CPU time of ``--runs`` runs.
The same run times the CSV splitter as it was before issue 29 (a copy of the rows per 20-row block) at the
sizes it can still finish, as the baseline.

    .venv/bin/python bench/extract_scaling.py [--runs 3] [--scale 1.0] [--only csv,xlsx] [--json]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))

from semfs.bootstrap import extract_limits  # noqa: E402
from semfs.config import IngestLimits  # noqa: E402
from semfs.extractors.dispatch import extract_file  # noqa: E402

WORDS = "invoice pallet shipment Grüße payment terms receipt quarter freight customs".split()


def _row(i: int) -> list[str]:
    return [
        str(i),
        f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}",
        WORDS[i % 10],
        f"{i * 1.25:.2f}",
        f"note {i} {WORDS[i % 7]}",
    ]


def _delimited(rows: int, delimiter: str) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter)
    writer.writerow(["id", "date", "item", "amount", "note"])
    writer.writerows(_row(i) for i in range(rows))
    return out.getvalue().encode()


def _xlsx(rows: int) -> bytes:
    import xlsxwriter

    out = io.BytesIO()
    book = xlsxwriter.Workbook(out, {"in_memory": True})
    sheet = book.add_worksheet("Ledger")
    sheet.write_row(0, 0, ["id", "date", "item", "amount", "note"])
    for i in range(rows):
        sheet.write_row(i + 1, 0, _row(i))
    book.close()
    return out.getvalue()


def _docx(paragraphs: int) -> bytes:
    from docx import Document

    doc = Document()
    for i in range(paragraphs):
        if i % 25 == 0:
            doc.add_heading(f"Section {i // 25 + 1}", level=2)
        doc.add_paragraph(" ".join(WORDS[(i + k) % 10] for k in range(40)) + f" clause {i}.")
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def _pdf(pages: int) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    for p in range(pages):
        for line in range(45):
            pdf.drawString(60, 800 - 16 * line, " ".join(WORDS[(p + line + k) % 10] for k in range(9)) + f" {p}.{line}")
        pdf.showPage()
    pdf.save()
    return out.getvalue()


def _text(paragraphs: int) -> bytes:
    body = "\n\n".join(" ".join(WORDS[(i + k) % 10] for k in range(30)) + f" ({i})" for i in range(paragraphs))
    return body.encode()


# format → (file name, builder, base size): 16x the base is the largest point
FORMATS: dict[str, tuple[str, Callable[[int], bytes], int]] = {
    "csv": ("ledger.csv", lambda n: _delimited(n, ","), 12_500),
    "tsv": ("ledger.tsv", lambda n: _delimited(n, "\t"), 12_500),
    "xlsx": ("ledger.xlsx", _xlsx, 3_750),
    "docx": ("contract.docx", _docx, 250),
    "pdf": ("report.pdf", _pdf, 10),
    "text": ("notes.txt", _text, 500),
}


def _old_blocks(rows: list[list[str]]) -> int:
    """``extract_table``'s block loop before issue 29: ``rows[1:]`` copied once per 20-row block."""
    body, blocks = rows[1:] or rows, 0
    for i in range(0, len(body), 20):
        _ = i + 2 if rows[1:] else i + 1
        blocks += 1
    return blocks


def _seconds(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per point; the median is printed")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every base size (0.25: a quick look)")
    parser.add_argument("--only", default="", help="comma-separated formats (default: all)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args()
    limits = extract_limits(IngestLimits())
    chosen = [f for f in FORMATS if not args.only or f in args.only.split(",")]
    results: dict[str, dict[str, object]] = {}
    for name in chosen:
        filename, build, base = FORMATS[name]
        points = []
        for factor in (1, 4, 16):
            size = max(1, int(base * args.scale * factor))
            data = build(size)
            out = extract_file(data, filename, limits)
            chars = sum(len(b.text) for b in out.document.blocks)
            seconds = _seconds(lambda data=data, filename=filename: extract_file(data, filename, limits), args.runs)
            points.append({"units": size, "bytes": len(data), "chars": chars, "seconds": round(seconds, 3),
                           "truncated": out.document.truncated})  # fmt: skip
        t1, t16 = points[0]["seconds"], points[2]["seconds"]
        ratio = (float(t16) / float(t1)) ** 0.25 if float(t1) > 0.005 else None
        results[name] = {"points": points, "ratio_per_doubling": ratio and round(ratio, 2)}
    if "csv" in chosen:  # the same run's baseline: the block loop before the fix (rows parsed beforehand)
        _, build, base = FORMATS["csv"]
        old = []
        for factor in (1, 4, 16):
            rows = list(csv.reader(io.StringIO(build(int(base * args.scale * factor)).decode())))
            old.append({"units": len(rows) - 1, "seconds": round(_seconds(lambda rows=rows: _old_blocks(rows), 1), 3)})
        r = (old[2]["seconds"] / old[0]["seconds"]) ** 0.25 if old[0]["seconds"] > 0.005 else None
        results["csv blocks before #29"] = {"points": old, "ratio_per_doubling": r and round(r, 2)}
    if args.json:
        print(json.dumps(results))
        return
    print(f"{'format':<22} {'1x':>18} {'4x':>18} {'16x':>18}  ratio/doubling")
    for name, r in results.items():
        cells = [f"{p['units']:>7} {p['seconds']:>8.3f}s" for p in r["points"]]  # type: ignore[attr-defined]
        cells += [""] * (3 - len(cells))
        ratio = r["ratio_per_doubling"]
        print(f"{name:<22} {cells[0]:>18} {cells[1]:>18} {cells[2]:>18}  {ratio if ratio else 'too fast to time'}")
    print("(units: rows, paragraphs or pages; seconds: median CPU time of extract_file; 'csv blocks before #29':")
    print(" the old block loop alone, on rows already parsed, one run)")


if __name__ == "__main__":
    main()
