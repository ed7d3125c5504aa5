"""Which ANN library for the local vector leg: usearch, faiss-cpu and hnswlib on the same vectors.

Real all-MiniLM embeddings of SciFact windows (the cache `bench/search_latency.py` writes), grown
to ``--size`` with blends of two real vectors plus noise; queries are held-out real vectors. Each
candidate builds its index on all cores, then answers the queries one at a time on one thread.
Reported: build time, p50/p95 of a top-40 search (what a hybrid search asks of the leg), recall@10
of those 40 candidates against exact cosine (the leg rescores candidates exactly, so this is the
recall it ends with), and the bytes of the saved index. Which can memory-map a saved index and
add/remove in place is a matter of their APIs, noted in docs/benchmarks.md.

    .venv/bin/python bench/ann_choice.py [--size 200000] [--queries 300]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from _common import pct
from search_latency import real_vectors, vectors

K, CANDIDATES = 10, 40


def usearch_index(x: np.ndarray, path: Path) -> Callable[[np.ndarray], np.ndarray]:
    from usearch.index import Index

    index = Index(ndim=x.shape[1], metric="cos", dtype="i8", connectivity=16, expansion_add=128, expansion_search=64)
    index.add(np.arange(len(x), dtype=np.uint64), x, threads=os.cpu_count() or 1)
    index.save(str(path))
    view = Index.restore(str(path), view=True)
    return lambda q: view.search(q, CANDIDATES, threads=1).keys.astype(np.int64)


def faiss_hnsw_sq8(x: np.ndarray, path: Path) -> Callable[[np.ndarray], np.ndarray]:
    import faiss

    index = faiss.IndexHNSWSQ(x.shape[1], faiss.ScalarQuantizer.QT_8bit, 16, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 128
    index.train(x)
    index.add(x)
    index.hnsw.efSearch = 64
    faiss.write_index(index, str(path))
    faiss.omp_set_num_threads(1)
    return lambda q: index.search(q[None, :], CANDIDATES)[1][0].astype(np.int64)


def faiss_ivf_sq8(x: np.ndarray, path: Path) -> Callable[[np.ndarray], np.ndarray]:
    import faiss

    lists = max(16, int(4 * np.sqrt(len(x))))
    quantizer = faiss.IndexFlatIP(x.shape[1])
    index = faiss.IndexIVFScalarQuantizer(
        quantizer, x.shape[1], lists, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    index.train(x[np.random.default_rng(1).permutation(len(x))[: min(len(x), 50 * lists)]])
    index.add(x)
    index.nprobe = max(8, lists // 16)
    faiss.write_index(index, str(path))
    faiss.omp_set_num_threads(1)
    return lambda q: index.search(q[None, :], CANDIDATES)[1][0].astype(np.int64)


def hnswlib_index(x: np.ndarray, path: Path) -> Callable[[np.ndarray], np.ndarray]:
    import hnswlib

    index = hnswlib.Index(space="cosine", dim=x.shape[1])
    index.init_index(max_elements=len(x), ef_construction=128, M=16)
    index.add_items(x, np.arange(len(x)), num_threads=os.cpu_count() or 1)
    index.set_ef(64)
    index.save_index(str(path))
    index.set_num_threads(1)
    return lambda q: index.knn_query(q, CANDIDATES)[0][0].astype(np.int64)


CANDIDATES_BY_NAME = {
    "usearch hnsw i8": usearch_index,
    "faiss hnsw sq8": faiss_hnsw_sq8,
    "faiss ivf sq8": faiss_ivf_sq8,
    "hnswlib f32": hnswlib_index,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    real = real_vectors()
    queries, corpus_real = real[: args.queries], real[args.queries :]
    x = vectors(args.size, corpus_real)
    truth = [set(np.argsort(-(x @ q))[:K]) for q in queries]
    print(f"{len(x)} vectors x {x.shape[1]}, {len(queries)} real queries, top-{CANDIDATES} candidates")
    for name, make in CANDIDATES_BY_NAME.items():
        try:
            __import__(name.split()[0])
        except ImportError:
            print(f"  {name:<16} not installed")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "index"
            t0 = time.perf_counter()
            search = make(x, path)
            build = time.perf_counter() - t0
            ms, recall = [], []
            for q, t in zip(queries, truth, strict=True):
                t1 = time.perf_counter()
                found = search(q)
                ms.append((time.perf_counter() - t1) * 1000)
                recall.append(len(t & set(found.tolist())) / K)
            size_mb = path.stat().st_size / 1e6
        print(
            f"  {name:<16} build {build:6.1f} s   search p50 {pct(ms, 50):.2f} p95 {pct(ms, 95):.2f} ms"
            f"   recall@10 in top-{CANDIDATES} {np.mean(recall):.3f}   file {size_mb:.0f} MB",
            flush=True,
        )


if __name__ == "__main__":
    main()
