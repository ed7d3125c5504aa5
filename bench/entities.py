"""Precision and recall of the entities semfs finds, per kind, on a labelled set nobody tuned the patterns on
first: ``bench/data/entity_labels.json`` (other projects' documents under ../shared/fixtures, read in place,
and the demo corpus), every entity of each document labelled as [kind, text as written].

Each document goes through semfs's own extractor (``extract_file``, as a file that arrives is read), then:

- **deterministic**: ``extract_mentions`` with no contacts known (the patterns and the evidence rules alone);
- **scripted LLM**: an LLM's answer scripted as a good model would give it (every labelled entity, copied
  from the text) plus what a model also does: two inventions per document that the text never names, and
  each name in another case. The answer goes through what ``OpenAIEnricher`` does with a model's answer
  (``validate_enrichment``, then ``located``, the occurrence check), and joins the patterns' entities as
  ``record_entities`` joins them. It measures the pipeline around a model (inventions dropped, names
  located and keyed), not a model: its recall is scripted, its precision is not.

Compared per document as sets of (kind, key), the key being what ``normalised_key`` makes of the label's
text (a label it cannot key, e.g. an invalid phone number, can only be missed).

    .venv/bin/python bench/entities.py [--json] [--show-misses]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "shared"))

from semfs.bootstrap import extract_limits  # noqa: E402
from semfs.config import Settings  # noqa: E402
from semfs.demo import BINARY_FILES, TEXT_FILES  # noqa: E402
from semfs.domain.enrichment import validate_enrichment  # noqa: E402
from semfs.domain.mentions import KINDS, extract_mentions, fold, located, normalised_key  # noqa: E402
from semfs.domain.models import Block, ExtractedDocument  # noqa: E402
from semfs.extractors.dispatch import extract_file  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures"
LABELS = ROOT / "bench" / "data" / "entity_labels.json"
INVENTIONS = [("person", "John Smith"), ("organisation", "Globex Corporation")]


def document(source: str, until: str | None) -> ExtractedDocument:
    origin, _, rel = source.partition(":")
    if origin == "fixtures":
        data, name = (FIXTURES / rel).read_bytes(), Path(rel).name
    else:
        data = TEXT_FILES[rel].encode() if rel in TEXT_FILES else BINARY_FILES[rel]()
        name = Path(rel).name
    doc = extract_file(data, name, extract_limits(Settings().limits)).document
    if until is None:
        return doc
    blocks: list[Block] = []
    for b in doc.blocks:  # the excerpt: every block before the one that starts the part left unlabelled
        if until in b.text:
            head = b.text[: b.text.index(until)].strip()
            if head:
                blocks.append(b.model_copy(update={"text": head}))
            break
        blocks.append(b)
    return doc.model_copy(update={"blocks": blocks})


def key_of(kind: str, text: str) -> tuple[str, str]:
    return kind, normalised_key(kind, text) or fold(text)  # type: ignore[arg-type]


def scripted_answer(labels: list[list[str]]) -> dict[str, object]:
    entities = [{"kind": k, "text": t} for k, t in labels]
    entities += [{"kind": k, "text": t} for k, t in INVENTIONS]
    entities += [{"kind": k, "text": t.upper()} for k, t in labels if k in ("person", "organisation")]
    return {"title": "x", "summary": "x.", "tags": [], "entities": entities}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    spec = json.loads(LABELS.read_text())
    counts: dict[str, dict[str, Counter[str]]] = {
        m: {k: Counter() for k in KINDS} for m in ("deterministic", "scripted LLM")
    }
    misses: list[str] = []
    labelled = invented = 0
    for item in spec["documents"]:
        truth, kept = _count_document(item, counts, misses)
        labelled += len(truth)
        invented += kept
    report: dict[str, Any] = {
        "documents": len(spec["documents"]),
        "labelled": labelled,
        "llm_inventions": len(INVENTIONS) * len(spec["documents"]),
        "llm_inventions_kept": invented,
        "methods": {method: _rows(per_kind) for method, per_kind in counts.items()},
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)
    if args.show_misses:
        print("\n" + "\n".join(misses))


def _count_document(
    item: dict[str, Any], counts: dict[str, dict[str, Counter[str]]], misses: list[str]
) -> tuple[set[tuple[str, str]], int]:
    """One labelled document through both methods: its labels, and the scripted LLM's inventions kept."""
    doc = document(item["source"], item.get("until"))
    truth = {key_of(k, t) for k, t in item["entities"]}
    patterns = {(m.kind, m.key) for m in extract_mentions(doc)}
    enrichment = validate_enrichment(scripted_answer(item["entities"]), doc.text)
    llm = {(m.kind, m.key) for m in located(doc, [(e.kind, e.text) for e in enrichment.entities])}
    for method, found in (("deterministic", patterns), ("scripted LLM", patterns | llm)):
        for kind in KINDS:
            t = {x for x in truth if x[0] == kind}
            f = {x for x in found if x[0] == kind}
            counts[method][kind].update(tp=len(t & f), fp=len(f - t), fn=len(t - f))
    misses += [f"{item['source']}: missed {x}" for x in sorted(truth - patterns)]
    misses += [f"{item['source']}: extra {x}" for x in sorted(patterns - truth)]
    return truth, len(llm & {key_of(k, t) for k, t in INVENTIONS})


def _rows(per_kind: dict[str, Counter[str]]) -> dict[str, dict[str, float]]:
    total: Counter[str] = Counter()
    rows = {}
    for kind, c in per_kind.items():
        total.update(c)
        rows[kind] = _scores(c)
    rows["all"] = _scores(total)
    return rows


def _print(report: dict[str, Any]) -> None:
    print(f"{report['documents']} documents, {report['labelled']} labelled entities (one per document and entity)")
    for method, rows in report["methods"].items():
        print(f"\n{method}")
        print(f"  {'kind':<13}{'labelled':>9}{'found':>7}{'precision':>11}{'recall':>8}")
        for kind, r in rows.items():
            print(f"  {kind:<13}{r['labelled']:>9}{r['found']:>7}{r['precision']:>11.2f}{r['recall']:>8.2f}")
    print(f"\nthe scripted LLM's inventions kept: {report['llm_inventions_kept']} of {report['llm_inventions']}")


def _scores(c: Counter[str]) -> dict[str, float]:
    tp, fp, fn = c["tp"], c["fp"], c["fn"]
    return {
        "labelled": tp + fn,
        "found": tp + fp,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
    }


if __name__ == "__main__":
    main()
