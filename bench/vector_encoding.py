"""How much ranking quality a cheaper vector encoding costs (issue 54.2), on SciFact's own relevance judgements.

The same real embeddings (all-MiniLM-L6-v2, semfs's default local model: each SciFact abstract's first 256
word pieces, each test query) ranked five ways by the vector leg alone, exactly (no graph, so only the
encoding differs): float32 (what the template stored before `VectorEncoding`), float16, 8-bit scalar
quantization per dimension (what usearch's ``i8`` and OpenSearch's Lucene ``sq`` encoder keep in memory),
1-bit (binary) alone, and 1-bit with the top 40 rescored in full precision (OpenSearch's on-disk mode).
Reported: nDCG@10 and recall@10 against SciFact's test qrels (nothing here was fitted to them), and the
bytes a vector takes in memory. The embeddings are cached in `.artifacts/bench/`.

    .venv/bin/python bench/vector_encoding.py [--data ../shared/bench/scifact]
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".artifacts" / "bench"
K, RESCORE = 10, 40


def load(data: Path) -> tuple[list[str], list[str], list[str], list[str], dict[str, set[str]]]:
    docs: list[str] = []
    texts: list[str] = []
    with gzip.open(data / "corpus.jsonl.gz", "rt") as f:
        for line in f:
            row = json.loads(line)
            docs.append(str(row["_id"]))
            texts.append(f"{row.get('title', '')}\n{row['text']}")
    qrels: dict[str, set[str]] = {}
    with (data / "qrels" / "test.tsv").open() as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if int(row["score"]) > 0:
                qrels.setdefault(row["query-id"], set()).add(row["corpus-id"])
    qids, queries = [], []
    with (data / "queries.jsonl").open() as f:
        for line in f:
            row = json.loads(line)
            if str(row["_id"]) in qrels:
                qids.append(str(row["_id"]))
                queries.append(row["text"])
    return docs, texts, qids, queries, qrels


def embedded(name: str, texts: list[str]) -> np.ndarray:
    path = CACHE / f"vector-encoding-{name}-{len(texts)}.npy"
    if path.exists():
        return np.load(path)
    from semfs.adapters.local.onnx_embedder import OnnxEmbedder

    print(f"embedding {len(texts):,} {name} once (cached in {path})", file=sys.stderr)
    matrix = OnnxEmbedder(threads=os.cpu_count() or 1).embed_array(texts)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, matrix)
    return matrix


def int8(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per-dimension scalar quantization to 256 levels between the corpus's bounds, read back as floats."""
    scale = (hi - lo) / 255
    q = np.clip(np.round((x - lo) / scale), 0, 255)
    return (q * scale + lo).astype(np.float32)


def ranked(scores: np.ndarray, k: int) -> np.ndarray:
    top = np.argpartition(-scores, k, axis=1)[:, :k]
    order = np.take_along_axis(scores, top, axis=1).argsort(axis=1)[:, ::-1]
    return np.take_along_axis(top, order, axis=1)


def ndcg_recall(top: np.ndarray, docs: list[str], qids: list[str], qrels: dict[str, set[str]]) -> tuple[float, float]:
    ndcgs, recalls = [], []
    for row, qid in zip(top, qids, strict=True):
        relevant = qrels[qid]
        got = [docs[i] for i in row[:K]]
        dcg = sum(1 / math.log2(r + 2) for r, d in enumerate(got) if d in relevant)
        ideal = sum(1 / math.log2(r + 2) for r in range(min(K, len(relevant))))
        ndcgs.append(dcg / ideal)
        recalls.append(len(relevant & set(got)) / len(relevant))
    return float(np.mean(ndcgs)), float(np.mean(recalls))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "bench" / "scifact")
    args = parser.parse_args()
    docs, texts, qids, queries, qrels = load(args.data)
    d = embedded("scifact-corpus", texts)
    q = embedded("scifact-test-queries", queries)
    lo, hi = d.min(axis=0), d.max(axis=0)
    d16, q16 = d.astype(np.float16).astype(np.float32), q.astype(np.float16).astype(np.float32)
    d8 = int8(d, lo, hi)
    q8 = int8(np.clip(q, lo, hi), lo, hi)
    dbits, qbits = np.where(d > 0, 1.0, -1.0).astype(np.float32), np.where(q > 0, 1.0, -1.0).astype(np.float32)

    def binary_rescored() -> np.ndarray:
        candidates = ranked(qbits @ dbits.T, RESCORE)
        exact = np.einsum("qd,qkd->qk", q, d[candidates])
        return np.take_along_axis(candidates, exact.argsort(axis=1)[:, ::-1], axis=1)

    dim = d.shape[1]
    ways: dict[str, tuple[int, Callable[[], np.ndarray]]] = {
        "float32 (before)": (4 * dim, lambda: ranked(q @ d.T, K)),
        "float16": (2 * dim, lambda: ranked(q16 @ d16.T, K)),
        "int8 scalar (sq)": (dim, lambda: ranked(q8 @ d8.T, K)),
        "1-bit": (dim // 8, lambda: ranked(qbits @ dbits.T, K)),
        f"1-bit, top {RESCORE} rescored": (dim // 8, binary_rescored),
    }
    print(f"SciFact test: {len(qids)} queries over {len(docs):,} abstracts; all-MiniLM-L6-v2, {dim} dimensions")
    print(f"{'encoding':<26} {'bytes/vector':>12} {'nDCG@10':>8} {'recall@10':>10} {'nDCG vs float32':>16}")
    base = None
    for name, (size, rank) in ways.items():
        ndcg, recall = ndcg_recall(rank(), docs, qids, qrels)
        base = base if base is not None else ndcg
        print(f"{name:<26} {size:>12,} {ndcg:>8.4f} {recall:>10.4f} {ndcg / base:>15.3f}x")


if __name__ == "__main__":
    main()
