"""The local k-NN leg's graph breadth, chosen by measurement: recall@10 and search time against ``ef``
(usearch's ``expansion_search``) at each size, on a graph built as ``VectorIndex`` builds it.

The vectors are those of ``bench/search_latency.py`` (real all-MiniLM embeddings of SciFact windows grown
with blends of two real ones plus noise); the queries are SciFact's questions embedded by the same model, as
a search embeds them. Each query asks the graph for the candidates the leg asks for (80 for a top-40 leg),
rescores them exactly in float32 as the leg does, and keeps the top 10; recall@10 is against the exact top 10
over every vector. Search time is the graph search alone, one thread, p50/p95.

    .venv/bin/python bench/graph_params.py --sizes 100000,300000,1000000 [--efs 128,256,512,768,1024]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from _common import pct, scifact_queries
from search_latency import iter_vectors, real_vectors

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))

from semfs.adapters.local.vector_index import CONNECTIVITY, EXPANSION_ADD, _breadth

K, CANDIDATES = 10, 80


def _exact_top(q: np.ndarray, x: np.ndarray) -> np.ndarray:
    scores = q @ x.T
    part = np.argpartition(-scores, K, axis=1)[:, :K]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1)
    return np.take_along_axis(part, order, axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--efs", default="128,256,384,512,768,1024,1536")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--connectivity", type=int, default=CONNECTIVITY)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from usearch.index import Index

    from semfs.adapters.local.onnx_embedder import OnnxEmbedder

    questions = scifact_queries()[: args.queries]
    q = np.asarray(OnnxEmbedder().embed_array(questions), dtype=np.float32)
    real = real_vectors()
    rows = []
    for n in [int(s) for s in args.sizes.split(",")]:
        x = np.concatenate(list(iter_vectors(n, real)))
        truth = np.concatenate([_exact_top(q[i : i + 20], x) for i in range(0, len(q), 20)])
        graph = Index(ndim=x.shape[1], metric="cos", dtype="i8", connectivity=args.connectivity,
                      expansion_add=EXPANSION_ADD)  # fmt: skip
        t0 = time.perf_counter()
        graph.add(np.arange(n, dtype=np.uint64), x, threads=os.cpu_count() or 1)
        build_s = time.perf_counter() - t0
        for ef in [int(e) for e in args.efs.split(",")]:
            graph.expansion_search = ef
            times, hits = [], 0
            for i, vec in enumerate(q):
                t1 = time.perf_counter()
                found = graph.search(vec, CANDIDATES, threads=1).keys.astype(np.int64)
                times.append((time.perf_counter() - t1) * 1000)
                top = found[np.argsort(-(x[found] @ vec), kind="stable")][:K]
                hits += len(set(top.tolist()) & set(truth[i].tolist()))
            row = {
                "size": n,
                "connectivity": args.connectivity,
                "ef": ef,
                "recall_at_10": hits / (K * len(q)),
                "p50_ms": pct(times, 50),
                "p95_ms": pct(times, 95),
                "build_s": build_s,
                "chosen": ef == _breadth(n),
            }
            rows.append(row)
            if not args.json:
                mark = "  <- the leg's breadth at this size" if row["chosen"] else ""
                print(
                    f"{n:>9} M={args.connectivity} ef {ef:>5}: recall@10 {row['recall_at_10']:.3f}"
                    f"  graph search p50/p95 {row['p50_ms']:.2f}/{row['p95_ms']:.2f} ms{mark}",
                    flush=True,
                )
        del graph, x
    if args.json:
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
