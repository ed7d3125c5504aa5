"""Embed: chunk the document (structure-aware) and embed the chunks plus the file card, in batches."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from semfs.config import Settings
from semfs.domain.chunking import chunk_document
from semfs.domain.models import Chunk, ExtractedDocument, FileRecord, utcnow
from semfs.domain.outcomes import Status
from semfs.pipeline.stage import stage
from semfs.pipeline.state import PipelineState, derived_key, load_document

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from semfs.ports import Container, Embedder


def make_chunks(doc: ExtractedDocument, settings: Settings) -> list[Chunk]:
    return chunk_document(doc, settings.chunk_tokens, settings.chunk_overlap_tokens)


def chunk_embedding_text(title: str | None, chunk: Chunk) -> str:
    """What is embedded for a chunk: the file title and section as context, then the chunk text."""
    head = " — ".join(x for x in (title, chunk.location.section) if x and x not in chunk.text[:200])
    return f"{head}\n{chunk.text}" if head else chunk.text


KIND_WORDS = {
    "application/pdf": "PDF document",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "Word document",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "Spreadsheet (Excel workbook)",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "Presentation slides (deck)",
    "text/csv": "Table (CSV)",
    "text/tab-separated-values": "Table (TSV)",
    "text/html": "Web page",
    "text/markdown": "Markdown document",
    "text/x-source": "Source code",
}


def card_text(record: FileRecord) -> str:
    """The file card: what a file is (its kind, so "the slides about…" finds a deck), its title,
    summary and tags — so a file is found by what it is about."""
    tags = ", ".join(record.all_tags)
    kind = KIND_WORDS.get(record.mime_type)
    return "\n".join(x for x in (kind, record.title, record.summary, f"Tags: {tags}" if tags else "") if x)


def has_card(record: FileRecord) -> bool:
    """Whether the file's card says more than its title — a summary, tags or its kind. Every chunk
    already carries the title (its field, and the head of its embedding text), so a title-only card
    only adds a second, shorter copy that competes with the chunks (SciFact, untitled corpora)."""
    return bool(record.summary or record.all_tags or record.mime_type in KIND_WORDS)


def embed_texts(embedder: Embedder, texts: Sequence[str], batch: int) -> npt.NDArray[np.float32]:
    import numpy as np  # imported on use: API-only cold starts never load it

    rows: list[list[float]] = []
    for i in range(0, len(texts), batch):
        rows.extend(embedder.embed_documents(list(texts[i : i + batch])))
    return np.asarray(rows, dtype=np.float32).reshape(len(texts), embedder.dim)


def vectors_to_bytes(vectors: npt.NDArray[np.float32]) -> bytes:
    import numpy as np

    buf = io.BytesIO()
    np.save(buf, vectors, allow_pickle=False)
    return buf.getvalue()


def vectors_from_bytes(data: bytes) -> npt.NDArray[np.float32]:
    import numpy as np

    return np.load(io.BytesIO(data), allow_pickle=False).astype(np.float32)  # type: ignore[no-any-return]


def run(state: PipelineState, c: Container) -> PipelineState:
    """Chunk, embed (chunks + card, last row is the card), store both as derived blobs."""
    with stage("embed", state, c, Status.INDEXING) as work:
        record = work.record
        doc = load_document(c, record)
        chunks = make_chunks(doc, c.settings)
        if len(chunks) > c.settings.max_chunks:  # bounded embedding time and index size per file
            chunks, state = chunks[: c.settings.max_chunks], state.model_copy(update={"partial": True})
        texts = [chunk_embedding_text(record.title, ch) for ch in chunks] + [card_text(record)]
        vectors = embed_texts(c.embedder, texts, c.settings.embed_batch_size)
        chunks_key = derived_key(record.tenant_id, record.file_id, "chunks.json")
        c.blobs.put(chunks_key, json.dumps([ch.model_dump(mode="json") for ch in chunks]).encode("utf-8"))
        c.blobs.put(derived_key(record.tenant_id, record.file_id, "vectors.npy"), vectors_to_bytes(vectors))
        work.set(
            chunks_key=chunks_key,
            chunk_count=len(chunks),
            embedding_model=c.embedder.model,
            embedding_dim=c.embedder.dim,
            embedded_at=utcnow(),
        )
    return state
