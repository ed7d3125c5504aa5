"""BEIR-format retrieval evaluation through the real chunk → embed → index → search path.

Each document is read as its ``.txt`` file would be (title line, blank line, text, through the plain
text extractor), so the scores are what real files get; ``bench/file_path_eval.py`` checks that
against ingesting the files and searching with the CLI.

Loads the corpus into a fresh temporary store (the configured embedder and index), runs every
judged query in each mode, and reports trec_eval-style nDCG@10 (linear gain), MRR@10, R@10 and
R@100, plus per-query latency percentiles. Only reads the data; never copies it anywhere else.
"""

from __future__ import annotations

import gzip
import json
import math
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.domain.models import FileRecord, SearchFilters
from semfs.domain.tags import is_generic, merge_tags
from semfs.domain.vocabulary import SearchMode
from semfs.extractors.text import extract_plain
from semfs.pipeline.documents import build_docs, card_text, chunk_embedding_text, embed_texts, has_card
from semfs.pipeline.query.search import retrieve
from semfs.pipeline.stages.embed import make_chunks
from semfs.ports.enricher import EnrichInput

TENANT = "eval"


def _open(path: Path) -> Any:
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")


def load_corpus(beir_dir: Path, max_docs: int | None = None) -> Iterator[tuple[str, str, str]]:
    path = beir_dir / "corpus.jsonl.gz"
    if not path.exists():
        path = beir_dir / "corpus.jsonl"
    with _open(path) as fh:
        for n, line in enumerate(fh):
            if max_docs is not None and n >= max_docs:
                return
            doc = json.loads(line)
            yield str(doc["_id"]), doc.get("title") or "", doc.get("text") or ""


def load_qrels(beir_dir: Path, split: str = "test") -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with (beir_dir / "qrels" / f"{split}.tsv").open(encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            parts = line.rstrip("\n").split("\t")
            if i == 0 and not parts[-1].lstrip("-").isdigit():
                continue  # header
            qid, did, score = parts[0], parts[1], int(parts[2])
            qrels.setdefault(qid, {})[did] = score
    return qrels


def load_queries(beir_dir: Path) -> dict[str, str]:
    with (beir_dir / "queries.jsonl").open(encoding="utf-8") as fh:
        return {str(q["_id"]): q["text"] for q in map(json.loads, fh)}


def ndcg_at(ranked: list[str], rels: dict[str, int], k: int = 10) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def mrr_at(ranked: list[str], rels: dict[str, int], k: int = 10) -> float:
    return next((1.0 / (i + 1) for i, d in enumerate(ranked[:k]) if rels.get(d, 0) > 0), 0.0)


def recall_at(ranked: list[str], rels: dict[str, int], k: int) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant & set(ranked[:k])) / len(relevant) if relevant else 0.0


