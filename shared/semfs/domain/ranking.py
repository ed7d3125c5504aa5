"""Reciprocal rank fusion and grouping by file — identical for every backend."""

from __future__ import annotations

from collections.abc import Sequence

from semfs.domain.models import IndexHit

# BM25 field weights, shared by the local and the OpenSearch keyword legs. The title is repeated on
# every chunk of a file (and is the head of its card), so a title match is a tie-breaker, not the
# main signal: with weight 2 the keyword leg lost 0.07 nDCG@10 on SciFact, 0.25 gave the best of
# the four weights tried (docs/benchmarks.md).
FIELD_BOOSTS = {"title": 0.25, "filename": 1.0, "text": 1.0, "tags": 1.0}


def overfetch(limit: int) -> int:
    """How many hits each leg fetches before fusion (DESIGN §6)."""
    return min(256, max(limit * 5, 50))


def rrf(legs: Sequence[Sequence[IndexHit]], k: int = 60) -> list[IndexHit]:
    """Fuse ranked lists: score = Σ 1/(k + rank), rank starting at 1. Ties keep first-seen order."""
    scores: dict[str, float] = {}
    first: dict[str, IndexHit] = {}
    for leg in legs:
        for rank, hit in enumerate(leg, start=1):
            scores[hit.chunk_id] = scores.get(hit.chunk_id, 0.0) + 1.0 / (k + rank)
            first.setdefault(hit.chunk_id, hit)
    order = sorted(scores, key=lambda cid: -scores[cid])
    return [first[cid].model_copy(update={"score": scores[cid]}) for cid in order]


def group_by_file(hits: Sequence[IndexHit], per_file: int = 3) -> list[tuple[str, float, list[IndexHit]]]:
    """Group fused chunk hits by file; a file scores as its best chunk. Order by that score."""
    groups: dict[str, list[IndexHit]] = {}
    for hit in hits:
        groups.setdefault(hit.file_id, []).append(hit)
    ranked = sorted(groups.items(), key=lambda kv: -kv[1][0].score)
    return [(fid, hs[0].score, hs[:per_file]) for fid, hs in ranked]
