"""Index: replace this file's documents in the index (delete-then-upsert by file id), then settle
which version of the lineage is latest — in the records first, then in the index."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from semfs.domain.errors import Conflict, RetryableError
from semfs.domain.ids import card_id, chunk_id
from semfs.domain.models import Chunk, FileRecord, IndexDoc, Location, utcnow
from semfs.pipeline.embed import card_text, chunk_embedding_text, embed_texts, has_card, vectors_from_bytes
from semfs.pipeline.records import ATTEMPTS, update
from semfs.pipeline.stage import stage
from semfs.pipeline.state import PipelineState, derived_key

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from semfs.ports import Container


def build_docs(
    record: FileRecord,
    chunks: list[Chunk],
    vectors: npt.NDArray[np.float32],
    model: str | None,
    is_latest: bool,
) -> list[IndexDoc]:
    """Index documents for one file: one per chunk plus the file card (the last vector row) when it
    says more than the title (``has_card``); ``vectors`` may stop before the card row."""
    common = {
        "file_id": record.file_id,
        "lineage_id": record.lineage_id,
        "tenant_id": record.tenant_id,
        "version": record.version,
        "is_latest": is_latest,
        "contact_ids": record.contact_ids,
        "thread_id": record.thread_id,
        "source_type": record.source_type,
        "tags": record.all_tags,
        "mime_type": record.mime_type,
        "filename": record.filename,
        "title": record.title or record.filename,
        "embedding_model": model,
        "created_at": record.document_date or record.created_at,  # the date filters match on
    }
    docs = [
        IndexDoc(
            chunk_id=chunk_id(record.file_id, ch.n),
            kind="chunk",
            text=ch.text,
            location=ch.location,
            embedding=vectors[i].tolist(),
            **common,
        )
        for i, ch in enumerate(chunks)
    ]
    if not has_card(record) or len(vectors) <= len(chunks):
        return docs
    docs.append(
        IndexDoc(
            chunk_id=card_id(record.file_id),
            kind="card",
            text=card_text(record),
            location=Location(),
            embedding=vectors[len(chunks)].tolist(),
            **common,
        )
    )
    return docs


def load_chunks(c: Container, record: FileRecord) -> tuple[list[Chunk], npt.NDArray[np.float32]]:
    assert record.chunks_key is not None
    chunks = [Chunk.model_validate(x) for x in json.loads(c.blobs.get(record.chunks_key))]
    vectors = vectors_from_bytes(c.blobs.get(derived_key(record.tenant_id, record.file_id, "vectors.npy")))
    return chunks, vectors


def index_record(c: Container, record: FileRecord, reembed_card: bool = False) -> None:
    """(Re)write one indexed record's documents from its stored chunks and vectors. Re-embeds when
    the stored vectors are from another model (or only the card, when asked)."""
    c.index.replace_file(record.tenant_id, record.file_id, record_docs(c, record, reembed_card))


def record_docs(c: Container, record: FileRecord, reembed_card: bool = False) -> list[IndexDoc]:
    """An indexed record's documents, from its stored chunks and vectors (see ``index_record``)."""
    chunks, vectors = load_chunks(c, record)
    model = record.embedding_model
    if model != c.embedder.model or vectors.shape[0] != len(chunks) + 1:
        texts = [chunk_embedding_text(record.title, ch) for ch in chunks] + [card_text(record)]
        vectors = embed_texts(c.embedder, texts, c.settings.embed_batch_size)
        model = c.embedder.model
        dim = c.embedder.dim
        record = update(
            c.repo,
            record.tenant_id,
            record.file_id,
            lambda r: r.evolve(embedding_model=model, embedding_dim=dim, embedded_at=utcnow()),
            seen=record,
        )
    elif reembed_card:
        vectors = vectors.copy()
        vectors[len(chunks)] = embed_texts(c.embedder, [card_text(record)], 1)[0]
    return build_docs(record, chunks, vectors, model, record.is_latest)


def settle_latest(c: Container, record: FileRecord) -> tuple[FileRecord | None, list[FileRecord]]:
    """Make ``record`` latest unless a newer version already is (records first, one transaction);
    returns the lineage's latest version afterwards and the lineage itself."""
    for _ in range(ATTEMPTS):
        try:
            lineage = c.repo.set_latest(record.tenant_id, record.lineage_id, record.file_id)
            break
        except Conflict:  # a concurrent writer changed a version: read the lineage again
            continue
    else:
        raise RetryableError(f"lineage {record.lineage_id} kept changing")
    if not lineage:
        lineage = c.repo.lineage(record.tenant_id, record.lineage_id)
    return next((v for v in lineage if v.is_latest and v.deleted_at is None), None), lineage


def settle_index(c: Container, tenant_id: str, lineage_id: str, latest: FileRecord | None) -> None:
    """Give the lineage's documents in the index the latest flag its records now hold; a version whose
    flag changes is rewritten (where the index must) from its stored chunks and vectors."""

    def docs_of(file_id: str) -> list[IndexDoc]:
        return record_docs(c, c.repo.get(tenant_id, file_id))

    c.index.set_latest(tenant_id, lineage_id, latest.file_id if latest else None, docs_of)


def run(state: PipelineState, c: Container) -> PipelineState:
    """Settle the lineage's latest version in the records, write this file's documents with that
    flag, and only when the lineage has other versions update their flags in the index too.
    (Re-running after a crash between the two writes converges: both steps are idempotent.)"""
    with stage("index", state, c) as work:
        record = work.record
        chunks, vectors = load_chunks(c, record)
        latest, lineage = settle_latest(c, record)
        work.rebase(next((v for v in lineage if v.file_id == record.file_id), record))
        is_latest = latest is not None and latest.file_id == record.file_id
        docs = build_docs(record, chunks, vectors, record.embedding_model, is_latest=is_latest)
        c.index.replace_file(record.tenant_id, record.file_id, docs)
        if record.version > 1 or not is_latest:
            settle_index(c, record.tenant_id, record.lineage_id, latest)
    return state
