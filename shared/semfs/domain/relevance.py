"""Calibrated relevance: one 0–1 figure per result that means the same in every mode and every query.

A fused score (``domain/ranking.py``) orders one response and says nothing beyond it: min-max fusion
gives the best hit of each leg full marks however weak it is, so a nonsense query's top result scores
0.5 and no threshold can be set on it. Relevance instead rests on evidence about the (query, file)
pair alone, not on the other results:

- ``cosine``: the query's cosine similarity to the file's nearest passage (the k-NN leg; for a file the
  k-NN leg did not return, the leg's lowest score, an upper bound); ``None`` in keyword mode and when
  the embedder is down;
- ``coverage``: the share of the query's content words (``query_terms``; stemmed as the snippets
  match them) found in the file's title, name and matched passages.

A logistic model maps them to a probability that the file answers the query. A cosine means something
only for the model that produced it (multilingual-e5 puts unrelated texts at 0.7, MiniLM at 0.1), so
there is one fitted model per embedding model (``CALIBRATIONS``, fitted by
``bench/relevance_calibration.py`` on queries the ranking was not tuned on; docs/benchmarks.md gives
the fit, its reliability on held-out sets and the floor's cost in nDCG). Without a cosine (keyword
mode, the embedder down), or for a model with no calibration, ``WORDS_ONLY`` weighs coverage alone.

The floor is the query's: when not one result reaches the floor of the calibration that weighed it, the
query has no answer here and gets no results; when one does, the others are shown with it (a floor per
file cost 0.017 nDCG@10 on held-out SciFact queries: relevant abstracts with few of the query's words
and a middling cosine). A model without a calibration has no floor (nothing is left out on the words'
evidence alone when the vectors may know better). A result below ``WEAK`` is marked weak, and ``ask``
does not answer from it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from semfs.domain.text import words


@dataclass(frozen=True)
class Evidence:
    cosine: float | None
    coverage: float


@dataclass(frozen=True)
class Calibration:
    """``p = σ(intercept + cosine·c + coverage·w)``, and the floor a query's best result must reach."""

    intercept: float
    cosine: float
    coverage: float
    floor: float


# Fitted by `bench/relevance_calibration.py` (docs/benchmarks.md, "Calibrated relevance").
CALIBRATIONS: Mapping[str, Calibration] = {
    "all-MiniLM-L6-v2-int8": Calibration(intercept=-9.218, cosine=8.113, coverage=4.657, floor=0.00524),
    # its cosines crowd between 0.7 and 0.9: a steep slope (fitted on SciFact's first 1,500 abstracts). No
    # floor: even 0.001 cost 0.018 nDCG@10 on the fixture questions, whose cross-language answers share no
    # word with the question (the floor it fitted, 0.0056, cost 0.044): its results are marked weak instead
    "multilingual-e5-small-q4": Calibration(intercept=-31.38, cosine=30.191, coverage=6.927, floor=0.0),
}
WORDS_ONLY = Calibration(intercept=-6.044, cosine=0.0, coverage=6.767, floor=0.00887)
WEAK = 0.25


@dataclass(frozen=True)
class Judged:
    relevance: float
    floor: float


def judge(e: Evidence, model: str | None, extra: Mapping[str, Calibration] | None = None) -> Judged:
    """The calibrated probability that the file answers the query, and the floor it must reach.
    ``model``: the embedding model whose cosine ``e`` carries; ``extra``: calibrations configured
    beside the built-in ones (``SEMFS_RELEVANCE_CALIBRATIONS``)."""
    cal = (extra or {}).get(model or "") or CALIBRATIONS.get(model or "")
    if e.cosine is not None and cal is not None:
        z = cal.intercept + cal.cosine * e.cosine + cal.coverage * e.coverage
        return Judged(_sigmoid(z), cal.floor)
    floor = WORDS_ONLY.floor if e.cosine is None else 0.0  # an uncalibrated model's vectors may know better
    return Judged(_sigmoid(WORDS_ONLY.intercept + WORDS_ONLY.coverage * e.coverage), floor)


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def _stem(term: str) -> str:
    """A query word as the snippets match it: a word prefix of up to 5 characters (``highlight``)."""
    return term[: max(4, min(len(term), 5))]


def coverage(terms: list[str], texts: Iterable[str]) -> float:
    """The share of ``terms`` (lower-cased query words) that begin a word of ``texts``. Linear in the
    texts' size: each word adds its prefixes of up to 5 characters to one set."""
    if not terms:
        return 0.0
    prefixes: set[str] = set()
    for text in texts:
        for w in words(text):
            low = w.lower()
            prefixes.update(low[:n] for n in range(1, min(len(low), 5) + 1))
    return sum(1 for t in terms if _stem(t) in prefixes) / len(terms)
