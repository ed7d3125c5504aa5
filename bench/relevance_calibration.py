"""Fit and check the calibrated relevance (``semfs.domain.relevance``) and its floor.

Every query runs through ``retrieve()`` as ``semfs search`` runs it, with the floor off, and each of its
top 10 files gives one row: the evidence (cosine, coverage) and whether the file answers the query.

- **Fit** on the odd-numbered SciFact test queries (by position) and the odd-numbered off-topic
  questions of ``bench/data/relevance_questions.json`` (no answer among SciFact's abstracts): a logistic
  model on (cosine, coverage) from hybrid rows, one on coverage alone from keyword rows (IRLS, a small
  ridge). The floor is the query's (none of its results reaching it, it gets none): half the lowest
  best relevance among the fitting half's answerable queries.
- **Check** on what the fit never saw: the even-numbered SciFact queries and off-topic questions, the
  demo corpus (``semfs demo``'s files, questions with known answers and without), and the shared
  fixtures (``bench/data/fixture_questions.json`` and questions with no answer there): reliability
  (predicted against observed, by bin), Brier score, answers kept and no-answer questions emptied by
  the floor, nDCG@10 with and without it.

SciFact's ranking choices (docs/benchmarks.md) were made on all 300 queries, so its held-out half is
held out from the calibration, not from the ranking; the demo and fixture sets are held out from both.
SciFact judges about 1.1 documents per query, so an unjudged relevant abstract counts as a miss and the
model under-states relevance there; the floor is set where that bias costs least.

    .venv/bin/python bench/relevance_calibration.py                       # all sets, full SciFact (~10 min)
    .venv/bin/python bench/relevance_calibration.py --max-docs 1500 --sets scifact,demo
    SEMFS_EMBEDDER=openai SEMFS_LLM_BASE_URL=… SEMFS_EMBEDDING_MODEL=text-embedding-3-small \
        .venv/bin/python bench/relevance_calibration.py      # fits your endpoint's model; prints the setting
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _common import ROOT, SCIFACT

from semfs import demo
from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.domain import relevance as shipped
from semfs.domain.models import SearchFilters
from semfs.evaluation import TENANT, _load, judged_subset, ndcg_at
from semfs.pipeline.query.search import retrieve
from semfs.ports.repository import RecordQuery

DATA = Path(__file__).with_name("data")
QUESTIONS = json.loads((DATA / "relevance_questions.json").read_text(encoding="utf-8"))
FIXTURE_QUESTIONS = json.loads((DATA / "fixture_questions.json").read_text(encoding="utf-8"))["questions"]
FIXTURES = ROOT.parent / "shared" / "fixtures"
FOLDERS = [FIXTURES / "docling" / "files", FIXTURES / "markitdown" / "files"]
SEMFS = Path(sys.executable).with_name("semfs")
TOP = 10
MODEL = Settings().embedding.resolved_model  # SEMFS_EMBEDDING_MODEL picks another


@dataclass
class Query:
    text: str
    answers: dict[str, int]  # file id (or file name) → graded relevance; empty: no answer exists
    group: str
    fit: bool  # in the fitting half


@dataclass
class Row:
    query: int
    mode: str
    rank: int
    cosine: float | None
    coverage: float
    label: int


def _rows(c: object, tenant: str, queries: list[Query], name: dict[str, str] | None) -> tuple[list[Row], dict]:
    """One row per (query, mode, top file); and each query's ranked ids per mode, for nDCG."""
    rows: list[Row] = []
    ranked: dict[tuple[int, str], list[tuple[str, float | None, float]]] = {}
    for qi, q in enumerate(queries):
        for mode in ("hybrid", "keyword"):
            found = retrieve(c, tenant, q.text, mode, SearchFilters(), 2 * TOP, floor=False)  # type: ignore[arg-type]
            out = []
            for rank, (f, _, _) in enumerate(found.files):
                key = name.get(f, f) if name is not None else f
                e = found.evidence[f]
                out.append((key, e.cosine, e.coverage))
                if rank < TOP:
                    label = int(q.answers.get(key, 0) > 0)
                    rows.append(Row(qi, mode, rank, e.cosine, e.coverage, label))
            ranked[(qi, mode)] = out
    return rows, ranked


def scifact_set(max_docs: int | None) -> tuple[list[Query], list[Row], dict]:
    corpus, queries, qrels = judged_subset(SCIFACT, max_docs)
    qs = [Query(t, qrels[qid], "SciFact", i % 2 == 1) for i, (qid, t) in enumerate(queries.items())]
    qs += [Query(t, {}, "SciFact off-topic", i % 2 == 1) for i, t in enumerate(QUESTIONS["scifact_off_topic"])]
    with tempfile.TemporaryDirectory(prefix="semfs-calib-") as tmp:
        c = build_container(Settings(data_dir=Path(tmp)))
        try:
            _load(c, corpus, None)
            rows, ranked = _rows(c, TENANT, qs, None)
        finally:
            c.close()
    return qs, rows, ranked


