"""Which fusion: the same legs of every SciFact query fused several ways, from one load.

The corpus is loaded once through `semfs eval`'s path (the configured embedder); for each judged
query the k-NN leg and the chunk BM25 leg are fetched once (256 deep, as a
search for 100 files fetches), then fused by each method offline and scored (nDCG@10, R@100):

- keyword / semantic: one leg alone (the same figures `semfs eval --mode keyword|semantic` gives);
- rrf per chunk, then grouped by file (what semfs did before per-file fusion);
- rrf per file (k = 60);
- minmax per file, OpenSearch's normalization processor (min-max + arithmetic mean), equal weights,
  and the same per chunk;
- z-score and DBSF per file; "theoretical" min-max (each leg's lower bound fixed instead of its lowest
  fetched score);
- dense pseudo-relevance feedback: the k-NN leg run again for the query moved toward the best vectors of
  the top 3 files (Pyserini's average and Rocchio α 0.4 / β 0.6), then fused by min-max per file.

(The card BM25 leg and the with/without title-only-card variants were measured here and dropped; the
figures are in docs/benchmarks.md. Documents are now loaded as `semfs eval` loads them: extracted and
enriched as a `.txt` file would be, so each has a card with its summary and tags.)

    .venv/bin/python bench/fusion_choice.py                 # full SciFact, the local model
    .venv/bin/python bench/fusion_choice.py --max-docs 1500
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import SCIFACT

from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.domain.models import IndexHit, SearchFilters
from semfs.domain.ranking import RankedFile, _best_per_file, fuse_files, group_by_file, min_max, overfetch, rrf
from semfs.evaluation import TENANT, _load, judged_subset, ndcg_at, recall_at

Legs = tuple[list[IndexHit], list[IndexHit]]  # knn, chunk BM25


def _minmax_per_chunk(legs: list[list[IndexHit]]) -> list[RankedFile]:
    total: dict[str, float] = {}
    first: dict[str, IndexHit] = {}
    for leg in legs:
        for hit, n in zip(leg, min_max([h.score for h in leg]), strict=True):
            total[hit.chunk_id] = total.get(hit.chunk_id, 0.0) + n / len(legs)
            first.setdefault(hit.chunk_id, hit)
    fused = [first[c].model_copy(update={"score": s}) for c, s in sorted(total.items(), key=lambda kv: -kv[1])]
    return group_by_file(fused)


def _normalised_per_file(legs: list[list[IndexHit]], how: str) -> list[RankedFile]:
    """Each leg's best score per file normalised by z-score, or by DBSF (mean ± 3σ, clamped to 0..1:
    Qdrant's distribution-based score fusion), then summed."""
    total: dict[str, float] = {}
    for leg in legs:
        best: dict[str, float] = {}
        for hit in leg:
            best.setdefault(hit.file_id, hit.score)
        values = list(best.values())
        mu = statistics.fmean(values) if values else 0.0
        sd = statistics.pstdev(values) if len(values) > 1 else 0.0
        for f, v in best.items():
            if sd == 0:
                n = 1.0
            elif how == "z":
                n = (v - mu) / sd
            else:
                n = min(max((v - (mu - 3 * sd)) / (6 * sd), 0.0), 1.0)
            total[f] = total.get(f, 0.0) + n
    return [(f, sc, []) for f, sc in sorted(total.items(), key=lambda kv: -kv[1])]


def _theoretical_minmax(legs: list[list[IndexHit]], lows: tuple[float | None, float | None]) -> list[RankedFile]:
    """Min-max per file with a leg's lower bound fixed (None: its lowest fetched score, as min-max)."""
    total: dict[str, float] = {}
    for leg, low in zip(legs, lows, strict=True):
        best = _best_per_file(leg)
        if not best:
            continue
        lo = min(best.values()) if low is None else low
        hi = max(best.values())
        for f, v in best.items():
            total[f] = total.get(f, 0.0) + (1.0 if hi == lo else max(v - lo, 0.0) / (hi - lo)) / len(legs)
    return [(f, sc, []) for f, sc in sorted(total.items(), key=lambda kv: -kv[1])]


