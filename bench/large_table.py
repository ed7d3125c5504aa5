"""A large table through the whole pipeline (issue 53.5): CPU and wall time at 1x, 4x and 16x, and how many of its
rows a keyword search finds.

A CSV of 12,500 / 50,000 / 200,000 rows (the 16x is ~9 MB, past the 2,000,000-character text budget that cut
tables before) is ingested with ``ingest_bytes`` into a fresh data folder with the default limits: extraction in
the bounded worker, the extractive enricher, chunking, the first ``SEMFS_MAX_CHUNKS`` chunks embedded and the
rest indexed for keywords. The embedder is the hash embedder: the model's share is bounded by the embedding cap
and measured by ``bench/ingest_throughput.py``; this measures what grows with the table. Then 20 rows spread
over the table are searched for by a word only they hold. Before this change the same 200,000 rows were cut at
2,000,000 characters (about 44,000 rows kept), and chunks past the cap were dropped.

    .venv/bin/python bench/large_table.py [--scale 1.0]
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import tempfile
import time
from pathlib import Path

from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.domain.models import SearchRequest
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.query.search import search

PROBES = 20


def table(rows: int) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["id", "date", "item", "amount", "note"])
    writer.writerows(
        [str(i), f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}", f"part{i}x", f"{i * 1.25:.2f}", f"pallet {i % 40}"]
        for i in range(rows)
    )
    return out.getvalue().encode()


def busy() -> float:
    """The machine's busy CPU seconds so far (/proc/stat: the worker process counts too)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    return (fields[0] + fields[1] + fields[2] + fields[5] + fields[6]) / os.sysconf("SC_CLK_TCK")


def one(rows: int) -> dict[str, float | int]:
    data = table(rows)
    with tempfile.TemporaryDirectory() as tmp:
        c = build_container(Settings(data_dir=Path(tmp)), embedder=HashEmbedder())
        try:
            t0, c0 = time.perf_counter(), busy()
            record = ingest_bytes(c, "default", data, "ledger.csv").record
            wall, cpu = time.perf_counter() - t0, busy() - c0
            probes = [round(k * (rows - 1) / (PROBES - 1)) for k in range(PROBES)]
            found, took = 0, []
            for i in probes:
                s0 = time.perf_counter()
                hits = search(c, "default", SearchRequest(query=f"part{i}x", mode="keyword")).results
                took.append(time.perf_counter() - s0)
                found += any(h.file_id == record.file_id for h in hits)
        finally:
            c.close()
    took.sort()
    return {
        "rows": rows,
        "mb": len(data) / 1e6,
        "embedded": record.chunk_count,
        "keyword": record.keyword_chunks,
        "cpu": cpu,
        "wall": wall,
        "found": found,
        "search_ms": 1000 * took[len(took) // 2],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the row counts (0.25: a quick look)")
    args = parser.parse_args()
    points = [one(int(12_500 * args.scale * f)) for f in (1, 4, 16)]
    head = ("rows", "MB", "embedded", "keyword", "CPU s", "wall s", "rows found", "search")
    print(" ".join(f"{h:>{w}}" for h, w in zip(head, (8, 6, 8, 8, 7, 7, 10, 8), strict=True)))
    for p in points:
        print(
            f"{p['rows']:>8} {p['mb']:>6.1f} {p['embedded']:>8} {p['keyword']:>8} {p['cpu']:>7.1f} {p['wall']:>7.1f}"
            f" {p['found']:>7}/{PROBES} {p['search_ms']:>6.1f}ms"
        )
    ratio = (points[2]["cpu"] / points[0]["cpu"]) ** 0.25
    print(f"CPU per doubling of the table: x{ratio:.2f} (linear: 2; quadratic: 4); search: median of {PROBES} queries")


if __name__ == "__main__":
    main()
