"""What the stages, maintenance and the catalogue do to a file's stored document: the keys of its blobs, its
extracted text and chunks, the texts it embeds (chunks and the file card), the index documents built from
them, and settling which version of a lineage is the latest in the index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.domain.access import readers_of
from semfs.domain.errors import NotFound
from semfs.domain.models import ExtractedDocument, FileRecord

if TYPE_CHECKING:
    from semfs.ports import Container
import io
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from semfs.domain.models import Chunk, utcnow

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from semfs.ports import Container, Embedder
from semfs.domain.errors import Conflict, RetryableError
from semfs.domain.ids import card_id, chunk_id, notes_id
from semfs.domain.models import IndexDoc, Location
from semfs.pipeline.record_update import ATTEMPTS, update

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from semfs.ports import Container


UPLOAD_PREFIX = "uploads/"  # a client's upload (S3: an object under uploads/{tenant}/ starts ingestion)
INBOUND_PREFIX = "inbound/raw/"  # SES stores each received message here
DERIVED_PREFIX = "derived/"  # what the stages made of a file: derived/{tenant}/{file}/…
CONTENT_PREFIX = "content/"  # original bytes, stored once per tenant: content/{tenant}/…


def derived_key(tenant_id: str, file_id: str, name: str) -> str:
    """Deterministic keys for stage artifacts, under a prefix that triggers nothing."""
    return f"{DERIVED_PREFIX}{tenant_id}/{file_id}/{name}"


def content_key(tenant_id: str, sha256: str) -> str:
    """Content-addressed original bytes: identical bytes in a tenant are stored once."""
    return f"{CONTENT_PREFIX}{tenant_id}/{sha256[:2]}/{sha256}"


def load_document(c: Container, record: FileRecord) -> ExtractedDocument:
    """The stored extraction of ``record`` (``NotFound`` before Extract has written it)."""
    if record.text_key is None:
        raise NotFound(f"file {record.file_id} has no extracted text")
    return ExtractedDocument.model_validate_json(c.blobs.get(record.text_key))


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
    summary, the short message it was mailed with, tags and people's notes on it — so a file is found by
    what it is about and what was said about it."""
    tags = ", ".join(record.all_tags)
    kind = KIND_WORDS.get(record.mime_type)
    parts = (
        kind,
        record.title,
        record.summary,
        mailed_with(record),
        f"Tags: {tags}" if tags else "",
        notes_text(record),
    )
    return "\n".join(x for x in parts if x)


def mailed_with(record: FileRecord) -> str:
    """The short body of the mail a file was attached to ("Please pay by Friday."), as a line, or ""."""
    body = record.provenance.get("body")
    return f"Sent with the message: {body}" if isinstance(body, str) and body else ""


def notes_text(record: FileRecord) -> str:
    """People's notes on the file as text the indexes hold, one line each."""
    return "\n".join(f"Note: {n.text}" for n in record.notes)


def has_card(record: FileRecord) -> bool:
    """Whether the file's card says more than its title — a summary, tags or its kind. Every chunk
    already carries the title (its field, and the head of its embedding text), so a title-only card
    only adds a second, shorter copy that competes with the chunks (SciFact, untitled corpora)."""
    return bool(record.summary or record.all_tags or record.notes or record.mime_type in KIND_WORDS)


def embed_texts(
    embedder: Embedder, texts: Sequence[str], batch: int, deadline: float | None = None
) -> npt.NDArray[np.float32]:
    """The texts' vectors, ``batch`` a call. With a ``deadline`` (epoch seconds: the file's budget) the batches
    stop once it has passed, after the first: the vectors of a prefix of ``texts`` come back."""
    import time

    import numpy as np  # imported on use: API-only cold starts never load it

    rows: list[list[float]] = []
    for i in range(0, len(texts), batch):
        if i and deadline is not None and time.time() > deadline:
            break
        rows.extend(embedder.embed_documents(list(texts[i : i + batch])))
    return np.asarray(rows, dtype=np.float32).reshape(len(rows), embedder.dim)


def vectors_to_bytes(vectors: npt.NDArray[np.float32]) -> bytes:
    import numpy as np

    buf = io.BytesIO()
    np.save(buf, vectors, allow_pickle=False)
    return buf.getvalue()


def vectors_from_bytes(data: bytes) -> npt.NDArray[np.float32]:
    import numpy as np

    return np.load(io.BytesIO(data), allow_pickle=False).astype(np.float32)  # type: ignore[no-any-return]