def percentile(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


def judged_subset(
    beir_dir: Path, max_docs: int | None = None
) -> tuple[list[tuple[str, str, str]], dict[str, str], dict[str, dict[str, int]]]:
    """The corpus (its first ``max_docs``), and the queries answerable from it with their judgements:
    a subset is scored only on queries whose relevant documents are all in it."""
    qrels = load_qrels(beir_dir)
    corpus = list(load_corpus(beir_dir, max_docs))
    if max_docs is not None:
        ids = {doc_id for doc_id, _, _ in corpus}
        qrels = {
            q: {d: r for d, r in rels.items() if d in ids}
            for q, rels in qrels.items()
            if all(d in ids for d, r in rels.items() if r > 0)
        }
    queries = {q: t for q, t in load_queries(beir_dir).items() if q in qrels}
    return corpus, queries, qrels


def evaluate(
    settings: Settings,
    beir_dir: Path,
    modes: list[SearchMode],
    run_out: Path | None = None,
    max_docs: int | None = None,
    progress: Console | None = None,
) -> list[dict[str, Any]]:
    """Score ``modes`` on a BEIR folder. Each document is written as a ``.txt`` would be ingested: the
    plain-text extractor, the extractive enricher (title, summary, tags, hence a card), then chunks."""
    corpus, queries, qrels = judged_subset(beir_dir, max_docs)
    if progress is not None:
        progress.print(f"{len(corpus)} documents, {len(queries)} judged queries")
    with tempfile.TemporaryDirectory(prefix="semfs-eval-") as tmp:
        c = build_container(settings.model_copy(update={"data_dir": Path(tmp)}))
        try:
            t0 = time.perf_counter()
            n_chunks = _load(c, corpus, progress)
            load_s = time.perf_counter() - t0
            results = [_run_mode(c, mode, queries, qrels, _run_path(run_out, mode, len(modes) > 1)) for mode in modes]
        finally:
            c.close()
    for r in results:
        r.update(
            documents=len(corpus),
            chunks=n_chunks,
            load_seconds=round(load_s, 1),
            embedding_model=settings.embedding.resolved_model,
        )
    return results


def _run_path(run_out: Path | None, mode: str, several: bool) -> Path | None:
    """With several modes, one run file each: ``run.trec`` → ``run-keyword.trec``, …"""
    if run_out is None or not several:
        return run_out
    return run_out.with_name(f"{run_out.stem}-{mode}{run_out.suffix}")


def _load(c: Any, corpus: list[tuple[str, str, str]], console: Console | None) -> int:
    batch_docs = 64
    step = max(batch_docs, len(corpus) // 10)
    n_chunks = 0
    with Progress(console=console, disable=console is None, transient=True) as progress, c.index.batch():
        task = progress.add_task("embedding corpus", total=len(corpus))
        for start in range(0, len(corpus), batch_docs):
            part = corpus[start : start + batch_docs]
            prepared = []
            texts: list[str] = []
            for doc_id, title, text in part:
                # the document a .txt of it becomes (title line, blank line, text): what real files get
                doc = extract_plain(f"{title}\n\n{text}")
                chunks = make_chunks(doc, c.settings)
                # enriched as local ingestion enriches it (the extractive enricher: summary and tags)
                enriched = c.fallback_enricher.enrich(EnrichInput(document=doc, filename=f"{doc_id}.txt"))
                record = FileRecord(
                    file_id=doc_id,
                    tenant_id=TENANT,
                    lineage_id=doc_id,
                    sha256="-",
                    blob_key="-",
                    filename=f"{doc_id}.txt",
                    normalised_name=f"{doc_id}.txt",
                    mime_type="text/plain",
                    size_bytes=len(text),
                    title=enriched.title,  # the detected first line, else the file's name, as for a file
                    summary=enriched.summary,
                    auto_tags=[t for t in merge_tags(enriched.auto_tags) if not is_generic(t)][:12],
                    status="indexed",
                )
                prepared.append((record, chunks, len(texts)))  # the card row, if any, follows the chunks
                texts.extend(chunk_embedding_text(record.title, ch) for ch in chunks)
                if has_card(record):
                    texts.append(card_text(record))
            vectors = embed_texts(c.embedder, texts, c.settings.embedding.batch_size)
            files = []
            for record, chunks, offset in prepared:
                end = offset + len(chunks) + (1 if has_card(record) else 0)
                docs = build_docs(record, chunks, vectors[offset:end], c.embedder.model, True)
                files.append((TENANT, record.file_id, docs))
                n_chunks += len(chunks)
            c.index.replace_files(files)
            progress.advance(task, len(part))
            done = start + len(part)
            if (
                console is not None
                and not console.is_terminal
                and (done // step != start // step or done == len(corpus))
            ):
                console.print(f"embedded {done}/{len(corpus)} documents")  # a pipe gets lines, not a bar
    return n_chunks


def _run_mode(
    c: Any, mode: SearchMode, queries: dict[str, str], qrels: dict[str, dict[str, int]], run_out: Path | None
) -> dict[str, Any]:
    scores: dict[str, list[float]] = {"ndcg@10": [], "mrr@10": [], "recall@10": [], "recall@100": []}
    latencies: list[float] = []
    lines: list[str] = []
    c.index.knn(TENANT, [0.0] * c.embedder.dim, SearchFilters(), 1)  # warm the vector cache
    for qid, text in queries.items():
        t0 = time.perf_counter()
        found = retrieve(c, TENANT, text, mode, SearchFilters(), 100)
        latencies.append((time.perf_counter() - t0) * 1000)
        ranked = [file_id for file_id, _, _ in found.files]
        rels = qrels[qid]
        scores["ndcg@10"].append(ndcg_at(ranked, rels))
        scores["mrr@10"].append(mrr_at(ranked, rels))
        scores["recall@10"].append(recall_at(ranked, rels, 10))
        scores["recall@100"].append(recall_at(ranked, rels, 100))
        lines.extend(f"{qid} Q0 {d} {i + 1} {s:.6f} semfs-{mode}" for i, (d, s, _) in enumerate(found.files))
    if run_out is not None:
        run_out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result: dict[str, Any] = {"mode": mode, "queries": len(queries)}
    result.update({k: round(statistics.fmean(v), 4) for k, v in scores.items()})
    result.update(
        latency_ms_p50=round(percentile(latencies, 50), 2), latency_ms_p95=round(percentile(latencies, 95), 2)
    )
    return result
