"""``LocalSearchIndex``: the embedded index — SQLite holds the documents and their vectors,
tantivy ranks by BM25, and an exact cosine scan over an in-memory matrix ranks by vector.

SQLite is the index's own source of truth (one transaction per file replace); the tantivy index
beside it is derived: written right after each SQLite commit, and rebuilt from SQLite whenever the
two disagree (a crash between the commits). The keyword leg puts the tenant and every filter inside
the tantivy query (block-max WAND keeps it ~1 ms at 100k chunks, where SQLite FTS5 scored every
matching row and took ~60 ms). The vector leg reloads its matrix when the SQLite generation changes
(any process writing bumps it), masks it by the same filter, and ranks exactly: recall 1.0 by
construction and a few milliseconds at 100k × 384.
"""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from semfs.domain.errors import IndexUnavailable
from semfs.domain.models import IndexDoc, IndexHit, Location, SearchFilters
from semfs.domain.ranking import FIELD_BOOSTS
from semfs.domain.text import query_terms

from .sqlite_util import SqliteConnections

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
  rid INTEGER PRIMARY KEY,
  chunk_id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  file_id TEXT NOT NULL,
  lineage_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  is_latest INTEGER NOT NULL,
  thread_id TEXT,
  source_type TEXT NOT NULL,
  mime_type TEXT NOT NULL,
  filename TEXT NOT NULL,
  title TEXT NOT NULL,
  text TEXT NOT NULL,
  tags TEXT NOT NULL,
  contact_ids TEXT NOT NULL,
  location TEXT NOT NULL,
  created_at TEXT NOT NULL,
  embedding_model TEXT,
  embedding BLOB
);
CREATE INDEX IF NOT EXISTS docs_file ON docs(tenant_id, file_id);
CREATE INDEX IF NOT EXISTS docs_lineage ON docs(tenant_id, lineage_id);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS staged (
  rid INTEGER NOT NULL, model TEXT NOT NULL, embedding BLOB NOT NULL, PRIMARY KEY (rid, model)
);
CREATE TRIGGER IF NOT EXISTS staged_ad AFTER DELETE ON docs BEGIN
  DELETE FROM staged WHERE rid = old.rid;
END;
INSERT OR IGNORE INTO meta VALUES ('generation', 0);
INSERT OR IGNORE INTO meta VALUES ('keyword_generation', 0);
"""

_BOOSTS = FIELD_BOOSTS
_WRITER_HEAP = 50_000_000
_LOCK_RETRIES = 120  # ~1 min: a batch in another process commits (and lets go) every few seconds
_BATCH_COMMIT_S = 3.0


def _tv_query_text(query: str) -> str | None:
    """The query's terms as plain lower-case words: tantivy query syntax in user input is inert."""
    words = [w for t in query_terms(query) for w in re.sub(r"[^\w]+", " ", t).split()]
    return " ".join(words[:64]) or None


def _epoch(d: date) -> int:
    return int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp())


def compile_filter(tenant_id: str, filters: SearchFilters, alias: str = "d") -> tuple[str, list[object]]:
    """The one place a search's WHERE clause is built; the tenant condition is always first."""
    a = alias
    where = [f"{a}.tenant_id = ?"]
    params: list[object] = [tenant_id]
    if not filters.include_history:
        where.append(f"{a}.is_latest = 1")
    for tag in filters.tags:
        where.append(f"EXISTS (SELECT 1 FROM json_each({a}.tags) WHERE value = ?)")
        params.append(tag)
    if filters.source_type:
        where.append(f"{a}.source_type = ?")
        params.append(filters.source_type)
    if filters.contact_id:
        where.append(f"EXISTS (SELECT 1 FROM json_each({a}.contact_ids) WHERE value = ?)")
        params.append(filters.contact_id)
    if filters.thread_id:
        where.append(f"{a}.thread_id = ?")
        params.append(filters.thread_id)
    if filters.mime_type:
        where.append(f"{a}.mime_type = ?")
        params.append(filters.mime_type)
    if filters.date_from:
        where.append(f"{a}.created_at >= ?")
        params.append(filters.date_from.isoformat())
    if filters.date_to:
        where.append(f"{a}.created_at < ?")
        params.append((filters.date_to + timedelta(days=1)).isoformat())
    if filters.file_ids:
        where.append(f"{a}.file_id IN ({','.join('?' * len(filters.file_ids))})")
        params.extend(filters.file_ids)
    return " AND ".join(where), params


