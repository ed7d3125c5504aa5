"""Tag quality on the demo corpus and on other projects' documents (../shared/fixtures).

Ingests both into a temporary store (extractive enricher, hash embedder: the tags come from the text,
not the model) and reports, per corpus: files, auto-tags per file, tags that are only generic words
(the rule of ``domain/tags.is_generic``; should be 0), tags cut inside a word (a slug whose last word is
not a word of the document; should be 0), and the merge suggestions with their reasons.

Precision of suggestions is judged by this rule: a suggestion is right when the two tags name the same
thing in another inflection (plural, -ing/-ed, a trailing letter of a stem) — judged by reading the
printed list, not by the code that made it.

    .venv/bin/python bench/tag_quality.py [--fixtures ../shared/fixtures]
"""

from __future__ import annotations

import argparse
import re
import tempfile
from collections import Counter
from pathlib import Path

from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.demo import ingest_demo, write_demo_corpus
from semfs.domain.outcomes import Status
from semfs.domain.tags import is_generic
from semfs.pipeline.catalogue.files import iter_records
from semfs.pipeline.catalogue.tags import suggest_merges
from semfs.pipeline.documents import load_document
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance

SUPPORTED = {".docx", ".pptx", ".xlsx", ".pdf", ".html", ".htm", ".md", ".csv", ".txt", ".json"}


def report(c, tenant: str, name: str) -> None:
    records = list(iter_records(c, tenant, (Status.INDEXED,)))
    tags = Counter()
    generic, cut = [], []
    for r in records:
        words = set(re.findall(r"[a-z0-9]+", f"{load_document(c, r).text} {r.filename} {r.title}".casefold()))
        context = {p for t in (r.provenance.get("thread_subject") or "",) for p in re.findall(r"[a-z0-9]+", t.lower())}
        for t in r.auto_tags:
            tags[t] += 1
            if is_generic(t):
                generic.append(t)
            last = t.rsplit("-", 1)[-1]
            if last not in words and last not in context and not last.isdigit():
                cut.append(t)
    suggestions = suggest_merges(c, tenant)
    per_file = sum(len(r.auto_tags) for r in records) / max(1, len(records))
    print(f"\n## {name}: {len(records)} files, {per_file:.1f} auto-tags per file, {len(tags)} distinct")
    print(f"generic-only tags: {len(generic)} {sorted(set(generic))[:10]}")
    print(f"tags whose last word is not in the document (cut or invented): {len(cut)} {sorted(set(cut))[:10]}")
    print(f"merge suggestions: {len(suggestions)}")
    for s in suggestions:
        print(f"  {s.merge} → {s.into}: {', '.join(s.reasons)}")
    print("most used:", ", ".join(f"{t} {n}" for t, n in tags.most_common(15)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixtures", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "fixtures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        c = build_container(Settings(data_dir=Path(tmp) / "data", embedder="hash", ocr_enabled=False))
        try:
            folder = Path(tmp) / "demo"
            write_demo_corpus(folder)
            ingest_demo(c, "demo", folder)
            report(c, "demo", "demo corpus")
            files = sorted(p for p in args.fixtures.rglob("*") if p.is_file() and p.suffix.lower() in SUPPORTED)
            files = [p for p in files if "groundtruth" not in p.parts]
            for p in files:
                ingest_bytes(c, "fixtures", p.read_bytes(), p.name, Provenance(version_key=f"path:{p}"))
            report(c, "fixtures", f"fixture documents ({len(files)} files)")
        finally:
            c.close()


if __name__ == "__main__":
    main()
