"""Where a fresh process's first search goes, phase by phase, at one index size (issue 33).

The index is built once through the bulk write path (``search_latency.build``: SciFact windows, real
MiniLM vectors grown to the size, 90 % of the chunks in tenant acme). Then ``--runs`` fresh processes, as
a ``semfs search`` or a restarted ``semfs serve`` would be, each time:

- ``import``: numpy and the local index's modules;
- ``keyword``: opening the store and the tenant's tantivy index (with its consistency check against
  SQLite) and the first keyword query;
- ``knn``: the first k-NN query (opening the mapped graph);
- ``model``: loading the embedding model and embedding the first query.

The baseline in the same run is the consistency check the keyword index ran on open before: a ``COUNT(*)``
of the tenant's chunk rows, timed in the same fresh processes after their first search (so it warms nothing
the phases read; it finds a warmer cache than a fresh process would, so the baseline is if anything too kind).

    .venv/bin/python bench/first_query.py --size 300000 [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import pct
from search_latency import CACHE, build

QUERY = "vitamin D deficiency and the risk of fractures in older adults"


def phases(db: Path) -> dict[str, float]:
    """One fresh process's first search, timed by phase."""
    t0 = time.perf_counter()
    import numpy as np

    from semfs.adapters.local.search_index import LocalSearchIndex
    from semfs.domain.models import SearchFilters

    t1 = time.perf_counter()
    index = LocalSearchIndex(db)
    t2 = time.perf_counter()
    hits = index.keyword("acme", QUERY, SearchFilters(), 40)
    t3 = time.perf_counter()
    probe = np.frombuffer(index.store.rows("tenant_id = ? AND embedding IS NOT NULL LIMIT 1", ["acme"])[0]["embedding"],
                          dtype=np.float32)  # fmt: skip
    t4 = time.perf_counter()
    near = index.knn("acme", probe.tolist(), SearchFilters(), 40)
    t5 = time.perf_counter()
    from semfs.adapters.local.onnx_embedder import OnnxEmbedder

    OnnxEmbedder().embed_query(QUERY)
    t6 = time.perf_counter()
    # the check opening the keyword index used to run, timed last so that it warms nothing the phases
    # read (it finds a warmer cache than a fresh process would: the baseline is, if anything, too kind)
    sql = "SELECT COUNT(*) FROM docs WHERE tenant_id = ? AND kind = 'chunk'"
    index.store.conn().execute(sql, ("acme",)).fetchone()
    t7 = time.perf_counter()
    assert hits and near
    return {"import": t1 - t0, "keyword": t3 - t2, "knn": t5 - t4, "model": t6 - t5, "old_count": t7 - t6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=int, default=300_000, help="chunks in the index")
    parser.add_argument("--runs", type=int, default=5, help="fresh processes timed")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--phases", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phases:
        print(json.dumps(phases(Path(args.phases))))
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        db = Path(tmp) / "index.db"
        built = build(db, args.size)
        runs = []
        for _ in range(args.runs):
            out = subprocess.run(
                [sys.executable, __file__, "--phases", str(db)], check=True, capture_output=True, text=True
            ).stdout
            runs.append(json.loads(out.strip().splitlines()[-1]))
    names = ["import", "keyword", "knn", "model"]
    load = os.getloadavg()[0]
    print(f"{args.size:,} chunks, built in {built['build_s']:.0f} s; {args.runs} fresh processes; load {load:.2f}")
    print(f"{'phase':<28}{'median':>10}{'p95':>10}")
    for name in [*names, "old_count"]:
        values = [r[name] for r in runs]
        label = "(before) COUNT(*) check" if name == "old_count" else name
        print(f"{label:<28}{statistics.median(values):>9.3f}s{pct(values, 95):>9.3f}s")
    first = [sum(r[n] for n in names) for r in runs]
    before = [f + r["old_count"] for f, r in zip(first, runs, strict=True)]
    print(f"{'first search, now':<28}{statistics.median(first):>9.3f}s{pct(first, 95):>9.3f}s")
    print(f"{'first search, before':<28}{statistics.median(before):>9.3f}s{pct(before, 95):>9.3f}s")
    print(f"ratio (before / now, medians): {statistics.median(before) / statistics.median(first):.2f}x")
    if args.json:
        print(json.dumps({"size": args.size, "load": load, **built, "runs": runs}))


if __name__ == "__main__":
    main()
