"""A plain BM25 baseline on a BEIR set, to hold semfs's keyword leg against.

BM25 as Lucene scores it (k1 0.9, b 0.4 — Anserini's BEIR setting), over each document's title
and text as one field, English stop words and Snowball stemming — computed by ``bm25s``, a library
nobody here wrote. Prints nDCG@10 / R@100 beside semfs's keyword leg (`semfs eval --mode keyword`)
on the same documents and queries, from the same run.

    .venv/bin/python bench/bm25_baseline.py                 # SciFact, and semfs keyword beside it
    .venv/bin/python bench/bm25_baseline.py --beir DIR --max-docs 2000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from _common import SCIFACT

from semfs.config import Settings
from semfs.evaluation import evaluate, judged_subset, ndcg_at, recall_at


def plain_bm25(beir: Path, max_docs: int | None, k1: float, b: float) -> dict[str, float]:
    import bm25s
    import Stemmer

    corpus, queries, qrels = judged_subset(beir, max_docs)
    stemmer = Stemmer.Stemmer("english")
    ids = [doc_id for doc_id, _, _ in corpus]
    tokens = bm25s.tokenize([f"{t} {x}" for _, t, x in corpus], stopwords="en", stemmer=stemmer, show_progress=False)
    model = bm25s.BM25(method="lucene", k1=k1, b=b)
    model.index(tokens, show_progress=False)
    ndcg, r100 = [], []
    for qid, text in queries.items():
        q = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        docs, scores = model.retrieve(q, k=min(100, len(ids)), show_progress=False)
        ranked = [ids[i] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]
        ndcg.append(ndcg_at(ranked, qrels[qid]))
        r100.append(recall_at(ranked, qrels[qid], 100))
    return {"ndcg@10": round(statistics.fmean(ndcg), 4), "recall@100": round(statistics.fmean(r100), 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--beir", default=str(SCIFACT))
    ap.add_argument("--max-docs", type=int, default=None)
    ap.add_argument("--k1", type=float, default=0.9)
    ap.add_argument("--b", type=float, default=0.4)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    beir = Path(args.beir)
    baseline = plain_bm25(beir, args.max_docs, args.k1, args.b)
    os.environ.setdefault("SEMFS_EMBEDDER", "hash")  # the keyword leg needs no model
    (ours,) = evaluate(Settings(), beir, ["keyword"], max_docs=args.max_docs)
    row = {
        "set": beir.name,
        "documents": ours["documents"],
        "queries": ours["queries"],
        f"bm25 k1={args.k1} b={args.b}": baseline,
        "semfs keyword": {"ndcg@10": ours["ndcg@10"], "recall@100": ours["recall@100"]},
        "margin_ndcg@10": round(ours["ndcg@10"] - baseline["ndcg@10"], 4),
    }
    if args.json:
        print(json.dumps(row, indent=2))
        return
    print(f"{beir.name}: {row['documents']} documents, {row['queries']} queries")
    print(
        f"plain BM25 (k1 {args.k1}, b {args.b}): nDCG@10 {baseline['ndcg@10']:.4f}  R@100 {baseline['recall@100']:.4f}"
    )
    print(f"semfs keyword leg:          nDCG@10 {ours['ndcg@10']:.4f}  R@100 {ours['recall@100']:.4f}")
    print(f"margin: {row['margin_ndcg@10']:+.4f}")


if __name__ == "__main__":
    main()
