"""Grounded answers on questions with known answers and known non-answers.

``semfs ask`` (``pipeline/query/ask.ask``, the extractive answerer unless an LLM is configured) on:

- the demo corpus (``semfs demo``'s files): ``demo`` questions of ``bench/data/relevance_questions.json``
  name the files that answer them and a phrase the answer must contain; ``demo_no_answer`` ones have no
  answer there;
- the shared fixtures (``../shared/fixtures``, other projects' files, read in place): the English
  questions of ``bench/data/fixture_questions.json`` name their files (no phrase: an answer citing one
  of them counts), and ``fixtures_no_answer`` have none.

Counted per set: answered correctly (a cited file answers it and, where given, the phrase is in the
answer), answered wrongly (nothing cited answers it, or there was nothing to answer), refused
correctly (``no_answer`` where none exists) and refused wrongly.

    .venv/bin/python bench/answer_quality.py               # demo and fixtures
    .venv/bin/python bench/answer_quality.py --sets demo --show
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from relevance_calibration import FIXTURE_QUESTIONS, FOLDERS, QUESTIONS, SEMFS

from semfs import demo
from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.pipeline.query.ask import ask
from semfs.ports.repository import RecordQuery

Question = tuple[str, set[str], str | None]  # text, answering file names (empty: none), phrase


def judge(c: object, questions: list[Question], show: bool) -> Counter[str]:
    names = {r.file_id: r.filename for r in c.repo.query(RecordQuery(tenant_id="default", limit=10_000))}  # type: ignore[attr-defined]
    counts: Counter[str] = Counter()
    for text, files, phrase in questions:
        a = ask(c, "default", text)  # type: ignore[arg-type]
        cited = {names.get(x.file_id, x.file_id) for x in a.citations}
        if a.status == "no_answer":
            verdict = "refused wrongly" if files else "refused correctly"
        elif not files:
            verdict = "answered wrongly"
        else:
            right = bool(cited & files) and (phrase is None or phrase.lower() in (a.answer or "").lower())
            verdict = "answered correctly" if right else "answered wrongly"
        counts[verdict] += 1
        if show:
            said = a.answer if a.status == "answered" else f"no_answer: {a.reason}"
            print(f"[{verdict}] {text}\n    {said!s:.300}\n    cited {sorted(cited)}", file=sys.stderr)
    return counts


def demo_questions() -> list[Question]:
    qs: list[Question] = [(d["q"], set(d["files"]), d["answer"]) for d in QUESTIONS["demo"]]
    return qs + [(t, set(), None) for t in QUESTIONS["demo_no_answer"]]


def fixture_questions() -> list[Question]:
    qs: list[Question] = [(q["q"], set(q["files"]), None) for q in FIXTURE_QUESTIONS if q["lang"] == "en"]
    return qs + [(t, set(), None) for t in QUESTIONS["fixtures_no_answer"]]


def run_demo(show: bool) -> Counter[str]:
    with tempfile.TemporaryDirectory(prefix="semfs-answers-") as tmp:
        c = build_container(Settings(data_dir=Path(tmp) / "data"))
        try:
            demo.write_demo_corpus(Path(tmp) / "corpus")
            demo.ingest_demo(c, "default", Path(tmp) / "corpus")
            return judge(c, demo_questions(), show)
        finally:
            c.close()


def run_fixtures(show: bool) -> Counter[str]:
    with tempfile.TemporaryDirectory(prefix="semfs-answers-fix-") as tmp:
        data = Path(tmp) / "data"
        env = {**os.environ, "SEMFS_DATA_DIR": str(data)}
        subprocess.run([str(SEMFS), "ingest", *map(str, FOLDERS), "--json"], env=env, capture_output=True, check=True)
        c = build_container(Settings(data_dir=data))
        try:
            return judge(c, fixture_questions(), show)
        finally:
            c.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="demo,fixtures")
    ap.add_argument("--show", action="store_true", help="each question, its answer and citations (to stderr)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--answer-min", type=float, help="the relevance ask answers from (default: ask.ANSWER_MIN)")
    args = ap.parse_args()
    if args.answer_min is not None:
        from semfs.pipeline.query import ask as ask_module

        ask_module.ANSWER_MIN = args.answer_min
    results = {}
    for name, run in (("demo", run_demo), ("fixtures", run_fixtures)):
        if name in args.sets.split(","):
            results[name] = dict(run(args.show))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    order = ("answered correctly", "answered wrongly", "refused correctly", "refused wrongly")
    from semfs.pipeline.query import ask as ask_module

    print(f"ask answers from relevance {ask_module.ANSWER_MIN} and up")
    for name, counts in results.items():
        print(f"{name}: " + ", ".join(f"{k} {counts.get(k, 0)}" for k in order))


if __name__ == "__main__":
    main()