def demo_set() -> tuple[list[Query], list[Row], dict]:
    qs = [Query(d["q"], dict.fromkeys(d["files"], 1), "demo", False) for d in QUESTIONS["demo"]]
    qs += [Query(t, {}, "demo no-answer", False) for t in QUESTIONS["demo_no_answer"]]
    with tempfile.TemporaryDirectory(prefix="semfs-calib-demo-") as tmp:
        c = build_container(Settings(data_dir=Path(tmp) / "data"))
        try:
            folder = Path(tmp) / "corpus"
            demo.write_demo_corpus(folder)
            demo.ingest_demo(c, "default", folder)
            names = _names(c)
            rows, ranked = _rows(c, "default", qs, names)
        finally:
            c.close()
    return qs, rows, ranked


def fixture_set() -> tuple[list[Query], list[Row], dict]:
    qs = [Query(q["q"], dict.fromkeys(q["files"], 1), "fixtures", False) for q in FIXTURE_QUESTIONS]
    qs += [Query(t, {}, "fixtures no-answer", False) for t in QUESTIONS["fixtures_no_answer"]]
    with tempfile.TemporaryDirectory(prefix="semfs-calib-fix-") as tmp:
        data = Path(tmp) / "data"
        env = {**os.environ, "SEMFS_DATA_DIR": str(data)}
        subprocess.run([str(SEMFS), "ingest", *map(str, FOLDERS), "--json"], env=env, capture_output=True, check=True)
        c = build_container(Settings(data_dir=data))
        try:
            names = _names(c)
            rows, ranked = _rows(c, "default", qs, names)
        finally:
            c.close()
    return qs, rows, ranked


def _names(c: object) -> dict[str, str]:
    return {r.file_id: r.filename for r in c.repo.query(RecordQuery(tenant_id="default", limit=10_000))}  # type: ignore[attr-defined]


def _dumped(loaded: dict) -> dict:
    return {
        name: {
            "queries": [vars(q) for q in qs],
            "rows": [vars(r) for r in rows],
            "ranked": [[qi, mode, files] for (qi, mode), files in ranked.items()],
        }
        for name, (qs, rows, ranked) in loaded.items()
    }


def _undump(data: dict) -> dict:
    return {
        name: (
            [Query(**q) for q in d["queries"]],
            [Row(**r) for r in d["rows"]],
            {(qi, mode): [tuple(f) for f in files] for qi, mode, files in d["ranked"]},
        )
        for name, d in data.items()
    }


# -- the fit ---------------------------------------------------------------------------------------
def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = 1e-3) -> np.ndarray:
    """Logistic regression by Newton's method (IRLS); ``x`` without the intercept column."""
    xs = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xs.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(xs @ w)))
        grad = xs.T @ (p - y) + ridge * w
        hess = (xs * (p * (1 - p))[:, None]).T @ xs + ridge * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def predict(w: tuple[float, ...], cosine: float | None, coverage: float) -> float:
    z = w[0] + (w[1] * cosine + w[2] * coverage if len(w) == 3 and cosine is not None else w[-1] * coverage)
    return 1 / (1 + math.exp(-z))


def model_for(mode: str, vec: tuple[float, ...], words: tuple[float, ...], cosine: float | None) -> tuple[float, ...]:
    return vec if mode != "keyword" and cosine is not None else words


# -- the report ------------------------------------------------------------------------------------
BINS = [0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0001]


def reliability(pairs: list[tuple[float, int]]) -> str:
    out = []
    for lo, hi in itertools.pairwise(BINS):
        inside = [(p, y) for p, y in pairs if lo <= p < hi]
        if inside:
            mean_p = statistics.fmean(p for p, _ in inside)
            rate = statistics.fmean(y for _, y in inside)
            out.append(f"[{lo:.2f},{min(hi, 1):.2f}) n={len(inside)} pred {mean_p:.2f} obs {rate:.2f}")
    return "; ".join(out)


def shown(files: list, w: tuple[float, ...], mode: str, words: tuple[float, ...], floor: float) -> list[str]:
    """What ``retrieve`` shows: the top files, or none when not one reaches the floor."""
    top = files[:TOP]
    rel = [predict(model_for(mode, w, words, cos), cos, cov) for _, cos, cov in top]
    return [k for k, _, _ in top] if any(p >= floor for p in rel) else []


