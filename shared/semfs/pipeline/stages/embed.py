"""Embed: chunk the document (structure-aware) and embed the chunks plus the file card, in batches."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.config import Settings
from semfs.domain.chunking import chunk_document
from semfs.domain.models import Chunk, ExtractedDocument, utcnow
from semfs.domain.outcomes import Status
from semfs.pipeline.documents import (
    card_text,
    chunk_embedding_text,
    chunks_to_bytes,
    derived_key,
    embed_texts,
    load_document,
    store_keyword_chunks,
    vectors_to_bytes,
)
from semfs.pipeline.stages.state import PipelineState
from semfs.pipeline.stages.unit_of_work import stage

if TYPE_CHECKING:
    from semfs.ports import Container


def make_chunks(doc: ExtractedDocument, settings: Settings) -> list[Chunk]:
    return chunk_document(doc, settings.chunking.tokens, settings.chunking.overlap_tokens)


def run(state: PipelineState, c: Container) -> PipelineState:
    """Chunk, embed (chunks + card, last row is the card), store both as derived blobs."""
    import numpy as np

    with stage("embed", state, c, Status.INDEXING) as work:
        record = work.record
        doc = load_document(c, record)
        chunks = make_chunks(doc, c.settings)
        rest: list[Chunk] = []  # past the cap or the budget: found by their words, not embedded
        if len(chunks) > c.settings.limits.max_chunks:  # bounded embedding time and vector index size per file
            cap = c.settings.limits.max_chunks
            reason = state.partial_reason or (
                f"the first {cap:,} of {len(chunks):,} chunks embedded (SEMFS_MAX_CHUNKS); every chunk is found by"
                " its words"
            )
            chunks, rest = chunks[:cap], chunks[cap:]
            state = state.model_copy(update={"partial": True, "partial_reason": reason})
        batch = c.settings.embedding.batch_size
        # inside the file's budget, as extract and OCR are (a 6 MB file of short lines embedded for minutes):
        # past it, the chunks embedded by then are indexed and the file says so; the card (the last text,
        # batched with the chunks) is then embedded on its own
        texts = [chunk_embedding_text(record.title, ch) for ch in chunks] + [card_text(record)]
        vectors = embed_texts(c.embedder, texts, batch, state.deadline)
        if len(vectors) < len(texts):
            budget = c.settings.limits.file_budget_s
            reason = (
                f"the first {len(vectors):,} of {len(chunks) + len(rest):,} chunks embedded within the file's time"
                " budget; every chunk is found by its words"
            )
            chunks, rest = chunks[: len(vectors)], chunks[len(vectors) :] + rest
            state = state.model_copy(
                update={"partial": True, "partial_reason": state.partial_reason or f"{reason} ({budget:g} s)"}
            )
            vectors = np.concatenate([vectors, embed_texts(c.embedder, texts[-1:], batch)])
        chunks_key = derived_key(record.tenant_id, record.file_id, "chunks.json")
        c.blobs.put(chunks_key, chunks_to_bytes(chunks))
        c.blobs.put(derived_key(record.tenant_id, record.file_id, "vectors.npy"), vectors_to_bytes(vectors))
        store_keyword_chunks(c, record, rest)
        work.set(
            chunks_key=chunks_key,
            chunk_count=len(chunks),
            keyword_chunks=len(rest),
            embedding_model=c.embedder.model,
            embedding_dim=c.embedder.dim,
            embedded_at=utcnow(),
        )
    return state