def _is_plain(filters: SearchFilters) -> bool:
    """Whether the filter is tenant + latest only (answered from in-memory columns)."""
    return filters == SearchFilters(include_history=filters.include_history)


@dataclass
class _Vectors:
    generation: int
    model: str | None
    rids: npt.NDArray[np.int64]
    chunk_ids: list[str]
    file_ids: list[str]
    tenants: npt.NDArray[np.str_]
    latest: npt.NDArray[np.bool_]
    matrix: npt.NDArray[np.float32]


class LocalSearchIndex:
    """Keyword (tantivy BM25) + vector (exact numpy) search over SQLite-held documents."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA)
        self._tv_path = path.with_suffix(".tantivy")
        self._tv: Any = None
        self._tv_generation = -1
        self._vectors: _Vectors | None = None
        self._staged_vectors: dict[str, _Vectors] = {}
        self._lock = threading.Lock()
        self._tv_lock = threading.RLock()
        self._held: Any = None  # the tantivy writer while commits are deferred
        self._batch_depth = 0
        self._last_commit = 0.0
        self._my_generation = 0  # the SQLite generation after this handle's last write

    # -- the tantivy side -------------------------------------------------------------------------
    @staticmethod
    def _schema() -> Any:
        import tantivy

        sb = tantivy.SchemaBuilder()
        sb.add_integer_field("rid", stored=True, indexed=True, fast=True)
        for raw in ("key", "tenant", "file_id", "lineage", "source_type", "thread", "mime", "tag", "contact"):
            sb.add_text_field(raw, stored=False, tokenizer_name="raw")
        sb.add_integer_field("latest", indexed=True, fast=True)
        sb.add_integer_field("created", indexed=True, fast=True)
        for text in ("title", "text"):
            sb.add_text_field(text, stored=False, tokenizer_name="en_stem")
        sb.add_text_field("filename", stored=False)
        sb.add_text_field("tags", stored=False)
        return sb.build()

    def _index(self) -> Any:
        """Open (or create) the tantivy index; rebuild it from SQLite when they disagree."""
        import tantivy

        with self._tv_lock:
            if self._tv is None:
                self._tv_path.mkdir(parents=True, exist_ok=True)
                self._tv = tantivy.Index(self._schema(), path=str(self._tv_path))
                self._tv.reload()
                self._repair_if_behind()
            gen = self._generation()
            if gen != self._tv_generation:
                self._tv.reload()
                self._tv_generation = gen
            return self._tv

    def _tv_doc(self, row: sqlite3.Row) -> Any:
        import tantivy

        return tantivy.Document(
            rid=row["rid"],
            key=f"{row['tenant_id']}\x1f{row['file_id']}",
            tenant=row["tenant_id"],
            file_id=row["file_id"],
            lineage=f"{row['tenant_id']}\x1f{row['lineage_id']}",
            source_type=row["source_type"],
            thread=row["thread_id"] or "",
            mime=row["mime_type"],
            tag=json.loads(row["tags"]) or [""],
            contact=json.loads(row["contact_ids"]) or [""],
            latest=int(row["is_latest"]),
            created=int(datetime.fromisoformat(row["created_at"]).timestamp()),
            title=row["title"],
            text=row["text"],
            filename=row["filename"],
            tags=" ".join(json.loads(row["tags"])),
        )

    def _writer(self) -> Any:
        """The single tantivy writer; another process may hold its lock for a moment."""
        import tantivy  # noqa: F401 - the writer raises tantivy's ValueError on a held lock

        for attempt in range(_LOCK_RETRIES):
            try:
                return self._tv.writer(heap_size=_WRITER_HEAP, num_threads=1)
            except ValueError:
                time.sleep(min(0.05 * (attempt + 1), 0.5))
        raise IndexUnavailable("the keyword index is locked by another writer")

    def _meta(self, key: str) -> int:
        return int(self._db.get().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0])

    def _repair_if_behind(self) -> None:
        """Rebuild the keyword index from SQLite when its last commit does not cover SQLite's latest
        write (a process died between the two) — unless another process holds the writer: that
        process is alive and will commit."""
        count = self._db.get().execute("SELECT COUNT(*) FROM docs").fetchone()[0]
        behind = self._meta("keyword_generation") != self._meta("generation")
        if not behind and self._tv.searcher().num_docs == count:
            return
        try:
            writer = self._tv.writer(heap_size=_WRITER_HEAP, num_threads=1)
        except ValueError:
            return
        generation = self._meta("generation")
        rows = self._db.get().execute("SELECT * FROM docs").fetchall()
        try:
            writer.delete_all_documents()
            for row in rows:
                writer.add_document(self._tv_doc(row))
            writer.commit()
        finally:
            writer.wait_merging_threads()
        self._tv.reload()
        self._mark_committed(generation)

    def _mark_committed(self, generation: int) -> None:
        self._db.get().execute("UPDATE meta SET value = max(value, ?) WHERE key = 'keyword_generation'", (generation,))

    def _commit_held(self) -> None:
        writer, self._held = self._held, None
        if writer is None:
            return
        try:
            writer.commit()
        finally:
            writer.wait_merging_threads()  # releases the writer lock for other processes
        self._last_commit = time.monotonic()
        self._tv.reload()
        self._mark_committed(self._my_generation)

    def _sync_tantivy(self, delete_keys: Sequence[str], rows: Sequence[sqlite3.Row], *, all_docs: bool = False) -> None:
        with self._tv_lock:
            if self._held is None:
                self._held = self._writer()
            if all_docs:
                self._held.delete_all_documents()
            for key in delete_keys:
                self._held.delete_documents_by_term("key", key)
            for row in rows:
                self._held.add_document(self._tv_doc(row))
            if self._batch_depth == 0 or time.monotonic() - self._last_commit > _BATCH_COMMIT_S:
                self._commit_held()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Defer keyword-index commits (each costs ~20 ms of fsync) to every few seconds and the end:
        for ingesting many files, reindex and evaluation. SQLite still commits per file; a crash
        inside a batch is repaired from SQLite on the next open."""
        self._index()
        with self._tv_lock:
            if self._batch_depth == 0:
                self._last_commit = time.monotonic()
            self._batch_depth += 1
        try:
            yield
        finally:
            with self._tv_lock:
                self._batch_depth -= 1
                if self._batch_depth == 0:
                    self._commit_held()

    # -- writes -----------------------------------------------------------------------------------
    def _write(self, statements: Sequence[tuple[str, Sequence[object]]]) -> int:
        # Open (and if needed repair) the keyword index before SQLite changes, so the count check
        # on open compares two stores that agree; the caller then applies the same change to it.
        self._index()
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            changed = 0
            for sql, params in statements:
                changed += conn.execute(sql, params).rowcount
            conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
            self._my_generation = int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return changed

    def _rows(self, where: str, params: Sequence[object]) -> list[sqlite3.Row]:
        return self._db.get().execute(f"SELECT * FROM docs WHERE {where}", params).fetchall()

    def replace_file(self, tenant_id: str, file_id: str, docs: Sequence[IndexDoc]) -> None:
        active = self.active_model()
        stmts: list[tuple[str, Sequence[object]]] = [
            ("DELETE FROM docs WHERE tenant_id = ? AND file_id = ?", (tenant_id, file_id))
        ]
        for d in docs:
            if d.tenant_id != tenant_id or d.file_id != file_id:
                raise ValueError("every document must belong to the file being replaced")
            emb = np.asarray(d.embedding, dtype=np.float32).tobytes() if d.embedding is not None else None
            if emb is not None and active is None:
                active = d.embedding_model
                stmts.append(("INSERT OR IGNORE INTO settings VALUES ('active_model', ?)", (active,)))
            # a vector of another model than the searchable one waits for the switch
            staged = emb if emb is not None and d.embedding_model not in (None, active) else None
            if staged is not None:
                emb = None
            stmts.append(
                (
                    "INSERT INTO docs (chunk_id, kind, file_id, lineage_id, tenant_id, version, is_latest,"
                    " thread_id, source_type, mime_type, filename, title, text, tags, contact_ids, location,"
                    " created_at, embedding_model, embedding) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        d.chunk_id,
                        d.kind,
                        d.file_id,
                        d.lineage_id,
                        d.tenant_id,
                        d.version,
                        int(d.is_latest),
                        d.thread_id,
                        d.source_type,
                        d.mime_type,
                        d.filename,
                        d.title,
                        d.text,
                        json.dumps(d.tags),
                        json.dumps(d.contact_ids),
                        d.location.model_dump_json(exclude_none=True),
                        d.created_at.isoformat(),
                        d.embedding_model if emb is not None else active,
                        emb,
                    ),
                )
            )
            if staged is not None:
                stmts.append(
                    (
                        "INSERT OR REPLACE INTO staged SELECT rid, ?, ? FROM docs WHERE chunk_id = ?",
                        (d.embedding_model, staged, d.chunk_id),
                    )
                )
        self._write(stmts)
        self._sync_tantivy(
            [f"{tenant_id}\x1f{file_id}"], self._rows("tenant_id = ? AND file_id = ?", (tenant_id, file_id))
        )

    # -- embedding models ---------------------------------------------------------------------------
    def active_model(self) -> str | None:
        row = self._db.get().execute("SELECT value FROM settings WHERE key = 'active_model'").fetchone()
        return str(row[0]) if row else None

    def stage_vectors(self, tenant_id: str, file_id: str, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        stmts: list[tuple[str, Sequence[object]]] = [
            (
                "INSERT OR REPLACE INTO staged SELECT rid, ?, ? FROM docs WHERE tenant_id = ? AND chunk_id = ?",
                (model, np.asarray(v, dtype=np.float32).tobytes(), tenant_id, chunk),
            )
            for chunk, v in vectors.items()
        ]
        self._write(stmts)

    def staged_file_ids(self, model: str) -> set[tuple[str, str]]:
        rows = self._db.get().execute(
            "SELECT DISTINCT d.tenant_id, d.file_id FROM staged s JOIN docs d ON d.rid = s.rid WHERE s.model = ?",
            (model,),
        )
        return {(r[0], r[1]) for r in rows}

    def switch_model(self, model: str) -> None:
        """In one transaction: the staged vectors of ``model`` become the searchable ones, every other
        vector leaves, and ``model`` is the active model. Searches see the old set or the new, never a mix."""
        self._write(
            [
                (
                    "UPDATE docs SET embedding_model = ?, embedding ="
                    " (SELECT s.embedding FROM staged s WHERE s.rid = docs.rid AND s.model = ?)",
                    (model, model),
                ),
                ("DELETE FROM staged WHERE model = ?", (model,)),
                ("INSERT OR REPLACE INTO settings VALUES ('active_model', ?)", (model,)),
            ]
        )

    def delete_file(self, tenant_id: str, file_id: str) -> int:
        n = self._write([("DELETE FROM docs WHERE tenant_id = ? AND file_id = ?", (tenant_id, file_id))])
        self._sync_tantivy([f"{tenant_id}\x1f{file_id}"], [])
        return n

    def set_latest(self, tenant_id: str, lineage_id: str, latest_file_id: str | None) -> None:
        self._write(
            [
                (
                    "UPDATE docs SET is_latest = (file_id IS ?) WHERE tenant_id = ? AND lineage_id = ?",
                    (latest_file_id, tenant_id, lineage_id),
                )
            ]
        )
        rows = self._rows("tenant_id = ? AND lineage_id = ?", (tenant_id, lineage_id))
        self._sync_tantivy(sorted({f"{tenant_id}\x1f{r['file_id']}" for r in rows}), rows)

    def clear(self) -> None:
        # an empty index has no searchable model: the next vectors written define it
        self._write(
            [
                ("DELETE FROM docs", ()),
                ("DELETE FROM staged", ()),
                ("DELETE FROM settings WHERE key = 'active_model'", ()),
            ]
        )
        self._sync_tantivy([], [], all_docs=True)

    # -- reads ------------------------------------------------------------------------------------
    def _tv_filter(self, tenant_id: str, filters: SearchFilters) -> list[Any]:
        """The same scope as ``compile_filter``, as tantivy clauses (the tenant always first)."""
        import tantivy

        schema = self._tv.schema
        must = [tantivy.Query.term_query(schema, "tenant", tenant_id)]
        if not filters.include_history:
            must.append(tantivy.Query.term_query(schema, "latest", 1))
        must += [tantivy.Query.term_query(schema, "tag", t) for t in filters.tags]
        for field, value in (
            ("source_type", filters.source_type),
            ("contact", filters.contact_id),
            ("thread", filters.thread_id),
            ("mime", filters.mime_type),
        ):
            if value:
                must.append(tantivy.Query.term_query(schema, field, value))
        if filters.date_from or filters.date_to:
            must.append(
                tantivy.Query.range_query(
                    schema,
                    "created",
                    tantivy.FieldType.Integer,
                    _epoch(filters.date_from) if filters.date_from else None,
                    _epoch(filters.date_to + timedelta(days=1)) if filters.date_to else None,
                    include_upper=filters.date_to is None,
                )
            )
        if filters.file_ids:
            must.append(tantivy.Query.term_set_query(schema, "file_id", list(filters.file_ids)))
        return must

    def keyword(self, tenant_id: str, query: str, filters: SearchFilters, k: int) -> list[IndexHit]:
        import tantivy

        text = _tv_query_text(query)
        if text is None:
            return []
        index = self._index()
        if self._held is not None:  # this process's own deferred writes become visible first
            with self._tv_lock:
                self._commit_held()
        try:
            parsed = index.parse_query(text, list(_BOOSTS), field_boosts=_BOOSTS)
        except ValueError:  # a query tantivy cannot parse finds nothing, it is not a 500
            return []
        clauses = [(tantivy.Occur.Must, parsed)] + [
            (tantivy.Occur.Must, q) for q in self._tv_filter(tenant_id, filters)
        ]
        searcher = index.searcher()
        hits = searcher.search(tantivy.Query.boolean_query(clauses), k).hits
        if not hits:
            return []
        scored = {searcher.doc(addr)["rid"][0]: float(score) for score, addr in hits}
        rows = (
            self._db.get()
            .execute(
                "SELECT rid, chunk_id, file_id FROM docs WHERE tenant_id = ? AND rid IN "
                f"({','.join('?' * len(scored))})",
                (tenant_id, *scored),
            )
            .fetchall()
        )
        # rows missing from SQLite (a crash between the two commits) are dropped, never shown
        out = [IndexHit(chunk_id=r["chunk_id"], file_id=r["file_id"], score=scored[r["rid"]]) for r in rows]
        return sorted(out, key=lambda h: -h.score)

    def _generation(self) -> int:
        row = self._db.get().execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row["value"])

    def _load_vectors(self, staged_model: str | None = None) -> _Vectors:
        """The searchable vectors (the active model's), or with ``staged_model`` those staged for it."""
        gen = self._generation()
        with self._lock:
            cached = self._vectors if staged_model is None else self._staged_vectors.get(staged_model)
            if cached is not None and cached.generation == gen:
                return cached
            if staged_model is None:
                sql = (
                    "SELECT rid, chunk_id, file_id, tenant_id, is_latest, embedding FROM docs"
                    " WHERE embedding IS NOT NULL ORDER BY rid"
                )
                params: tuple[str, ...] = ()
            else:
                sql = (
                    "SELECT d.rid, d.chunk_id, d.file_id, d.tenant_id, d.is_latest, s.embedding AS embedding"
                    " FROM staged s JOIN docs d ON d.rid = s.rid WHERE s.model = ? ORDER BY d.rid"
                )
                params = (staged_model,)
            rows = self._db.get().execute(sql, params).fetchall()
            blobs = [r["embedding"] for r in rows]
            dims = {len(b) for b in blobs}
            if len(dims) > 1:  # mixed dimensions mid-migration: keep the majority dimension only
                major = max(dims, key=lambda d: sum(1 for b in blobs if len(b) == d))
                rows = [r for r in rows if len(r["embedding"]) == major]
                blobs = [r["embedding"] for r in rows]
            matrix = (
                np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
                if blobs
                else np.zeros((0, 0), dtype=np.float32)
            )
            vectors = _Vectors(
                generation=gen,
                model=self.active_model() if staged_model is None else staged_model,
                rids=np.array([r["rid"] for r in rows], dtype=np.int64),
                chunk_ids=[r["chunk_id"] for r in rows],
                file_ids=[r["file_id"] for r in rows],
                tenants=np.array([r["tenant_id"] for r in rows], dtype=np.str_),
                latest=np.array([bool(r["is_latest"]) for r in rows], dtype=np.bool_),
                matrix=matrix,
            )
            if staged_model is None:
                self._vectors = vectors
            else:
                self._staged_vectors[staged_model] = vectors
            return vectors

    def knn(
        self, tenant_id: str, vector: Sequence[float], filters: SearchFilters, k: int, model: str | None = None
    ) -> list[IndexHit]:
        vecs = self._load_vectors()
        if model is not None and vecs.model is not None and model != vecs.model:
            return []  # the query was embedded by another model than the one searched (a switch just happened)
        return self._rank(vecs, tenant_id, vector, filters, k)

    def hybrid(
        self, tenant_id: str, query: str, vector: Sequence[float], filters: SearchFilters, k: int
    ) -> list[IndexHit] | None:
        return None  # no native fusion: the caller fuses the two legs with the shared RRF

    def knn_staged(
        self, tenant_id: str, vector: Sequence[float], filters: SearchFilters, k: int, model: str
    ) -> list[IndexHit]:
        return self._rank(self._load_vectors(staged_model=model), tenant_id, vector, filters, k)

    def _rank(
        self, vecs: _Vectors, tenant_id: str, vector: Sequence[float], filters: SearchFilters, k: int
    ) -> list[IndexHit]:
        q = np.asarray(vector, dtype=np.float32)
        if vecs.matrix.shape[0] == 0 or vecs.matrix.shape[1] != q.shape[0]:
            return []
        mask = vecs.tenants == tenant_id
        if not filters.include_history:
            mask &= vecs.latest
        if not _is_plain(filters):
            where, params = compile_filter(tenant_id, filters)
            rids = [r[0] for r in self._db.get().execute(f"SELECT d.rid FROM docs d WHERE {where}", params)]
            mask &= np.isin(vecs.rids, np.array(rids, dtype=np.int64))
        allowed = int(mask.sum())
        if allowed == 0:
            return []
        # One product over the whole matrix, then mask: no copy of the allowed rows per query.
        scores = np.where(mask, vecs.matrix @ q, -np.inf)
        top = min(k, allowed)
        part = np.argpartition(-scores, top - 1)[:top]
        order = part[np.argsort(-scores[part], kind="stable")]
        return [IndexHit(chunk_id=vecs.chunk_ids[i], file_id=vecs.file_ids[i], score=float(scores[i])) for i in order]

    def get_docs(self, tenant_id: str, chunk_ids: Sequence[str]) -> dict[str, IndexDoc]:
        if not chunk_ids:
            return {}
        out: dict[str, IndexDoc] = {}
        conn = self._db.get()
        ids = list(chunk_ids)
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            rows = conn.execute(
                "SELECT * FROM docs WHERE tenant_id = ? AND chunk_id IN (" + ",".join("?" * len(part)) + ")",
                (tenant_id, *part),
            ).fetchall()
            for r in rows:
                out[r["chunk_id"]] = IndexDoc(
                    chunk_id=r["chunk_id"],
                    kind=r["kind"],
                    file_id=r["file_id"],
                    lineage_id=r["lineage_id"],
                    tenant_id=r["tenant_id"],
                    version=r["version"],
                    is_latest=bool(r["is_latest"]),
                    thread_id=r["thread_id"],
                    source_type=r["source_type"],
                    mime_type=r["mime_type"],
                    filename=r["filename"],
                    title=r["title"],
                    text=r["text"],
                    tags=json.loads(r["tags"]),
                    contact_ids=json.loads(r["contact_ids"]),
                    location=Location.model_validate_json(r["location"]),
                    created_at=datetime.fromisoformat(r["created_at"]),
                    embedding_model=r["embedding_model"],
                )
        return out

    def file_ids(self, tenant_id: str | None = None) -> set[str]:
        sql = "SELECT DISTINCT file_id FROM docs"
        params: tuple[str, ...] = ()
        if tenant_id is not None:
            sql, params = sql + " WHERE tenant_id = ?", (tenant_id,)
        return {r[0] for r in self._db.get().execute(sql, params)}
