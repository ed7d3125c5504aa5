"""The local k-NN leg under an access filter (issue 50): a caller who may read 1 %, 10 % or 50 % of a tenant's
chunks still gets k hits, the same as an exact search over what they may read, and about as fast as a search
with no filter.

One tenant of ``--size`` chunks (4 a file) in a ``LocalSearchIndex`` with its HNSW graph built, each file
readable by ``u:all`` and by ``u:p1`` / ``u:p10`` / ``u:p50`` for 1 / 10 / 50 % of the files (drawn once). For
``--queries`` query vectors: the search an admin makes (no filter) and each user's, timed one at a time;
recall@10 is against exact cosine over the chunks that user may read. The vectors are all-MiniLM's, as
``bench/ann_choice.py`` takes them: real embeddings of SciFact windows (cached by ``bench/search_latency.py``),
grown to ``--size`` with blends of two real ones plus noise; the queries are held-out real vectors.
``--synthetic`` uses clustered random unit vectors instead (no model needed; harder for an int8 graph than
embeddings are, so its recall is the graph's floor, the admin's included).

    .venv/bin/python bench/filtered_knn.py [--size 100000] [--queries 200] [--synthetic]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from _common import pct

K, PER_FILE, DIM = 10, 4, 384  # (DIM: the synthetic vectors')
SHARES = {"u:p1": 0.01, "u:p10": 0.10, "u:p50": 0.50}


def clustered(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(8, n // 20), DIM)).astype(np.float32)
    v = centres[rng.integers(0, len(centres), n)] + 0.35 * rng.standard_normal((n, DIM)).astype(np.float32)
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def build(path: Path, vecs: np.ndarray, readers: list[list[str]]) -> Any:
    """The index with every chunk written (in batches, as an ingest writes them) and its graph built."""
    from semfs.adapters.local.search_index import LocalSearchIndex
    from semfs.domain.models import IndexDoc

    index = LocalSearchIndex(path, ann_min=1000, tail_max=1000, build_threads=None)
    made = datetime(2026, 1, 1, tzinfo=UTC)

    def doc(f: int, i: int) -> IndexDoc:
        n = i - f * PER_FILE
        return IndexDoc(
            chunk_id=f"f{f}:{n}", file_id=f"f{f}", lineage_id=f"l{f}", tenant_id="acme", version=1, is_latest=True,
            source_type="upload", mime_type="text/plain", filename=f"f{f}.txt", title=f"f{f}", text=f"chunk {i}",
            embedding=vecs[i].tolist(), embedding_model="bench-384", readers=readers[f], created_at=made,
        )  # fmt: skip

    files = [
        ("acme", f"f{f}", [doc(f, i) for i in range(f * PER_FILE, (f + 1) * PER_FILE)])
        for f in range(len(vecs) // PER_FILE)
    ]
    with index.batch():
        for start in range(0, len(files), 500):
            index.replace_files(files[start : start + 500])
    index.vectors.join_builds()
    return index


def measure(index: Any, vecs: np.ndarray, readers: list[list[str]], queries: np.ndarray) -> dict[str, Any]:
    """Per caller: the search times (ms), recall@10 against exact cosine over its chunks, and how many
    searches returned k hits."""
    from semfs.domain.models import SearchFilters

    callers: dict[str, tuple[str, ...] | None] = {"none (admin)": None, **{u: ("tenant", u) for u in SHARES}}
    out: dict[str, Any] = {who: {"ms": [], "recall": [], "k": 0} for who in callers}
    rows_of = {u: np.array([i for i in range(len(vecs)) if u in readers[i // PER_FILE]]) for u in SHARES}
    rows_of["none (admin)"] = np.arange(len(vecs))
    for q in queries:
        for who, tokens in callers.items():
            t = time.perf_counter()
            hits = index.knn("acme", q.tolist(), SearchFilters().read_as(tokens), K)
            out[who]["ms"].append((time.perf_counter() - t) * 1000)
            out[who]["k"] += len(hits) == K
            mine = rows_of[who]
            exact = mine[np.argsort(-(vecs[mine] @ q), kind="stable")[:K]]
            want = {f"f{i // PER_FILE}:{i % PER_FILE}" for i in exact}
            out[who]["recall"].append(len(want & {h.chunk_id for h in hits}) / K)
    return out


def report(found: dict[str, Any], queries: int) -> None:
    base = pct(found["none (admin)"]["ms"], 95)
    print(f"{'reads as':<14}{'share':>7}{'p50 ms':>9}{'p95 ms':>9}{'p95 / none':>12}{'recall@10':>11}{'k hits':>9}")
    for who, f in found.items():
        share = "100 %" if who.startswith("none") else f"{SHARES[who] * 100:g} %"
        r = f"{np.mean(f['recall']):.3f}" if f["recall"] else "-"
        ms = f["ms"]
        print(f"{who:<14}{share:>7}{pct(ms, 50):>9.2f}{pct(ms, 95):>9.2f}{pct(ms, 95) / base:>12.2f}{r:>11}"
              f"{f['k']:>5}/{queries}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--synthetic", action="store_true")
    args = ap.parse_args()
    if args.synthetic:
        vecs, queries = clustered(args.size, 5), clustered(args.queries, 9)
    else:
        from search_latency import real_vectors, vectors

        real = real_vectors()
        queries, vecs = real[: args.queries], vectors(args.size, real[args.queries :])
    draw = np.random.default_rng(7).random(args.size // PER_FILE)
    readers = [["u:all", *(u for u, share in SHARES.items() if x < share)] for x in draw]
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        index = build(Path(tmp) / "index.db", vecs, readers)
        print(f"{args.size} chunks indexed and the graph built in {time.perf_counter() - started:.0f} s")
        report(measure(index, vecs, readers, queries), args.queries)


if __name__ == "__main__":
    main()
