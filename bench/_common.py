"""Shared helpers for the benchmarks: percentiles, the SciFact location, text sources."""

from __future__ import annotations

import gzip
import json
import math
import random
import statistics
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCIFACT = ROOT.parent / "shared" / "bench" / "scifact"


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def summary(values: list[float]) -> str:
    return (
        f"p50 {pct(values, 50):.2f}  p95 {pct(values, 95):.2f}  p99 {pct(values, 99):.2f}  "
        f"mean {statistics.fmean(values):.2f}"
    )


def scifact_texts() -> Iterator[tuple[str, str]]:
    """(title, abstract) pairs read in place from ../shared/bench (never copied into the repo)."""
    path = SCIFACT / "corpus.jsonl.gz"
    if not path.exists():
        return
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            doc = json.loads(line)
            yield doc.get("title") or "", doc.get("text") or ""


def scifact_queries() -> list[str]:
    path = SCIFACT / "queries.jsonl"
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh]


WORDS = (
    "invoice payment contract supplier delivery warehouse frame bicycle policy security incident budget revenue "
    "quarter forecast margin schedule shipment quality inspection customer dealer order battery motor design review "
    "meeting action holiday expense travel approval audit compliance report summary analysis risk plan"
).split()


def synthetic_text(rng: random.Random, n_words: int = 120) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words)) + "."
