"""``SqliteSearchIndex``: SQLite FTS5 (BM25) for the keyword leg, exact cosine over numpy for k-NN.

Documents (chunks and file cards) live in one table with their embedding as a float32 blob. The
keyword leg is an FTS5 ``MATCH`` joined to that table under the tenant filter. The vector leg keeps
an in-memory matrix of every embedding, reloaded when the table's generation changes (any process
writing bumps it), masks it by the same filter, then ranks exactly: at 100k × 384 a masked
matrix-vector product is a few milliseconds, and exact search has recall 1.0 by construction.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt

from semfs.domain.models import IndexDoc, IndexHit, Location, SearchFilters
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
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(
  title, filename, text, tags, content='docs', content_rowid='rid',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS docs_ai AFTER INSERT ON docs BEGIN
  INSERT INTO docs_fts(rowid, title, filename, text, tags)
  VALUES (new.rid, new.title, new.filename, new.text, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS docs_ad AFTER DELETE ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, title, filename, text, tags)
  VALUES ('delete', old.rid, old.title, old.filename, old.text, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS docs_au AFTER UPDATE OF title, filename, text, tags ON docs BEGIN
  INSERT INTO docs_fts(docs_fts, rowid, title, filename, text, tags)
  VALUES ('delete', old.rid, old.title, old.filename, old.text, old.tags);
  INSERT INTO docs_fts(rowid, title, filename, text, tags)
  VALUES (new.rid, new.title, new.filename, new.text, new.tags);
END;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO meta VALUES ('generation', 0);
"""

# BM25 column weights: title, filename, text, tags.
_BM25 = "bm25(docs_fts, 2.0, 1.0, 1.0, 1.0)"


def _fts_query(query: str) -> str | None:
    terms = query_terms(query)
    if not terms:
        return None
    # Each term quoted (so FTS5 syntax in user input is inert), OR-ed: BM25 ranks partial matches.
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms[:64])


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
    rids: npt.NDArray[np.int64]
    chunk_ids: list[str]
    file_ids: list[str]
    tenants: npt.NDArray[np.str_]
    latest: npt.NDArray[np.bool_]
    matrix: npt.NDArray[np.float32]


class SqliteSearchIndex:
    """Keyword + vector search over one SQLite file (see module docstring)."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA)
        self._vectors: _Vectors | None = None
        self._lock = threading.Lock()

    # -- writes -----------------------------------------------------------------------------------
    def _write(self, statements: Sequence[tuple[str, Sequence[object]]]) -> int:
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            changed = 0
            for sql, params in statements:
                changed += conn.execute(sql, params).rowcount
            conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return changed

    def replace_file(self, tenant_id: str, file_id: str, docs: Sequence[IndexDoc]) -> None:
        stmts: list[tuple[str, Sequence[object]]] = [
            ("DELETE FROM docs WHERE tenant_id = ? AND file_id = ?", (tenant_id, file_id))
        ]
        for d in docs:
            if d.tenant_id != tenant_id or d.file_id != file_id:
                raise ValueError("every document must belong to the file being replaced")
            emb = np.asarray(d.embedding, dtype=np.float32).tobytes() if d.embedding is not None else None
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
                        d.embedding_model,
                        emb,
                    ),
                )
            )
        self._write(stmts)

    def delete_file(self, tenant_id: str, file_id: str) -> int:
        return self._write([("DELETE FROM docs WHERE tenant_id = ? AND file_id = ?", (tenant_id, file_id))])

    def set_latest(self, tenant_id: str, lineage_id: str, latest_file_id: str | None) -> None:
        self._write(
            [
                (
                    "UPDATE docs SET is_latest = (file_id IS ?) WHERE tenant_id = ? AND lineage_id = ?",
                    (latest_file_id, tenant_id, lineage_id),
                )
            ]
        )

    def clear(self) -> None:
        self._write([("DELETE FROM docs", ())])

    # -- reads ------------------------------------------------------------------------------------
    def keyword(self, tenant_id: str, query: str, filters: SearchFilters, k: int) -> list[IndexHit]:
        match = _fts_query(query)
        if match is None:
            return []
        where, params = compile_filter(tenant_id, filters)
        sql = (
            f"SELECT d.chunk_id, d.file_id, {_BM25} AS s FROM docs_fts JOIN docs d ON d.rid = docs_fts.rowid"
            f" WHERE docs_fts MATCH ? AND {where} ORDER BY s LIMIT ?"
        )
        try:
            rows = self._db.get().execute(sql, (match, *params, k)).fetchall()
        except sqlite3.OperationalError:  # a query FTS5 cannot parse finds nothing, it is not a 500
            return []
        # FTS5's bm25() is "lower is better"; the port promises higher is better.
        return [IndexHit(chunk_id=r["chunk_id"], file_id=r["file_id"], score=-r["s"]) for r in rows]

    def _generation(self) -> int:
        row = self._db.get().execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return int(row["value"])

    def _load_vectors(self) -> _Vectors:
        gen = self._generation()
        with self._lock:
            if self._vectors is not None and self._vectors.generation == gen:
                return self._vectors
            rows = (
                self._db.get()
                .execute(
                    "SELECT rid, chunk_id, file_id, tenant_id, is_latest, embedding FROM docs"
                    " WHERE embedding IS NOT NULL ORDER BY rid"
                )
                .fetchall()
            )
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
            self._vectors = _Vectors(
                generation=gen,
                rids=np.array([r["rid"] for r in rows], dtype=np.int64),
                chunk_ids=[r["chunk_id"] for r in rows],
                file_ids=[r["file_id"] for r in rows],
                tenants=np.array([r["tenant_id"] for r in rows], dtype=np.str_),
                latest=np.array([bool(r["is_latest"]) for r in rows], dtype=np.bool_),
                matrix=matrix,
            )
            return self._vectors

    def knn(self, tenant_id: str, vector: Sequence[float], filters: SearchFilters, k: int) -> list[IndexHit]:
        vecs = self._load_vectors()
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