METHODS: dict[str, Callable[[Legs], Sequence[RankedFile]]] = {
    "keyword": lambda legs: group_by_file(legs[1]),
    "semantic": lambda legs: group_by_file(legs[0]),
    "rrf per chunk (before)": lambda legs: group_by_file(rrf(list(legs))),
    "rrf per file": lambda legs: fuse_files(list(legs), "rrf"),
    "minmax per file": lambda legs: fuse_files(list(legs), "minmax"),
    "minmax per chunk": lambda legs: _minmax_per_chunk(list(legs)),
    "z-score per file": lambda legs: _normalised_per_file(list(legs), "z"),
    "dbsf per file": lambda legs: _normalised_per_file(list(legs), "dbsf"),
    "theoretical minmax, bm25 >= 0": lambda legs: _theoretical_minmax(list(legs), (None, 0.0)),
    "theoretical minmax, cosine >= 0": lambda legs: _theoretical_minmax(list(legs), (0.0, None)),
    "theoretical minmax, 0 / 0": lambda legs: _theoretical_minmax(list(legs), (0.0, 0.0)),
    "theoretical minmax, -1 / 0": lambda legs: _theoretical_minmax(list(legs), (-1.0, 0.0)),
}
PRF = (
    "prf average, fused top 3",
    "prf rocchio, fused top 3",
    "prf average, semantic top 3",
    "prf rocchio, semantic top 3",
)


def _best_vectors(c: Any, files: Sequence[RankedFile], n: int = 3) -> list[np.ndarray]:
    """The stored vectors of the best hit of the first ``n`` files. The port returns documents without
    their vectors, so this bench reads the local store's table (an adapter detail, fine for a bench)."""
    conn = c.index.store.conn()
    out = []
    for _, _, hits in files[:n]:
        row = conn.execute(
            "SELECT embedding FROM docs WHERE chunk_id = ? AND tenant_id = ?", (hits[0].chunk_id, TENANT)
        )
        found = row.fetchone()
        if found and found[0]:
            out.append(np.frombuffer(found[0], dtype=np.float32))
    return out


def _prf(c: Any, query: np.ndarray, legs: Legs, k: int) -> dict[str, list[RankedFile]]:
    out: dict[str, list[RankedFile]] = {}
    for source, files in (("fused", fuse_files(list(legs), "minmax")), ("semantic", group_by_file(legs[0]))):
        vs = _best_vectors(c, files)
        if not vs:
            continue
        for how in ("average", "rocchio"):
            moved = np.mean([query, *vs], axis=0) if how == "average" else 0.4 * query + 0.6 * np.mean(vs, axis=0)
            moved = moved / (np.linalg.norm(moved) or 1.0)
            again = c.index.knn(TENANT, moved.tolist(), SearchFilters(), k)
            out[f"prf {how}, {source} top 3"] = fuse_files([again, legs[1]], "minmax")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--beir", default=str(SCIFACT))
    ap.add_argument("--max-docs", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    corpus, queries, qrels = judged_subset(Path(args.beir), args.max_docs)
    settings = Settings()
    k = overfetch(100)
    scores: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in (*METHODS, *PRF)}
    with tempfile.TemporaryDirectory(prefix="semfs-fusion-") as tmp:
        c = build_container(settings.model_copy(update={"data_dir": Path(tmp)}))
        try:
            _load(c, corpus, None)
            for qid, text in queries.items():
                vector = c.embedder.embed_query(text)
                legs: Legs = (
                    c.index.knn(TENANT, vector, SearchFilters(), k),
                    c.index.keyword(TENANT, text, SearchFilters(), k),
                )
                fused = {name: method(legs) for name, method in METHODS.items()}
                fused.update(_prf(c, np.asarray(vector, dtype=np.float32), legs, k))
                for name, files in fused.items():
                    ranked = [f for f, _, _ in files][:100]
                    scores[name][0].append(ndcg_at(ranked, qrels[qid]))
                    scores[name][1].append(recall_at(ranked, qrels[qid], 100))
        finally:
            c.close()
    rows = [
        {"method": m, "ndcg@10": round(statistics.fmean(n), 4), "recall@100": round(statistics.fmean(r), 4)}
        for m, (n, r) in scores.items()
    ]
    if args.json:
        print(
            json.dumps(
                {
                    "documents": len(corpus),
                    "queries": len(queries),
                    "model": settings.embedding.resolved_model,
                    "rows": rows,
                },
                indent=2,
            )
        )
        return
    print(
        f"{Path(args.beir).name}: {len(corpus)} documents, {len(queries)} queries, {settings.embedding.resolved_model}"
    )
    for r in rows:
        print(f"{r['method']:<32} nDCG@10 {r['ndcg@10']:.4f}  R@100 {r['recall@100']:.4f}")


if __name__ == "__main__":
    main()
