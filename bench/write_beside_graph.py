"""A file's Index stage beside a tenant's vector graph (issue 47.7): how long one write takes when it pushes the
tenant's tail past its limit, with the graph extended in the writer (before) and beside it (now), in one run.

Before the fix a write whose tail passed ``TAIL_MAX`` extended the tenant's HNSW graph inside the writer, and
rebuilt it whole when a quarter of it had been deleted or replaced: a 6 MB file of short lines (~4,000 chunks)
held a ``semfs serve`` worker in Index for 573 s. Here a tenant of ``--rows`` vectors (SciFact-like clusters),
a quarter of them replaced, then one file of ``--file-chunks`` chunks written; the write is timed with the
extension in the writer (``_maintain``, as before) and in the background (``after_write`` now), CPU and wall.

    .venv/bin/python bench/write_beside_graph.py [--rows 60000] [--file-chunks 6000] [--runs 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.builders import index_doc  # noqa: E402

from semfs.adapters.local.search_index import LocalSearchIndex  # noqa: E402
from semfs.adapters.local.vector_index import VectorIndex  # noqa: E402

DIM = 384


def vectors(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(64, DIM)).astype(np.float32)
    v = centres[rng.integers(0, 64, n)] + 0.3 * rng.normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def docs(file_id: str, vecs: np.ndarray) -> list:  # type: ignore[type-arg]
    return [
        index_doc(file_id, i, f"chunk {i} of {file_id}", embedding=v.tolist(), embedding_model="bench-384")
        for i, v in enumerate(vecs)
    ]


def one_write(rows: int, file_chunks: int, in_writer: bool, seed: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        index = LocalSearchIndex(Path(tmp) / "i.db")
        base = vectors(rows, seed)
        with index.batch():
            for start in range(0, rows, 100):
                index.replace_file("acme", f"f{start}", docs(f"f{start}", base[start : start + 100]))
        with index.batch():  # a quarter replaced (a re-ingested folder): the graph's next extension rebuilds it
            for start in range(0, rows // 4, 100):
                index.replace_file("acme", f"f{start}", docs(f"f{start}", base[start : start + 100] * -1))
        index.vectors.join_builds()
        if in_writer:  # the old path: the writer extends the graph itself
            original = VectorIndex._maintain_soon
            VectorIndex._maintain_soon = VectorIndex._maintain  # type: ignore[method-assign]
        try:
            cpu, wall = time.process_time(), time.perf_counter()
            index.replace_file("acme", "big", docs("big", vectors(file_chunks, seed + 1)))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        finally:
            if in_writer:
                VectorIndex._maintain_soon = original  # type: ignore[method-assign]
        index.vectors.join_builds()
        return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=60_000)
    parser.add_argument("--file-chunks", type=int, default=6_000)
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    for label, in_writer in (("extended in the writer (before)", True), ("extended beside it (now)", False)):
        walls, cpus = zip(
            *(one_write(args.rows, args.file_chunks, in_writer, s) for s in range(args.runs)), strict=True
        )
        print(
            f"{label:34s} one {args.file_chunks:,}-chunk write beside {args.rows:,} vectors: "
            f"median {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU "
            f"(runs: {', '.join(f'{w:.2f}' for w in walls)})",
            flush=True,
        )


if __name__ == "__main__":
    main()
