"""semfs eval on a tiny BEIR set made here: --max-docs scores only what the subset can answer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semfs.config import Settings
from semfs.evaluation import evaluate

pytestmark = pytest.mark.integration


def beir(tmp_path: Path) -> Path:
    docs = {
        "d1": "Aspirin lowers the risk of heart attack in adults.",
        "d2": "Vitamin D deficiency is common in northern winters.",
        "d3": "Exercise improves sleep quality in older people.",
        "d4": "Statins reduce cholesterol and heart attack risk.",
    }
    (tmp_path / "qrels").mkdir(parents=True)
    (tmp_path / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": k, "text": v}) for k, v in docs.items()))
    queries = {"q1": "aspirin heart attack", "q2": "statins cholesterol", "q3": "vitamin d and statins"}
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps({"_id": k, "text": v}) for k, v in queries.items()))
    judged = [("q1", "d1"), ("q2", "d4"), ("q3", "d2"), ("q3", "d4")]
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t1" for q, d in judged)]
    (tmp_path / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return tmp_path


def test_max_docs_keeps_only_queries_whose_judged_documents_are_in_the_subset(tmp_path: Path) -> None:
    data = beir(tmp_path / "set")
    settings = Settings(data_dir=tmp_path / "data", embedder="hash")
    (full,) = evaluate(settings, data, ["keyword"])
    (subset,) = evaluate(settings, data, ["keyword"], max_docs=2)
    assert (full["queries"], full["documents"]) == (3, 4)
    assert (subset["queries"], subset["documents"]) == (1, 2)
    assert subset["ndcg@10"] == 1.0  # q1 against d1, d2 only