def choose_floor(qs: list[Query], ranked: dict, mode: str, w: tuple[float, ...]) -> float:
    """Half the lowest best relevance among the fitting half's answerable queries: no query of that half
    loses its results, with a margin for the held-out ones (without it, the floor that cost the fitting
    half 0.002 nDCG@10 cost the held-out half 0.013)."""
    fit = [qi for qi, q in enumerate(qs) if q.fit and q.answers and ranked[(qi, mode)]]
    lowest = min(max(predict(w, cos, cov) for _, cos, cov in ranked[(qi, mode)][:TOP]) for qi in fit)
    return round(lowest * MARGIN, 5)


MARGIN = 0.5


def report(
    name: str, qs: list[Query], rows: list[Row], ranked: dict, vec, words, floors: tuple[float, float], weak: float
) -> dict:
    result: dict[str, object] = {"set": name}
    for mode in ("hybrid", "keyword"):
        floor = floors[0] if mode == "hybrid" else floors[1]
        pairs = [
            (predict(model_for(mode, vec, words, r.cosine), r.cosine, r.coverage), r.label)
            for r in rows
            if r.mode == mode and not qs[r.query].fit
        ]
        if pairs:
            result[mode] = {
                "rows": len(pairs),
                "brier": round(statistics.fmean((p - y) ** 2 for p, y in pairs), 4),
                "reliability": reliability(pairs),
                **_held_out(qs, ranked, mode, vec, words, floor, weak),
            }
    return result


def _held_out(qs: list[Query], ranked: dict, mode: str, vec, words, floor: float, weak: float) -> dict:
    """The held-out queries under the floor: the answerable ones' nDCG@10 and answer in the top 10,
    before and after; the ones without an answer, emptied or all weak."""
    answered = [qi for qi, q in enumerate(qs) if not q.fit and q.answers]
    empty = [qi for qi, q in enumerate(qs) if not q.fit and not q.answers]
    ndcg_before, ndcg_after, kept_hit, hit, emptied, all_weak = [], [], 0, 0, 0, 0
    for qi in answered + empty:
        files = ranked[(qi, mode)]
        kept = shown(files, vec if mode == "hybrid" else words, mode, words, floor)
        rel = [predict(model_for(mode, vec, words, cos), cos, cov) for k, cos, cov in files][:TOP]
        if qs[qi].answers:
            before = [k for k, _, _ in files][:TOP]
            ndcg_before.append(ndcg_at(before, qs[qi].answers))
            ndcg_after.append(ndcg_at(kept, qs[qi].answers))
            hit += any(k in qs[qi].answers for k in before)
            kept_hit += any(k in qs[qi].answers for k in kept)
        else:
            emptied += not kept
            all_weak += all(p < weak for p in rel)
    return {
        "answered_queries": len(answered),
        "ndcg@10": round(statistics.fmean(ndcg_before), 4) if ndcg_before else None,
        "ndcg@10_with_floor": round(statistics.fmean(ndcg_after), 4) if ndcg_after else None,
        "answer_in_top10": hit,
        "answer_in_top10_with_floor": kept_hit,
        "no_answer_queries": len(empty),
        "no_answer_emptied_by_floor": emptied,
        "no_answer_all_weak": all_weak,
    }


CURVE = (0.0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.0075, 0.01, 0.02)


def floor_curve(loaded: dict, vec: tuple[float, ...], words: tuple[float, ...]) -> list[dict]:
    """What each floor would cost and give, on every query of every set (fitting half included): the
    answerable queries' nDCG@10 and the no-answer queries emptied."""
    out = []
    for mode, w in (("hybrid", vec), ("keyword", words)):
        for floor in CURVE:
            row: dict[str, object] = {"mode": mode, "floor": floor}
            for name, (qs, _, ranked) in loaded.items():
                kept = {qi: shown(ranked[(qi, mode)], w, mode, words, floor) for qi in range(len(qs))}
                answerable = [qi for qi, q in enumerate(qs) if q.answers]
                row[name] = {
                    "ndcg@10": round(statistics.fmean(ndcg_at(kept[qi], qs[qi].answers) for qi in answerable), 4),
                    "emptied": f"{sum(not kept[qi] for qi, q in enumerate(qs) if not q.answers)}"
                    f"/{sum(not q.answers for q in qs)}",
                }
            out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-docs", type=int, default=None, help="SciFact's first N documents (default: all)")
    ap.add_argument("--sets", default="scifact,demo,fixtures")
    ap.add_argument("--shipped", action="store_true", help="check the constants in semfs.domain.relevance, no fit")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--dump", type=Path, help="write the collected rows here (JSON), to --load them later")
    ap.add_argument("--load", type=Path, help="read rows a --dump wrote instead of running the queries")
    args = ap.parse_args()
    sets = args.sets.split(",")
    if "scifact" not in sets and not args.shipped:
        raise SystemExit("the fit needs the scifact set (or --shipped)")
    loaded = _loaded(args, sets)
    vec, words, floor, floor_words = _shipped() if args.shipped else _fitted(loaded)
    weak = shipped.WEAK
    fitted = {"model": MODEL, "with_vector": vec, "words_only": words, "floor": floor, "floor_words": floor_words}
    fitted["weak"] = weak
    results = [fitted]
    for name, (qs, rows, ranked) in loaded.items():
        results.append(report(name, qs, rows, ranked, vec, words, (floor, floor_words), weak))
    curve = floor_curve(loaded, vec, words)
    if args.json:
        print(json.dumps([*results, {"floor_curve": curve}], indent=2))
        return
    _print_fit(vec, words, floor, floor_words, weak)
    print("\nthe floor's trade-off, every query of each set (nDCG@10 of the answerable; no-answer queries emptied):")
    for row in curve:
        sets_said = " | ".join(
            f"{k} {v['ndcg@10']} emptied {v['emptied']}" for k, v in row.items() if isinstance(v, dict)
        )
        print(f"  {row['mode']:<7} floor {row['floor']:<6} {sets_said}")
    for r in results[1:]:
        _print_set(r)


