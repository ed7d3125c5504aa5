"""A fresh process's first keyword search after a writer died between its two commits (issue 33).

The index is built once through the bulk write path (SciFact windows, 90 % of the chunks in tenant acme;
random unit vectors: the keyword leg never reads them), then a writer "dies": ten files reach SQLite
through the store's own write path and never reach tantivy, as when a process is killed between the
two commits. Each of ``--runs`` fresh processes starts from a copy of that state and times

- ``first``: opening the store and the tenant's keyword index and its first keyword query (what a
  ``semfs search`` or a restarted ``semfs serve`` waits for), and
- ``rebuild``: the rebuild of the tenant's index from SQLite, which now runs in a background thread and
  which the first search used to run itself before answering: the same-run baseline.

    .venv/bin/python bench/killed_writer.py --size 100000 [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from _common import pct
from search_latency import CACHE, FILES_PER_WRITE, PER_FILE, TENANTS, file_docs, windows

QUERY = "vitamin D deficiency and the risk of fractures in older adults"
DIM = 384


def _vectors(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def build(db: Path, n: int) -> float:
    from semfs.adapters.local.search_index import LocalSearchIndex

    t0 = time.perf_counter()
    index = LocalSearchIndex(db)
    texts, vecs = windows(n), _vectors(n, 1)
    created = datetime(2026, 1, 1, tzinfo=UTC)
    with index.batch():
        batch = []
        for f in range(0, n, PER_FILE):
            tenant, fid, rows = (
                TENANTS[(f // PER_FILE) % len(TENANTS)],
                f"f{f // PER_FILE}",
                range(f, min(f + PER_FILE, n)),
            )
            batch.append(
                (tenant, fid, file_docs(tenant, fid, [texts[j] for j in rows], [vecs[j] for j in rows], created))
            )
            if len(batch) >= FILES_PER_WRITE:
                index.replace_files(batch)
                batch = []
        index.replace_files(batch)
    index.vectors.join_builds()
    # the writer dies: its rows are committed to SQLite, its keyword commit never happens
    texts, vecs = windows(40), _vectors(40, 2)
    late = datetime(2026, 1, 2, tzinfo=UTC)
    for k in range(10):
        rows = range(4 * k, 4 * k + 4)
        docs = file_docs("acme", f"w{k}", [texts[j] for j in rows], [vecs[j] for j in rows], late)
        index.store.replace_files([("acme", f"w{k}", docs)])
    return time.perf_counter() - t0


def first_search(db: Path) -> dict[str, float]:
    t0 = time.perf_counter()
    from semfs.adapters.local.search_index import LocalSearchIndex
    from semfs.domain.models import SearchFilters

    index = LocalSearchIndex(db)
    hits = index.keyword("acme", QUERY, SearchFilters(), 40)
    t1 = time.perf_counter()
    index.keywords.join_repairs()
    t2 = time.perf_counter()
    assert hits
    return {"first": t1 - t0, "rebuild": t2 - t1}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=int, default=100_000, help="chunks in the index")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes timed")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--first", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.first:
        print(json.dumps(first_search(Path(args.first))))
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        built_in = build(Path(tmp) / "built" / "index.db", args.size)
        runs = []
        for _ in range(args.runs):
            shutil.rmtree(Path(tmp) / "run", ignore_errors=True)
            shutil.copytree(Path(tmp) / "built", Path(tmp) / "run")  # the state the dead writer left, each time
            out = subprocess.run(
                [sys.executable, __file__, "--first", str(Path(tmp) / "run" / "index.db")],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
    load = os.getloadavg()[0]
    first, rebuild = [r["first"] for r in runs], [r["rebuild"] for r in runs]
    before = [f + r for f, r in zip(first, rebuild, strict=True)]
    print(f"{args.size:,} chunks, built in {built_in:.0f} s; {args.runs} fresh processes; load {load:.2f}")
    print(f"{'':<36}{'median':>10}{'p95':>10}")
    print(f"{'first keyword search, now':<36}{statistics.median(first):>9.3f}s{pct(first, 95):>9.3f}s")
    print(f"{'  rebuild, in the background':<36}{statistics.median(rebuild):>9.3f}s{pct(rebuild, 95):>9.3f}s")
    print(f"{'first keyword search, before':<36}{statistics.median(before):>9.3f}s{pct(before, 95):>9.3f}s")
    print(f"ratio (before / now, medians): {statistics.median(before) / statistics.median(first):.1f}x")
    if args.json:
        print(json.dumps({"size": args.size, "load": load, "build_s": built_in, "runs": runs}))


if __name__ == "__main__":
    main()
