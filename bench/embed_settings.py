"""The local model's speed and peak RSS per setting: threads × texts per forward pass × CPU arena.

Embeds the texts the pipeline would embed for the first SciFact abstracts (chunks with their
context header, plus one card per file) with each setting in a process of its own, so each peak
RSS is that setting's alone. This chose `SEMFS_EMBED_MODEL_BATCH=1` and threads = cores.

    .venv/bin/python bench/embed_settings.py [--texts 480]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

SETTINGS = [(1, 32, True), (2, 32, True), (2, 64, True), (2, 16, True), (2, 8, True), (2, 4, True), (2, 2, True)]
SETTINGS += [(2, 1, True), (1, 1, True), (2, 32, False), (2, 8, False), (2, 1, False)]


def texts(n: int) -> list[str]:
    from _common import scifact_texts

    from semfs.config import Settings
    from semfs.domain.models import Block, ExtractedDocument
    from semfs.pipeline.documents import chunk_embedding_text
    from semfs.pipeline.stages.embed import make_chunks

    settings, out = Settings(), []
    for title, abstract in scifact_texts():
        doc = ExtractedDocument(blocks=[Block(text=abstract or title)], title=title or None)
        out += [chunk_embedding_text(title, ch) for ch in make_chunks(doc, settings)] + [title]
        if len(out) >= n:
            return out[:n]
    return out


def one(threads: int, batch: int, arena: bool, n: int) -> dict[str, object]:
    import onnxruntime as ort

    if not arena:  # the session options the embedder builds, with the CPU arena off
        base = ort.SessionOptions

        class NoArena(base):  # type: ignore[misc, valid-type]
            def __init__(self) -> None:
                super().__init__()
                self.enable_cpu_mem_arena = False

        ort.SessionOptions = NoArena
    from semfs.adapters.local.onnx_embedder import OnnxEmbedder

    sample = texts(n)
    model = OnnxEmbedder(threads=threads, batch_size=batch)
    model.embed_array(sample[:8])
    t0 = time.perf_counter()
    model.embed_array(sample)
    rate = len(sample) / (time.perf_counter() - t0)
    status = Path("/proc/self/status").read_text().splitlines()
    hwm = next(int(line.split()[1]) for line in status if line.startswith("VmHWM"))
    return {"threads": threads, "batch": batch, "arena": arena, "texts_per_s": rate, "peak_rss_mb": hwm / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--texts", type=int, default=480)
    parser.add_argument("--one", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], args.one[1], bool(args.one[2]), args.texts)))
        return
    print(f"{'threads':>7} {'per pass':>8} {'arena':>5} {'texts/s':>8} {'peak RSS':>9}")
    for threads, batch, arena in SETTINGS:
        cmd = [sys.executable, __file__, "--texts", str(args.texts), "--one", str(threads), str(batch), str(int(arena))]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
        arena_s = "on" if arena else "off"
        print(f"{threads:>7} {batch:>8} {arena_s:>5} {r['texts_per_s']:>8.1f} {r['peak_rss_mb']:>6.0f} MB")


if __name__ == "__main__":
    main()