def _loaded(args: argparse.Namespace, sets: list[str]) -> dict:
    """The sets' queries and rows: run, or read from a --dump (and written to one when asked)."""
    loaded = _undump(json.loads(args.load.read_text(encoding="utf-8"))) if args.load else {}
    for name, load in (("scifact", lambda: scifact_set(args.max_docs)), ("demo", demo_set), ("fixtures", fixture_set)):
        if name in sets and name not in loaded:
            loaded[name] = load()
            print(f"{name}: {len(loaded[name][0])} queries, {len(loaded[name][1])} rows", file=sys.stderr)
    if args.dump:
        args.dump.write_text(json.dumps(_dumped(loaded)), encoding="utf-8")
    return loaded


def _shipped() -> tuple[tuple, tuple, float, float]:
    """The constants semfs ships (``semfs.domain.relevance``), to be checked, not fitted."""
    cal, wo = shipped.CALIBRATIONS[MODEL], shipped.WORDS_ONLY
    return (cal.intercept, cal.cosine, cal.coverage), (wo.intercept, wo.coverage), cal.floor, wo.floor


def _fitted(loaded: dict) -> tuple[tuple, tuple, float, float]:
    """Logistic fits on SciFact's fitting half, and the floors chosen on it."""
    qs, rows, ranked = loaded["scifact"]
    hyb = [r for r in rows if qs[r.query].fit and r.mode == "hybrid" and r.cosine is not None]
    kw = [r for r in rows if qs[r.query].fit and r.mode == "keyword"]
    x_vec, y_vec = np.array([[r.cosine, r.coverage] for r in hyb]), np.array([r.label for r in hyb])
    vec = tuple(round(float(v), 3) for v in fit_logistic(x_vec, y_vec))
    x_kw, y_kw = np.array([[r.coverage] for r in kw]), np.array([r.label for r in kw])
    words = tuple(round(float(v), 3) for v in fit_logistic(x_kw, y_kw))
    return vec, words, choose_floor(qs, ranked, "hybrid", vec), choose_floor(qs, ranked, "keyword", words)


def _print_fit(vec: tuple, words: tuple, floor: float, floor_words: float, weak: float) -> None:
    print(f"model {MODEL}")
    print(f"fit: with a vector (intercept, cosine, coverage) = {vec}; words only (intercept, coverage) = {words}")
    setting = {MODEL: {"intercept": vec[0], "cosine": vec[1], "coverage": vec[2], "floor": floor}}
    print(
        "for a model semfs ships no calibration for (a remote one):\n"
        f"  SEMFS_RELEVANCE_CALIBRATIONS='{json.dumps(setting)}'"
    )
    print(
        f"floor {floor} with a vector, {floor_words} on words alone (the fitting half's"
        f" answerable queries' lowest best relevance × {MARGIN}: a query none of whose results reaches it gets none);"
        f" weak below {weak}"
    )


def _print_set(r: dict) -> None:
    for mode in ("hybrid", "keyword"):
        m = r.get(mode)
        if not m:
            continue
        print(f"\n{r['set']} · {mode} (held out: {m['rows']} rows) Brier {m['brier']}")
        print(f"  reliability: {m['reliability']}")
        if m["answered_queries"]:
            print(
                f"  {m['answered_queries']} answerable: nDCG@10 {m['ndcg@10']} → {m['ndcg@10_with_floor']} with"
                f" the floor; answer in the top 10 {m['answer_in_top10']} → {m['answer_in_top10_with_floor']}"
            )
        if m["no_answer_queries"]:
            print(
                f"  {m['no_answer_queries']} without an answer: {m['no_answer_emptied_by_floor']} answered"
                f" with no results, {m['no_answer_all_weak']} with every result weak"
            )


if __name__ == "__main__":
    main()
