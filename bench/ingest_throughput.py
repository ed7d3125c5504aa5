"""Ingest throughput of the whole local pipeline vs the raw embedding model on the same texts.

Writes N documents (SciFact abstracts read in place, or synthetic text) as .txt files to a temp
folder, ingests them through register → executed ASL (extract in the bounded worker, enrich,
chunk, embed, index, finalize), then embeds exactly the texts the pipeline embedded (each chunk
with its context header, plus each file card) with the bare model, file by file as the pipeline
does. Alternates the two for several rounds and reports medians and the overhead ratio.

    .venv/bin/python bench/ingest_throughput.py [--docs 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from _common import scifact_texts, synthetic_text

from semfs.adapters.local.onnx_embedder import OnnxEmbedder
from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.pipeline.embed import card_text, chunk_embedding_text
from semfs.pipeline.index import load_chunks
from semfs.pipeline.ingest import ingest_bytes


def documents(n: int) -> list[tuple[str, bytes]]:
    rng = random.Random(11)
    docs = [(t, a) for t, a in scifact_texts() if a][:n]
    while len(docs) < n:
        docs.append((f"Note {len(docs)}", synthetic_text(rng, 250)))
    return [(f"doc-{i:04d}.txt", f"{t}\n\n{a}".encode()) for i, (t, a) in enumerate(docs)]


def pipeline_round(docs: list[tuple[str, bytes]], model: OnnxEmbedder) -> tuple[float, list[list[str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        c = build_container(Settings(data_dir=Path(tmp)), embedder=model)
        try:
            ingest_bytes(c, "bench", b"warm the extraction worker", "warm.txt")
            t0 = time.perf_counter()
            with c.index.batch():  # as `semfs ingest` does
                records = [ingest_bytes(c, "bench", data, name).record for name, data in docs]
            elapsed = time.perf_counter() - t0
            texts = []
            for r in records:
                chunks, _ = load_chunks(c, r)
                texts.append([chunk_embedding_text(r.title, ch) for ch in chunks] + [card_text(r)])
        finally:
            c.close()
    return elapsed, texts


def raw_round(texts: list[list[str]], model: OnnxEmbedder) -> float:
    t0 = time.perf_counter()
    for per_file in texts:
        model.embed_documents(per_file)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    docs = documents(args.docs)
    model = OnnxEmbedder()
    model.embed_documents(["warm up the model"])
    pipe_s, raw_s = [], []
    n_texts = 0
    for r in range(args.rounds):
        p, texts = pipeline_round(docs, model)
        w = raw_round(texts, model)
        n_texts = sum(len(t) for t in texts)
        pipe_s.append(p)
        raw_s.append(w)
        print(f"round {r + 1}: pipeline {p:.2f}s, raw model {w:.2f}s, overhead {p / w - 1:+.1%}")
    p, w = statistics.median(pipe_s), statistics.median(raw_s)
    ratios = [a / b - 1 for a, b in zip(pipe_s, raw_s, strict=True)]
    print(f"{len(docs)} files, {n_texts} embedded texts (chunks + file cards) per round")
    print(f"pipeline: median {n_texts / p:.1f} texts/s, {len(docs) / p:.1f} files/s")
    print(f"raw model: median {n_texts / w:.1f} texts/s")
    print(f"overhead: median {statistics.median(ratios):+.1%} (goal <= +15%)")


if __name__ == "__main__":
    main()
