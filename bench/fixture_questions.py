"""Each local model on questions about real documents, in English and other languages.

The documents are the markitdown and docling fixtures (`../shared/fixtures/*/files`, written by those
projects, read in place). `bench/data/fixture_questions.json` holds 36 questions written for semfs about
them, each naming the file(s) that answer it: English questions about English documents, German,
French and Spanish questions about English documents, English questions about Korean, Arabic, Persian,
German and Vietnamese documents, and questions in those documents' own languages.

For each model the folders go through `semfs ingest` (a subprocess, a fresh store; timed), then every
question through `retrieve()` in each mode, as `semfs search` runs it. Scored per group of questions:
MRR@10 and hit@1 / hit@5 (an answering file in the top 1 / 5).

    .venv/bin/python bench/fixture_questions.py                  # both local models
    .venv/bin/python bench/fixture_questions.py --models all-MiniLM-L6-v2-int8 --json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import ROOT

from semfs.bootstrap import build_container
from semfs.config import LOCAL_MODELS, Settings
from semfs.domain.models import SearchFilters
from semfs.pipeline.query.search import retrieve

FIXTURES = ROOT.parent / "shared" / "fixtures"
FOLDERS = [FIXTURES / "docling" / "files", FIXTURES / "markitdown" / "files"]
QUESTIONS = Path(__file__).with_name("data") / "fixture_questions.json"
SEMFS = Path(sys.executable).with_name("semfs")
MODES = ("keyword", "semantic", "hybrid")


def group(q: dict[str, str]) -> str:
    if q["lang"] == "en" and q["doc_lang"] == "en":
        return "English"
    if q["lang"] == q["doc_lang"]:
        return "same language, not English"
    return "across languages"


def ingest(model: str, data: Path) -> dict[str, object]:
    env = {**os.environ, "SEMFS_DATA_DIR": str(data), "SEMFS_EMBEDDING_MODEL": model}
    t0 = time.perf_counter()
    done = subprocess.run(
        [str(SEMFS), "ingest", *map(str, FOLDERS), "--json"], env=env, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    report = json.loads(done.stdout)
    return {"seconds": round(wall, 1), "outcomes": report["outcomes"]}


def score(ranked: list[str], answers: set[str]) -> tuple[float, float, float]:
    first = next((i for i, name in enumerate(ranked[:10]) if name in answers), None)
    rr = 0.0 if first is None else 1.0 / (first + 1)
    return rr, float(first == 0), float(first is not None and first < 5)


def run_model(model: str, questions: list[dict[str, str]]) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="semfs-fixq-") as tmp:
        data = Path(tmp) / "data"
        load = ingest(model, data)
        c = build_container(Settings(data_dir=data, embedding_model=model))
        try:
            names: dict[str, str] = {}
            rows: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
            for q in questions:
                for mode in MODES:
                    found = retrieve(c, "default", q["q"], mode, SearchFilters(), 10)  # type: ignore[arg-type]
                    for f, _, _ in found.files:
                        if f not in names:  # one record read per file, not per question
                            names[f] = c.repo.get("default", f).filename
                    ranked = [names[f] for f, _, _ in found.files]
                    s = score(ranked, set(q["files"]))
                    rows.setdefault((group(q), mode), []).append(s)
                    rows.setdefault(("all", mode), []).append(s)
        finally:
            c.close()
    table = [
        {
            "group": g,
            "mode": m,
            "questions": len(v),
            "mrr@10": round(statistics.fmean(x[0] for x in v), 3),
            "hit@1": round(statistics.fmean(x[1] for x in v), 3),
            "hit@5": round(statistics.fmean(x[2] for x in v), 3),
        }
        for (g, m), v in rows.items()
    ]
    return {"model": model, "ingest": load, "rows": table}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(LOCAL_MODELS))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not FOLDERS[0].is_dir():
        raise SystemExit(f"no fixtures at {FIXTURES}")
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))["questions"]
    results = [run_model(m, questions) for m in args.models.split(",")]
    if args.json:
        print(json.dumps(results, indent=2, ensure_ascii=False))
        return
    for r in results:
        print(f"{r['model']}: ingest {r['ingest']['seconds']} s, outcomes {r['ingest']['outcomes']}")  # type: ignore[index]
        for row in sorted(r["rows"], key=lambda x: (x["group"], MODES.index(x["mode"]))):  # type: ignore[union-attr,index]
            print(
                f"  {row['group']:<28} {row['mode']:<9} n={row['questions']:<3} MRR@10 {row['mrr@10']:.3f}"
                f"  hit@1 {row['hit@1']:.3f}  hit@5 {row['hit@5']:.3f}"
            )


if __name__ == "__main__":
    main()
