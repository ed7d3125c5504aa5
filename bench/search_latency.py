"""Search at 10k → 1M chunks in the local index: the HNSW vector leg beside the exact one, in one run.

For each size the index is built through the bulk write path (``replace_files``, one SQLite
transaction and one keyword update per 500 files), then searched by *fresh processes*, as a
``semfs search`` or a restarted ``semfs serve`` would:

- the HNSW probe opens the index, times its first hybrid query (open, query embedding, both legs,
  fusion), then runs every query: hybrid latency including the real model's query embedding, the
  k-NN leg alone, and its peak RSS;
- the same probe again while a writer process adds files continuously (search under ingest): once with
  the writer at the searches' own priority (the baseline), once at the priority semfs's ingesting
  processes and threads take (``SEMFS_INGEST_NICE``), and once more after that writer was killed
  mid-write (its last rows committed, its graph not extended);
- the exact probe (the previous design: every vector of the tenant in one matrix, masked product)
  on the same queries, with its load time and RSS: the baseline, and the truth recall is measured
  against.

Chunk texts are SciFact windows (read in place). Chunk vectors are real all-MiniLM embeddings of
SciFact windows (computed once and cached in ``.semfs/bench``); beyond those, synthetic vectors
that blend two real ones with noise, so larger sizes keep the shape of real embeddings (Gaussian
vectors make HNSW look far worse than it is). 90 % of the chunks belong to the searched tenant.

    .venv/bin/python bench/search_latency.py --sizes 10000,100000,1000000 [--queries 200] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT, pct, scifact_queries, scifact_texts, synthetic_text

TENANTS = ["acme"] * 18 + ["globex", "initech"]  # acme: 90 % of the chunks
PER_FILE = 4
FILES_PER_WRITE = 500
REAL_VECTORS = 20_000
BLOCK = 10_000  # synthetic vectors made at a time (before 2026-12-05: 100,000 and all of them held)
CACHE = ROOT / ".semfs" / "bench"


def windows(n: int) -> list[str]:
    return list(itertools.islice(iter_windows(), n))


def iter_windows() -> Iterator[str]:
    """80-word windows of SciFact abstracts, the same sequence every run, one at a time."""
    rng = random.Random(7)
    source = list(scifact_texts()) or [("", synthetic_text(rng, 400))]
    for title, abstract in itertools.cycle(source):
        words = (title + " " + abstract).split()
        start = rng.randrange(0, max(1, len(words) - 80))
        yield " ".join(words[start : start + 80])


def real_vectors() -> np.ndarray:
    """Real embeddings of SciFact windows, computed once (a few minutes) and cached."""
    path = CACHE / f"minilm-{REAL_VECTORS}.npy"
    if path.exists():
        return np.load(path)
    from semfs.adapters.local.onnx_embedder import OnnxEmbedder

    print(f"embedding {REAL_VECTORS} SciFact windows once (cached in {path})", file=sys.stderr)
    matrix = OnnxEmbedder(threads=os.cpu_count() or 1).embed_array(windows(REAL_VECTORS))
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, matrix)
    return matrix


def vectors(n: int, real: np.ndarray) -> np.ndarray:
    return np.concatenate(list(iter_vectors(n, real)))


def iter_vectors(n: int, real: np.ndarray) -> Iterator[np.ndarray]:
    """The first ``n`` vectors in blocks: the real ones, then blends of two real ones with noise, ``BLOCK`` at
    a time (the same every run). A 1M build holds a block's 15 MB and its temporaries, not 1.5 GB."""
    yield real[:n]
    rng = np.random.default_rng(11)
    extra = n - len(real)
    for start in range(0, extra, BLOCK):
        m = min(BLOCK, extra - start)
        a = real[rng.integers(0, len(real), m)]
        b = real[rng.integers(0, len(real), m)]
        noise = rng.standard_normal((m, real.shape[1])).astype(np.float32)
        noise /= np.linalg.norm(noise, axis=1, keepdims=True)
        v = a + 0.5 * b + 0.25 * noise
        yield (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def file_docs(tenant: str, fid: str, texts: list[str], vecs: list[np.ndarray], created: datetime) -> list[Any]:
    """One file's chunk documents, as the pipeline writes them."""
    from semfs.domain.models import IndexDoc

    return [
        IndexDoc(
            chunk_id=f"{fid}:{i}",
            file_id=fid,
            lineage_id=fid,
            tenant_id=tenant,
            version=1,
            is_latest=True,
            source_type="upload",
            mime_type="text/plain",
            filename=f"{fid}.txt",
            title="",
            text=text,
            embedding=vec,
            embedding_model="all-MiniLM-L6-v2-int8",
            created_at=created,
        )
        for i, (text, vec) in enumerate(zip(texts, vecs, strict=True))
    ]


def build(path: Path, n: int) -> dict[str, float]:
    from semfs.adapters.local.search_index import LocalSearchIndex

    index = LocalSearchIndex(path)
    texts = iter_windows()  # both streamed: the build's peak RSS is the index's, not this script's data
    vecs = (v for block in iter_vectors(n, real_vectors()) for v in block)
    created = datetime(2026, 1, 1, tzinfo=UTC)
    t0 = time.perf_counter()
    with index.batch():
        batch = []
        for f in range(0, n, PER_FILE):
            fid = f"f{f // PER_FILE}"
            tenant = TENANTS[(f // PER_FILE) % len(TENANTS)]
            m = min(PER_FILE, n - f)
            docs = file_docs(tenant, fid, list(itertools.islice(texts, m)), list(itertools.islice(vecs, m)), created)
            batch.append((tenant, fid, docs))
            if len(batch) >= FILES_PER_WRITE:
                index.replace_files(batch)
                batch = []
        index.replace_files(batch)
    build_s = time.perf_counter() - t0
    return {"build_s": build_s, "build_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def probe(path: Path, queries: list[str], exact: bool) -> dict[str, object]:
    """One fresh searching process: the first query, then every query; top-10 ids for recall."""
    t_open = time.perf_counter()
    from semfs.adapters.local.onnx_embedder import OnnxEmbedder
    from semfs.adapters.local.search_index import LocalSearchIndex
    from semfs.adapters.local.vector_index import VectorIndex
    from semfs.domain.models import IndexHit, SearchFilters
    from semfs.domain.ranking import group_by_file, overfetch, rrf
    from semfs.domain.scope import scope

    index = LocalSearchIndex(path)
    model = OnnxEmbedder()
    filters = SearchFilters()
    k = overfetch(10)
    # the previous leg: every vector of the tenant read into one matrix before the first query
    matrix = index.store.vectors(scope("acme", filters)) if exact else None

    def knn(vec: list[float]) -> list[str]:
        if matrix is None:
            return [h.chunk_id for h in index.knn("acme", vec, filters, k)]
        return [h.chunk_id for h in VectorIndex._exact(matrix, np.asarray(vec, dtype=np.float32), k)]

    def hybrid(q: str) -> tuple[list[str], float]:
        """One hybrid search as the service runs it; the k-NN leg's ids and its time."""
        vec = model.embed_query(q)
        t1 = time.perf_counter()
        nn = knn(vec)
        t2 = time.perf_counter()
        kw = index.keyword("acme", q, filters, k)
        nn_hits = [IndexHit(chunk_id=c, file_id=c.split(":")[0], score=1.0) for c in nn]
        group_by_file(rrf([nn_hits, kw]))[:10]
        return nn, (t2 - t1) * 1000

    hybrid(queries[0])
    first = time.perf_counter() - t_open
    total, knn_ms, tops = [], [], []
    for q in queries:
        t0 = time.perf_counter()
        nn, leg = hybrid(q)
        total.append((time.perf_counter() - t0) * 1000)
        knn_ms.append(leg)
        tops.append(nn[:10])
    return {
        "first_query_s": first,
        "hybrid_p50_ms": pct(total, 50),
        "hybrid_p95_ms": pct(total, 95),
        "knn_p50_ms": pct(knn_ms, 50),
        "knn_p95_ms": pct(knn_ms, 95),
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "tops": tops,
    }


def writer(path: Path, nice: int) -> None:
    """Add 4-chunk files to the index until killed (search under ingest), at the priority an ingesting
    process takes (``semfs.priority``; 0: the baseline, as before)."""
    from semfs.adapters.local.search_index import LocalSearchIndex
    from semfs.priority import yield_to_searches

    yield_to_searches(nice)
    index = LocalSearchIndex(path)
    texts = windows(2000)
    real = real_vectors()
    created = datetime(2026, 1, 2, tzinfo=UTC)
    for n in itertools.count():
        fid = f"w{n}"
        rows = [(n * PER_FILE + i) for i in range(PER_FILE)]
        docs = file_docs(
            "acme", fid, [texts[j % len(texts)] for j in rows], [real[j % len(real)] for j in rows], created
        )
        index.replace_file("acme", fid, docs)


def _child(*args: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])  # type: ignore[no-any-return]


def run(n: int, queries: int) -> dict[str, object]:
    from semfs.config import Settings

    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        db = Path(tmp) / "index.db"
        built = _child("--build", str(db), str(n))
        ann = _child("--probe", str(db), str(queries))
        exact = _child("--probe-exact", str(db), str(queries))
        w = subprocess.Popen([sys.executable, __file__, "--writer", str(db), "0"])
        try:  # the baseline: a writer at the searches' own priority
            time.sleep(3)
            busy_level = _child("--probe", str(db), str(queries))
        finally:
            w.kill()
            w.wait()
        nice = Settings().limits.ingest_nice
        w = subprocess.Popen([sys.executable, __file__, "--writer", str(db), str(nice)])
        try:  # as semfs ingest and serve's workers write: stepped back for searches
            time.sleep(3)
            busy = _child("--probe", str(db), str(queries))
        finally:
            w.kill()  # mid-write, as a crash or an OOM kill would: rows committed, its graph not extended
            w.wait()
        killed = _child("--probe", str(db), str(queries))
        tops_a, tops_e = ann.pop("tops"), exact.pop("tops")
        busy.pop("tops")
        busy_level.pop("tops")
        killed.pop("tops")
        recall = float(
            np.mean([len(set(a) & set(e)) / max(1, len(e)) for a, e in zip(tops_a, tops_e, strict=True)])  # type: ignore[call-overload]
        )
        return {
            "size": n,
            **built,
            **ann,
            "recall_at_10": recall,
            "exact_first_query_s": exact["first_query_s"],
            "exact_hybrid_p95_ms": exact["hybrid_p95_ms"],
            "exact_knn_p95_ms": exact["knn_p95_ms"],
            "exact_rss_mb": exact["rss_mb"],
            "ingesting_hybrid_p95_ms": busy["hybrid_p95_ms"],
            "ingesting_ratio": float(busy["hybrid_p95_ms"]) / float(ann["hybrid_p95_ms"]),  # type: ignore[arg-type]
            "ingesting_first_query_s": busy["first_query_s"],
            "ingesting_same_priority_hybrid_p95_ms": busy_level["hybrid_p95_ms"],
            "ingesting_same_priority_ratio": float(busy_level["hybrid_p95_ms"]) / float(ann["hybrid_p95_ms"]),  # type: ignore[arg-type]
            "after_kill_first_query_s": killed["first_query_s"],
            "after_kill_hybrid_p95_ms": killed["hybrid_p95_ms"],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated chunk counts")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true", help="end with one JSON line: one object per size")
    parser.add_argument("--build", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--probe", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--probe-exact", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--writer", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    rng = random.Random(3)
    queries = (scifact_queries() or [synthetic_text(rng, 8) for _ in range(args.queries)])[: args.queries]
    if args.build:
        print(json.dumps(build(Path(args.build[0]), int(args.build[1]))))
        return
    if args.probe or args.probe_exact:
        db, count = args.probe or args.probe_exact
        print(json.dumps(probe(Path(db), queries[: int(count)], exact=bool(args.probe_exact))))
        return
    if args.writer:
        writer(Path(args.writer[0]), int(args.writer[1]))
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    real_vectors()
    results = []
    for n in [int(s) for s in args.sizes.split(",")]:
        r = run(n, args.queries)
        results.append(r)
        print(
            f"{n:>8} chunks  built in {r['build_s']:.0f} s  (peak RSS {r['build_rss_mb']:.0f} MB)\n"
            f"  hybrid p50/p95   HNSW {r['hybrid_p50_ms']:.1f}/{r['hybrid_p95_ms']:.1f} ms"
            f"   exact p95 {r['exact_hybrid_p95_ms']:.1f} ms\n"
            f"  k-NN leg p95     HNSW {r['knn_p95_ms']:.2f} ms   exact {r['exact_knn_p95_ms']:.2f} ms"
            f"   recall@10 of exact {r['recall_at_10']:.3f}\n"
            f"  first query      HNSW {r['first_query_s']:.2f} s   exact {r['exact_first_query_s']:.2f} s\n"
            f"  RSS              HNSW {r['rss_mb']:.0f} MB   exact {r['exact_rss_mb']:.0f} MB\n"
            f"  while ingesting  hybrid p95 {r['ingesting_hybrid_p95_ms']:.1f} ms"
            f" ({r['ingesting_ratio']:.2f}x idle)   first query {r['ingesting_first_query_s']:.2f} s\n"
            f"  writer at the searches' priority: p95 {r['ingesting_same_priority_hybrid_p95_ms']:.1f} ms"
            f" ({r['ingesting_same_priority_ratio']:.2f}x idle)\n"
            f"  writer killed    first query {r['after_kill_first_query_s']:.2f} s"
            f"   hybrid p95 {r['after_kill_hybrid_p95_ms']:.1f} ms",
            flush=True,
        )
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
