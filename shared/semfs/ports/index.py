from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from semfs.domain.models import DocKind, IndexDoc, IndexHit, SearchFilters


class IndexWriter(Protocol):
    """Writes a file's documents (chunks and its card) and the flags that scope them. Only the functions
    that index (Index, reindex, re-embed, tag edits, deletes) need it; every write is per file."""

    def replace_file(self, tenant_id: str, file_id: str, docs: Sequence[IndexDoc]) -> None:
        """Atomically replace every document of ``file_id`` by ``docs`` (delete-then-upsert by file id).
        Idempotent. Raises ``IndexUnavailable`` on transient failure."""
        ...

    def replace_files(self, files: Sequence[tuple[str, str, Sequence[IndexDoc]]]) -> None:
        """``replace_file`` for each ``(tenant_id, file_id, docs)``, written together where the index
        can (bulk loads: evaluation, reindex). Every file is validated before anything is written."""
        ...

    def delete_file(self, tenant_id: str, file_id: str) -> int:
        """Remove every document of ``file_id``; returns how many went. Idempotent."""
        ...

    def forget_tenant(self, tenant_id: str) -> int:
        """Remove every document of the tenant, and whatever the index keeps of them beyond its documents
        where it can (segment files, vector graphs); returns how many documents went. Idempotent."""
        ...

    def set_latest(
        self,
        tenant_id: str,
        lineage_id: str,
        latest_file_id: str | None,
        docs_of: Callable[[str], Sequence[IndexDoc]],
    ) -> None:
        """Mark ``latest_file_id`` latest and every other version of the lineage not latest. An index that
        cannot change a flag in place rewrites each file whose flag changes from ``docs_of(file_id)``: its
        documents with the flag the records now hold (OpenSearch keeps vectors out of ``_source``, and an
        update rebuilds a document from ``_source``, so a partial update would drop its vector)."""
        ...

    def batch(self) -> AbstractContextManager[None]:
        """A context in which writes may be buffered and become searchable together at its end
        (bulk loads, reindex). Every write inside still follows its own contract."""
        ...

    def clear(self) -> None:
        """Drop everything (reindex starts from here)."""
        ...


class Retriever(Protocol):
    """Reads: the BM25 legs over chunks and over cards, the k-NN leg, stored documents. Every read takes
    the tenant and applies it inside the query of each leg: there is no way to search without it."""

    # whether a caller who reads only some files (``filters.readers``) gets keyword scores computed from
    # the statistics of those files alone; where not, the caller is shown ranks instead of scores
    reader_statistics: bool

    def keyword(
        self, tenant_id: str, query: str, filters: SearchFilters, k: int, kind: DocKind = "chunk"
    ) -> list[IndexHit]:
        """Top ``k`` by BM25 within the tenant and filters, best first, over chunks or over file cards
        (``kind``). The two kinds keep separate BM25 statistics; an empty card is never matched. With
        ``filters.readers`` and ``reader_statistics``, BM25's statistics are those of the documents the
        readers may see."""
        ...

    def knn(
        self, tenant_id: str, vector: Sequence[float], filters: SearchFilters, k: int, model: str | None = None
    ) -> list[IndexHit]:
        """Top ``k`` by cosine similarity within the tenant and filters (filter applied before
        ranking, so a narrow scope still fills ``k``), best first. With ``model``, answers only if the
        searchable vectors are that model's (else ``[]``): never compares vectors of two models."""
        ...

    def hybrid_legs(
        self, tenant_id: str, query: str, vector: Sequence[float], filters: SearchFilters, k: int, cards: bool
    ) -> list[list[IndexHit]] | None:
        """The hybrid search's legs — ``knn``, chunk ``keyword`` and (with ``cards``) card ``keyword`` —
        fetched in one round trip where the index is remote (OpenSearch ``_msearch``), or ``None`` where
        calling them one by one costs nothing (the caller then does). The caller fuses them: fusion is
        per file and the same for every backend, so no index-side fusion is used. The tenant scope is
        inside every leg."""
        ...

    def get_docs(self, tenant_id: str, chunk_ids: Sequence[str]) -> dict[str, IndexDoc]:
        """The stored documents (without embeddings) for these ids within the tenant."""
        ...

    def file_ids(self, tenant_id: str | None = None, *, after: str | None = None, until: str | None = None) -> set[str]:
        """Ids of files with at least one document, within ``after < id <= until`` when given (the
        reconcile sweep reads the index a page of records at a time)."""
        ...

    def active_model(self) -> str | None:
        """The embedding model whose vectors are searchable (``None`` before the first vector)."""
        ...


class VectorMigration(Protocol):
    """A model switch without downtime: vectors of the next model staged beside the searchable ones,
    searched on their own (new-files-only mode), and made searchable in one step."""

    def knn_staged(
        self, tenant_id: str, vector: Sequence[float], filters: SearchFilters, k: int, model: str
    ) -> list[IndexHit]:
        """Like ``knn``, over the vectors staged for ``model`` (the new-files-only re-embed mode)."""
        ...

    def stage_vectors(self, tenant_id: str, file_id: str, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Store vectors of another model for these chunk ids beside the active ones, unsearchable
        until ``switch_model``. Idempotent per (chunk, model): overlapping runs write each once."""
        ...

    def staged_file_ids(
        self, model: str, tenant_id: str | None = None, *, after: str | None = None, until: str | None = None
    ) -> set[tuple[str, str]]:
        """``(tenant_id, file_id)`` of every file with vectors staged for ``model`` (in one tenant and
        ``after < id <= until`` when given: the re-embed walk asks a page at a time)."""
        ...

    def switch_model(self, model: str) -> None:
        """Atomically make ``model``'s staged vectors the searchable ones and drop the others."""
        ...


class SearchIndex(IndexWriter, Retriever, VectorMigration, Protocol):
    """Chunks and file cards, searchable by keyword (BM25) and by vector (k-NN): every capability, as the
    container holds it. Each capability has its own contract suite (``tests/contract/test_search_index.py``),
    run on every adapter."""