def build_docs(
    record: FileRecord,
    chunks: list[Chunk],
    vectors: npt.NDArray[np.float32],
    model: str | None,
    is_latest: bool,
    keyword_chunks: Sequence[Chunk] = (),
) -> list[IndexDoc]:
    """Index documents for one file: one per chunk plus the file card (the last vector row) when it
    says more than the title (``has_card``); ``vectors`` may stop before the card row. ``keyword_chunks``
    (those past the embedding cap) become chunks without a vector: found by their words only."""
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
        "readers": list(readers_of(record.readers)),
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
    keyword_only = {**common, "embedding_model": None}  # no vector: a model switch has nothing to stage
    docs += [
        IndexDoc(chunk_id=chunk_id(record.file_id, ch.n), text=ch.text, location=ch.location, **keyword_only)
        for ch in keyword_chunks
    ]
    said = "\n".join(x for x in (mailed_with(record), notes_text(record)) if x)
    if said:  # notes and a mail's short body: found by their words among the chunks, by meaning through the card
        where = Location(section="Notes" if record.notes else "Message")
        docs.append(IndexDoc(chunk_id=notes_id(record.file_id), text=said, location=where, **keyword_only))
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
    chunks = chunks_from_bytes(c.blobs.get(record.chunks_key))
    vectors = vectors_from_bytes(c.blobs.get(derived_key(record.tenant_id, record.file_id, "vectors.npy")))
    return chunks, vectors


KEYWORD_CHUNKS = "keyword-chunks.json"


def chunks_to_bytes(chunks: Sequence[Chunk]) -> bytes:
    """A derived chunk list as stored (``chunks.json``, ``keyword-chunks.json``)."""
    return json.dumps([ch.model_dump(mode="json") for ch in chunks]).encode("utf-8")


def chunks_from_bytes(data: bytes) -> list[Chunk]:
    return [Chunk.model_validate(x) for x in json.loads(data)]


def store_keyword_chunks(c: Container, record: FileRecord, chunks: Sequence[Chunk]) -> None:
    """Keep the chunks past the embedding cap beside the embedded ones (``FileRecord.keyword_chunks``)."""
    key = derived_key(record.tenant_id, record.file_id, KEYWORD_CHUNKS)
    if chunks:
        c.blobs.put(key, chunks_to_bytes(chunks))
    elif record.keyword_chunks:
        c.blobs.delete(key)


def load_keyword_chunks(c: Container, record: FileRecord) -> list[Chunk]:
    if not record.keyword_chunks:
        return []
    return chunks_from_bytes(c.blobs.get(derived_key(record.tenant_id, record.file_id, KEYWORD_CHUNKS)))


def index_record(c: Container, record: FileRecord, reembed_card: bool = False) -> None:
    """(Re)write one indexed record's documents from its stored chunks and vectors. Re-embeds when
    the stored vectors are from another model (or only the card, when asked)."""
    c.index.replace_file(record.tenant_id, record.file_id, rebuild_index_docs(c, record, reembed_card))


def rebuild_index_docs(c: Container, record: FileRecord, reembed_card: bool = False) -> list[IndexDoc]:
    """An indexed record's index documents, rebuilt from its stored chunks and vectors (see ``index_record``).
    Not only a read: vectors from another model (or missing ones) are embedded again, and the record saved
    with the model that embedded them; ``reembed_card`` embeds the card again (its title or tags changed)."""
    chunks, vectors = load_chunks(c, record)
    model = record.embedding_model
    if model != c.embedder.model or vectors.shape[0] != len(chunks) + 1:
        texts = [chunk_embedding_text(record.title, ch) for ch in chunks] + [card_text(record)]
        vectors = embed_texts(c.embedder, texts, c.settings.embedding.batch_size)
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
    return build_docs(record, chunks, vectors, model, record.is_latest, load_keyword_chunks(c, record))


def follow_lineage(c: Container, tenant_id: str, named: FileRecord) -> tuple[FileRecord, int]:
    """Where a new version of ``named``'s lineage goes, whichever of its versions was named (register's
    ``previous_version_id``, ``link_version``'s target): after the lineage's newest version not in the
    trash, with a number no version has had (one in the trash keeps its own, and may come back). An older
    version named never forks the lineage into two "version 2"s."""
    lineage = c.repo.lineage(tenant_id, named.lineage_id) or [named]
    live = [v for v in lineage if v.deleted_at is None] or lineage
    return max(live, key=lambda v: v.version), max(v.version for v in lineage) + 1


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
        return rebuild_index_docs(c, c.repo.get(tenant_id, file_id))

    c.index.set_latest(tenant_id, lineage_id, latest.file_id if latest else None, docs_of)
