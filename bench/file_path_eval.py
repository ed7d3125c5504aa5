"""Real files against `semfs eval`: the same SciFact subset scored both ways, per mode.

1. `semfs eval --max-docs N` (documents go straight to chunk → embed → index, no extraction or
   enrichment), in this process.
2. The same N documents written as `<id>.txt` files (the title on the first line, a blank line, the
   abstract), ingested with `semfs ingest FOLDER` (extraction, extractive enrichment, cards) and
   searched query by query with `semfs search --json --limit 100` in a subprocess, as a user would.

Both are scored on the queries answerable from the subset (`semfs.evaluation.judged_subset`). The
goal is the files path within 0.01 nDCG@10 of `semfs eval`. The corpus is read in place from
../shared/bench and written only to a temporary folder.

    .venv/bin/python bench/file_path_eval.py --docs 500 --modes keyword,semantic,hybrid
    SEMFS_EMBEDDER=hash .venv/bin/python bench/file_path_eval.py --modes keyword   # fast
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import SCIFACT

from semfs.config import Settings
from semfs.evaluation import evaluate, judged_subset, ndcg_at, recall_at

SEMFS = Path(sys.executable).with_name("semfs")


def _env(data: Path) -> dict[str, str]:
    return {**os.environ, "SEMFS_DATA_DIR": str(data)}


def ingest(corpus: list[tuple[str, str, str]], folder: Path, data: Path) -> None:
    folder.mkdir(parents=True)
    for doc_id, title, text in corpus:
        (folder / f"{doc_id}.txt").write_text(f"{title}\n\n{text}\n" if title else f"{text}\n", encoding="utf-8")
    done = subprocess.run(
        [str(SEMFS), "ingest", str(folder), "--json"], env=_env(data), capture_output=True, text=True, check=False
    )
    report = json.loads(done.stdout)
    if set(report["outcomes"]) != {"OK"}:
        raise SystemExit(f"ingest did not succeed: {report['outcomes']}")


def search_files(query: str, mode: str, data: Path) -> list[str]:
    """`semfs search --json`: the ranked document ids (each file is named after its document)."""
    done = subprocess.run(
        [str(SEMFS), "search", query, "--mode", mode, "--limit", "100", "--json"],
        env=_env(data),
        capture_output=True,
        text=True,
        check=True,
    )
    return [Path(r["filename"]).stem for r in json.loads(done.stdout)["results"]]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=500, help="the first N SciFact documents")
    ap.add_argument("--modes", default="keyword,semantic,hybrid")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not (SCIFACT / "queries.jsonl").exists():
        raise SystemExit(f"no SciFact at {SCIFACT}")
    modes = args.modes.split(",")
    corpus, queries, qrels = judged_subset(SCIFACT, args.docs)
    settings = Settings()
    through_eval = {r["mode"]: r for r in evaluate(settings, SCIFACT, modes, max_docs=args.docs)}  # type: ignore[arg-type]
    rows = []
    with tempfile.TemporaryDirectory(prefix="semfs-files-") as tmp:
        ingest(corpus, Path(tmp) / "files", Path(tmp) / "data")
        for mode in modes:
            ndcg, r100 = [], []
            for qid, text in queries.items():
                ranked = search_files(text, mode, Path(tmp) / "data")
                ndcg.append(ndcg_at(ranked, qrels[qid]))
                r100.append(recall_at(ranked, qrels[qid], 100))
            files = round(statistics.fmean(ndcg), 4)
            ev = through_eval[mode]["ndcg@10"]
            rows.append(
                {
                    "mode": mode,
                    "eval_ndcg@10": ev,
                    "files_ndcg@10": files,
                    "gap": round(ev - files, 4),
                    "files_recall@100": round(statistics.fmean(r100), 4),
                    "queries": len(queries),
                    "documents": len(corpus),
                    "embedding_model": settings.embedding.resolved_model,
                }
            )
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"SciFact first {len(corpus)} documents, {len(queries)} judged queries, {settings.embedding.resolved_model}")
    print(f"{'mode':<10} {'semfs eval':>10} {'files+CLI':>10} {'gap':>8}")
    for r in rows:
        print(f"{r['mode']:<10} {r['eval_ndcg@10']:>10.4f} {r['files_ndcg@10']:>10.4f} {r['gap']:>+8.4f}")


if __name__ == "__main__":
    main()
