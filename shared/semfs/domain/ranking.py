"""Fusion of the ranked legs into ranked files — identical for every backend.

A search answers with files, so the legs are fused per file: in each leg a file ranks (and scores)
as its best hit there, and the file-level ranks or scores are combined. The card leg (a file's
title, summary and tags) then adds to the file whose chunk matched, instead of competing with it.
Within a file, hits are ordered by the same fusion per chunk, which picks the snippets.

Two methods (``SEMFS_FUSION``):
- ``rrf``: Σ 1/(k + rank) over the legs, rank from 1 (Cormack et al. 2009, k = 60).
- ``minmax``: each leg's scores min-max normalised over the files it returned, then their weighted
  arithmetic mean, a leg that missed a file counting 0 — OpenSearch's normalization processor
  (``min_max`` + ``arithmetic_mean``) applied per file, including its rule that a leg's lowest
  score becomes 0.001 rather than 0 and a leg with one score (or all equal) gives 1.0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from semfs.domain.models import IndexHit

Fusion = Literal["rrf", "minmax"]
RankedFile = tuple[str, float, list[IndexHit]]

# BM25 field weights, shared by the local and the OpenSearch keyword legs (docs/benchmarks.md). The
# title is repeated on every chunk of a file (and is the head of its card), so a title match is a
# tie-breaker, not the main signal: with weight 2 the keyword leg lost 0.07 nDCG@10 on SciFact, 0.25
# gave the best of the four weights tried. Tags are mostly keyphrases taken from the text itself, so
# at 1.0 they counted its words twice on every chunk (SciFact as .txt files: 0.689 at 1.0, 0.780 at
# 0.1, 0.778 at 0); 0.1 still finds a file by a tag word that is nowhere in its text.
FIELD_BOOSTS = {"title": 0.25, "filename": 1.0, "text": 1.0, "tags": 0.1}

_MIN_SCORE = 0.001  # OpenSearch's min-max floor: the lowest hit of a leg still counts


def overfetch(limit: int) -> int:
    """How many hits each leg fetches before fusion."""
    return min(256, max(limit * 5, 50))


def rrf(legs: Sequence[Sequence[IndexHit]], k: int = 60) -> list[IndexHit]:
    """Fuse ranked lists of chunks: score = Σ 1/(k + rank), rank from 1. Ties keep first-seen order."""
    scores: dict[str, float] = {}
    first: dict[str, IndexHit] = {}
    for leg in legs:
        for rank, hit in enumerate(leg, start=1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + 1.0 / (k + rank)
            first.setdefault(hit.chunk_id, hit)
    order = sorted(scores, key=lambda cid: -scores[cid])
    return [first[cid].model_copy(update={"score": scores[cid]}) for cid in order]


def _best_per_file(leg: Sequence[IndexHit]) -> dict[str, float]:
    """Each file's best score in one leg, in the leg's order (a leg is ranked best first)."""
    best: dict[str, float] = {}
    for hit in leg:
        best.setdefault(hit.file_id, hit.score)
    return best


def bm25(tf: int, df: int, n: int, length: int, average: float, k1: float = 1.2, b: float = 0.75) -> float:
    """One term's BM25 weight in one field of one document, as tantivy and Lucene compute it (their
    ``k1`` and ``b``): ``tf`` its occurrences in a field of ``length`` tokens, ``df`` of ``n`` documents
    holding it, ``average`` the field's mean length."""
    if tf <= 0 or n <= 0:
        return 0.0
    idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    norm = 1.0 - b + b * length / (average or 1.0)
    return idf * tf * (k1 + 1.0) / (tf + k1 * norm)


def min_max(scores: Sequence[float]) -> list[float]:
    """OpenSearch's ``min_max`` normalisation of one leg's scores."""
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi == lo:
        return [1.0] * len(scores)
    return [((s - lo) / (hi - lo)) or _MIN_SCORE for s in scores]


def file_scores(
    legs: Sequence[Sequence[IndexHit]], method: Fusion = "rrf", k: int = 60, weights: Sequence[float] | None = None
) -> dict[str, float]:
    """Every file's fused score."""
    w = list(weights) if weights is not None else [1.0] * len(legs)
    if len(w) != len(legs):
        raise ValueError("one weight per leg")
    total: dict[str, float] = {}
    for leg, weight in zip(legs, w, strict=True):
        best = _best_per_file(leg)
        if method == "rrf":
            contrib = {f: weight / (k + rank) for rank, f in enumerate(best, start=1)}
        else:
            contrib = {f: weight * n for f, n in zip(best, min_max(list(best.values())), strict=True)}
        for f, v in contrib.items():
            total[f] = total.get(f, 0.0) + v
    if method == "minmax":
        total = {f: v / (sum(w) or 1.0) for f, v in total.items()}
    return total


def fuse_files(
    legs: Sequence[Sequence[IndexHit]],
    method: Fusion = "rrf",
    k: int = 60,
    weights: Sequence[float] | None = None,
    per_file: int = 3,
) -> list[RankedFile]:
    """Ranked files (id, fused score, up to ``per_file`` best hits). One leg keeps its own order."""
    if len(legs) == 1:
        return group_by_file(legs[0], per_file)
    scores = file_scores(legs, method, k, weights)
    chunks = rrf(legs, k)  # the hits of each file in fused order: its best snippets first
    hits: dict[str, list[IndexHit]] = {}
    for hit in chunks:
        hits.setdefault(hit.file_id, []).append(hit)
    order = sorted(hits, key=lambda f: -scores[f])  # stable: ties keep the chunk-level order
    return [(f, scores[f], hits[f][:per_file]) for f in order]


def group_by_file(hits: Sequence[IndexHit], per_file: int = 3) -> list[RankedFile]:
    """Group one ranked list of hits by file; a file scores as its best hit. Order by that score."""
    groups: dict[str, list[IndexHit]] = {}
    for hit in hits:
        groups.setdefault(hit.file_id, []).append(hit)
    ranked = sorted(groups.items(), key=lambda kv: -kv[1][0].score)
    return [(fid, hs[0].score, hs[:per_file]) for fid, hs in ranked]
