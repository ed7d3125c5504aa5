"""Hybrid search latency (warm) at 10k and 100k chunks in the local index.

Chunk texts are SciFact sentences windows (read in place; synthetic text if absent). Chunk vectors
come from the hash embedder: the vector leg is an exact scan, whose cost depends on the number
and dimension of vectors only, so this measures the same work as real embeddings would, without
hours of embedding. Query vectors come from the real local model, so the reported hybrid latency
includes embedding the query. Prints percentiles per size; compare the p95 with the 50 ms goal.

    .venv/bin/python bench/search_latency.py [--sizes 10000 100000] [--queries 200]
"""

from __future__ import annotations

import argparse
import itertools
import random
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _common import pct, scifact_queries, scifact_texts, summary, synthetic_text

from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.adapters.local.onnx_embedder import OnnxEmbedder
from semfs.adapters.local.search_index import LocalSearchIndex
from semfs.domain.models import IndexDoc, SearchFilters
from semfs.domain.ranking import group_by_file, overfetch, rrf

TENANTS = ["acme", "globex", "initech", "umbrella"]


def chunk_texts(n: int) -> list[str]:
    rng = random.Random(7)
    texts: list[str] = []
    for title, abstract in itertools.cycle(list(scifact_texts()) or [("", "")]):
        words = (title + " " + abstract).split() or synthetic_text(rng).split()
        start = rng.randrange(0, max(1, len(words) - 120))
        texts.append(" ".join(words[start : start + 120]))
        if len(texts) >= n:
            return texts
    return texts


def build(path: Path, n: int) -> LocalSearchIndex:
    index = LocalSearchIndex(path)
    emb = HashEmbedder()
    texts = chunk_texts(n)
    created = datetime(2026, 1, 1, tzinfo=UTC)
    per_file = 4
    t0 = time.perf_counter()
    with index.batch():
        _fill(index, emb, texts, created, per_file, n)
    print(f"  built {n} chunks in {time.perf_counter() - t0:.1f}s")
    return index


def _fill(
    index: LocalSearchIndex, emb: HashEmbedder, texts: list[str], created: datetime, per_file: int, n: int
) -> None:
    for f in range(0, n, per_file):
        fid = f"f{f // per_file}"
        tenant = TENANTS[(f // per_file) % len(TENANTS)]
        part = texts[f : f + per_file]
        vecs = emb.embed_documents(part)
        docs = [
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
                title=fid,
                text=t,
                embedding=v,
                embedding_model=emb.model,
                created_at=created,
            )
            for i, (t, v) in enumerate(zip(part, vecs, strict=True))
        ]
        index.replace_file(tenant, fid, docs)


def run(n: int, queries: list[str], model: OnnxEmbedder) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        index = build(Path(tmp) / "index.db", n)
        filters = SearchFilters()
        k = overfetch(10)
        index.knn("acme", model.embed_query("warm up"), filters, k)  # load the vector cache
        total, embed_ms, kw_ms, knn_ms = [], [], [], []
        for q in queries:
            t0 = time.perf_counter()
            vec = model.embed_query(q)
            t1 = time.perf_counter()
            kw = index.keyword("acme", q, filters, k)
            t2 = time.perf_counter()
            nn = index.knn("acme", vec, filters, k)
            t3 = time.perf_counter()
            group_by_file(rrf([nn, kw]))[:10]
            t4 = time.perf_counter()
            total.append((t4 - t0) * 1000)
            embed_ms.append((t1 - t0) * 1000)
            kw_ms.append((t2 - t1) * 1000)
            knn_ms.append((t3 - t2) * 1000)
        print(f"{n:>7} chunks, {len(queries)} hybrid queries (ms):")
        print(f"  total      {summary(total)}")
        print(f"  embed q    {summary(embed_ms)}")
        print(f"  bm25 leg   {summary(kw_ms)}")
        print(f"  knn leg    {summary(knn_ms)}")
        goal = "meets" if pct(total, 95) <= 50 else "MISSES"
        print(f"  p95 {pct(total, 95):.1f} ms {goal} the 50 ms goal")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(3)
    queries = scifact_queries() or [synthetic_text(rng, 8) for _ in range(args.queries)]
    queries = queries[: args.queries]
    model = OnnxEmbedder()
    for n in args.sizes:
        run(n, queries, model)


if __name__ == "__main__":
    main()
