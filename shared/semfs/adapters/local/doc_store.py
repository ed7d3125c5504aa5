"""``DocStore``: the local index's source of truth — every chunk and card, its fields and its vector,
in SQLite.

The keyword index (tantivy) and the vector index (usearch) beside it are derived from this store
and rebuilt from it when missing or behind. Row ids (``rid``) are never reused (AUTOINCREMENT), so a
derived index can name a row by its rid and learn that the row is gone, never that it became
another row. Every write bumps ``generation`` in the same transaction; readers in other processes
compare it to know when to look again.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from semfs.domain.models import IndexDoc, Location

if TYPE_CHECKING:  # numpy is imported where vectors are read or written: `semfs ls` never loads it
    import numpy as np
    import numpy.typing as npt
from semfs.domain.scope import DOC_FIELDS, AnyOf, Clause, Term

from .sqlite_util import SqliteConnections

_COLUMNS = """
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
  embedding BLOB,
  readers TEXT NOT NULL DEFAULT '["tenant"]'
"""

# How many documents each tenant's keyword index of each kind should hold, kept by SQLite itself: a fresh
# process compares it with tantivy's count when it opens the index (O(1)), where a COUNT(*) over the
# tenant's rows took 2.6-3.6 s of the first keyword query at 1M chunks (issue 33)
_COUNTED = "(k.kind = 'chunk' OR (k.kind = 'card' AND k.text != ''))"
_COUNTS = f"""
CREATE TABLE IF NOT EXISTS doc_counts (
  tenant_id TEXT NOT NULL, kind TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (tenant_id, kind)
);
CREATE TRIGGER IF NOT EXISTS docs_count_ai AFTER INSERT ON docs WHEN {_COUNTED.replace("k.", "new.")} BEGIN
  INSERT INTO doc_counts VALUES (new.tenant_id, new.kind, 1) ON CONFLICT (tenant_id, kind) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER IF NOT EXISTS docs_count_ad AFTER DELETE ON docs WHEN {_COUNTED.replace("k.", "old.")} BEGIN
  UPDATE doc_counts SET n = n - 1 WHERE tenant_id = old.tenant_id AND kind = old.kind;
END;
CREATE TRIGGER IF NOT EXISTS docs_count_au AFTER UPDATE OF kind, text, tenant_id ON docs BEGIN
  UPDATE doc_counts SET n = n - 1
    WHERE {_COUNTED.replace("k.", "old.")} AND tenant_id = old.tenant_id AND kind = old.kind;
  INSERT INTO doc_counts SELECT new.tenant_id, new.kind, 1 WHERE {_COUNTED.replace("k.", "new.")}
    ON CONFLICT (tenant_id, kind) DO UPDATE SET n = n + 1;
END;
"""

# Who reads each row, one (tenant, token, rid) each, kept by SQLite itself: a caller who may read a few of
# a tenant's rows finds them through this index (the k-NN leg ranks them exactly) instead of parsing every
# row's readers (domain/access.py)
_READERS_INDEX = """
CREATE TABLE IF NOT EXISTS doc_readers (
  tenant_id TEXT NOT NULL, token TEXT NOT NULL, rid INTEGER NOT NULL, PRIMARY KEY (tenant_id, token, rid)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS doc_readers_rid ON doc_readers(rid);
CREATE TRIGGER IF NOT EXISTS docs_readers_ai AFTER INSERT ON docs BEGIN
  INSERT OR IGNORE INTO doc_readers SELECT new.tenant_id, j.value, new.rid FROM json_each(new.readers) j;
END;
CREATE TRIGGER IF NOT EXISTS docs_readers_ad AFTER DELETE ON docs BEGIN
  DELETE FROM doc_readers WHERE rid = old.rid;
END;
CREATE TRIGGER IF NOT EXISTS docs_readers_au AFTER UPDATE OF readers, tenant_id ON docs BEGIN
  DELETE FROM doc_readers WHERE rid = old.rid;
  INSERT OR IGNORE INTO doc_readers SELECT new.tenant_id, j.value, new.rid FROM json_each(new.readers) j;
END;
"""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS docs (rid INTEGER PRIMARY KEY AUTOINCREMENT, {_COLUMNS});
CREATE INDEX IF NOT EXISTS docs_file ON docs(tenant_id, file_id);
CREATE INDEX IF NOT EXISTS docs_lineage ON docs(tenant_id, lineage_id);
CREATE INDEX IF NOT EXISTS docs_tenant_rid ON docs(tenant_id, rid);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS staged (
  rid INTEGER NOT NULL, model TEXT NOT NULL, embedding BLOB NOT NULL, PRIMARY KEY (rid, model)
);
CREATE TRIGGER IF NOT EXISTS staged_ad AFTER DELETE ON docs BEGIN
  DELETE FROM staged WHERE rid = old.rid;
END;
{_COUNTS}
{_READERS_INDEX}
INSERT OR IGNORE INTO meta VALUES ('generation', 0);
INSERT OR IGNORE INTO meta VALUES ('keyword_generation', 0);
INSERT OR IGNORE INTO meta VALUES ('vector_epoch', 0);
"""

_INSERT = (
    "INSERT INTO docs (chunk_id, kind, file_id, lineage_id, tenant_id, version, is_latest, thread_id, source_type,"
    " mime_type, filename, title, text, tags, contact_ids, location, created_at, embedding_model, embedding,"
    " readers) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


def tenant_generation_key(tenant_id: str) -> str:
    """The meta row counting the writes that changed one tenant's documents."""
    return f"generation:{tenant_id}"


# the documents a keyword index of each kind holds: every chunk, and the file cards that have text
_KIND_SQL = {"chunk": "kind = 'chunk'", "card": "kind = 'card' AND text != ''"}
_BUMP_EPOCH = "UPDATE meta SET value = value + 1 WHERE key = 'vector_epoch'"

# list-valued fields are JSON arrays, searched with json_each
_JSON_LISTS = {"tag", "contact", "reader"}

Statement = tuple[str, Sequence[object]]
_PRAGMAS = ("cache_size=-32768",)


def compile_sql(clauses: Sequence[Clause], alias: str = "d") -> tuple[str, list[object]]:
    """The scope as a WHERE clause over ``docs`` (the tenant condition first, as the scope has it)."""
    where: list[str] = []
    params: list[object] = []
    for c in clauses:
        col = f"{alias}.{DOC_FIELDS[c.field]}"
        if isinstance(c, Term) and c.field in _JSON_LISTS:
            where.append(f"EXISTS (SELECT 1 FROM json_each({col}) WHERE value = ?)")
            params.append(c.value)
        elif isinstance(c, Term):
            where.append(f"{col} = ?")
            params.append(int(c.value) if isinstance(c.value, bool) else c.value)
        elif isinstance(c, AnyOf) and c.field == "reader":  # through the readers index: no row's JSON parsed
            where.append(
                f"EXISTS (SELECT 1 FROM doc_readers r WHERE r.tenant_id = {alias}.tenant_id AND r.rid = {alias}.rid"
                " AND r.token IN (SELECT value FROM json_each(?)))"
            )
            params.append(json.dumps(list(c.values)))
        elif isinstance(c, AnyOf) and c.field in _JSON_LISTS:  # the list holds one of the values
            where.append(f"EXISTS (SELECT 1 FROM json_each({col}) WHERE value IN (SELECT value FROM json_each(?)))")
            params.append(json.dumps(list(c.values)))
        elif isinstance(c, AnyOf):
            where.append(f"{col} IN (SELECT value FROM json_each(?))")  # one variable, however many values
            params.append(json.dumps(list(c.values)))
        else:
            if c.first:
                where.append(f"{col} >= ?")
                params.append(c.first.isoformat())
            if c.end:
                where.append(f"{col} < ?")
                params.append(c.end.isoformat())
    return " AND ".join(where) or "1", params


def _migrate(conn: sqlite3.Connection) -> None:
    """Bring a store written by an earlier semfs up to date, keeping every row and its rid."""
    _migrate_readers(conn)
    _migrate_rids(conn)
    _migrate_counts(conn)
    _migrate_reader_index(conn)


def _migrate_reader_index(conn: sqlite3.Connection) -> None:
    """A store written before ``doc_readers``: fill it once from every row, in the transaction that makes
    its triggers (so no write falls between the two)."""
    has = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name IN ('docs', 'doc_readers')")}
    if has != {"docs"}:
        return
    conn.executescript(
        f"""
        BEGIN IMMEDIATE;
        {_READERS_INDEX}
        INSERT OR IGNORE INTO doc_readers SELECT d.tenant_id, j.value, d.rid FROM docs d, json_each(d.readers) j;
        COMMIT;
        """
    )


def _migrate_readers(conn: sqlite3.Connection) -> None:
    """A store written before access lists: its documents are the whole tenant's (``domain/access.py``).
    Adding a column with a default rewrites nothing; the keyword indexes learn the field when they are
    next rebuilt (``keyword_index.SCHEMA_VERSION``)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'docs'").fetchone()
    if row is None or "readers" in row[0]:
        return
    conn.execute("""ALTER TABLE docs ADD COLUMN readers TEXT NOT NULL DEFAULT '["tenant"]'""")


def _migrate_counts(conn: sqlite3.Connection) -> None:
    """A store written before ``doc_counts``: count its documents once, and keep counting from here (in
    one transaction, so no write falls between the count and the triggers; a second process migrating
    at the same moment waits for it and then adds nothing)."""
    has = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE name IN ('docs', 'doc_counts')")}
    if has != {"docs"}:
        return
    conn.executescript(
        f"""
        BEGIN IMMEDIATE;
        {_COUNTS}
        INSERT OR IGNORE INTO doc_counts SELECT k.tenant_id, k.kind, COUNT(*) FROM docs k WHERE {_COUNTED}
          GROUP BY k.tenant_id, k.kind;
        COMMIT;
        """
    )


def _migrate_rids(conn: sqlite3.Connection) -> None:
    """Give a store written before row ids were AUTOINCREMENT a never-reused rid sequence, keeping
    every row and its rid (the derived indexes name rows by rid)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'docs'").fetchone()
    if row is None or "AUTOINCREMENT" in row[0].upper():
        return
    conn.executescript(
        f"""
        BEGIN IMMEDIATE;
        CREATE TABLE docs_new (rid INTEGER PRIMARY KEY AUTOINCREMENT, {_COLUMNS});
        INSERT INTO docs_new SELECT * FROM docs;
        DROP TRIGGER IF EXISTS staged_ad;
        DROP TABLE docs;
        ALTER TABLE docs_new RENAME TO docs;
        COMMIT;
        """
    )


@dataclass(frozen=True)
class VectorRows:
    """Vectors with the ids that name their rows."""

    rids: npt.NDArray[np.int64]
    chunk_ids: list[str]
    file_ids: list[str]
    matrix: npt.NDArray[np.float32]

    @classmethod
    def of(cls, rows: Sequence[sqlite3.Row], dim: int | None = None) -> VectorRows:
        import numpy as np

        blobs = [r["embedding"] for r in rows]
        if dim is None and blobs:  # mixed dimensions mid-migration: keep the majority dimension only
            sizes = [len(b) for b in blobs]
            dim = max(set(sizes), key=sizes.count) // 4
        keep = [i for i, b in enumerate(blobs) if dim is not None and len(b) == dim * 4]
        matrix = (
            np.frombuffer(b"".join(blobs[i] for i in keep), dtype=np.float32).reshape(len(keep), -1)
            if keep
            else np.zeros((0, dim or 0), dtype=np.float32)
        )
        return cls(
            rids=np.array([rows[i]["rid"] for i in keep], dtype=np.int64),
            chunk_ids=[rows[i]["chunk_id"] for i in keep],
            file_ids=[rows[i]["file_id"] for i in keep],
            matrix=matrix,
        )

    def __len__(self) -> int:
        return len(self.chunk_ids)


class DocStore:
    """SQLite tables of the local index: documents, staged vectors, the active model, generations."""

    def __init__(self, path: Path) -> None:
        # a 32 MB page cache; no mmap: the scattered rows that rescoring reads would count in RSS
        self._db = SqliteConnections(path, _SCHEMA, migrate=_migrate, pragmas=_PRAGMAS)
        self.last_generation = 0  # the generation after this handle's last write
        self.last_tenant_generation: dict[str, int] = {}  # each tenant's, after this handle's last write to it

    def conn(self) -> sqlite3.Connection:
        return self._db.get()

    # -- generations ----------------------------------------------------------------------------
    def meta(self, key: str) -> int:
        row = self.conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return int(row[0]) if row else 0

    def generation(self) -> int:
        return self.meta("generation")

    def mark_keyword_committed(self, generation: int, key: str = "keyword_generation") -> None:
        self.conn().execute(
            "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)",
            (key, generation),
        )

    # -- writes ---------------------------------------------------------------------------------
    def write(self, statements: Iterable[Statement], tenants: Iterable[str] = ()) -> int:
        """Run ``statements`` in one transaction that also bumps the generation, and the generation of
        each of ``tenants`` (the tenants whose documents the statements change); rows changed."""
        conn = self.conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            changed = 0
            for sql, params in statements:
                changed += conn.execute(sql, params).rowcount
            conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'generation'")
            self.last_generation = int(conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()[0])
            for tenant in sorted(set(tenants)):
                key = tenant_generation_key(tenant)
                conn.execute("INSERT INTO meta VALUES (?, 1) ON CONFLICT (key) DO UPDATE SET value = value + 1", (key,))
                self.last_tenant_generation[tenant] = int(
                    conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0]
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return changed

    @staticmethod
    def replace_statements(
        tenant_id: str, file_id: str, docs: Sequence[IndexDoc], active: str | None
    ) -> tuple[list[Statement], str | None]:
        """Delete-then-insert ``file_id``'s documents, and the searchable model after them. A vector
        of another model than the searchable one is staged beside its row and waits for the switch;
        the first vector ever written names the searchable model."""
        import numpy as np

        stmts: list[Statement] = [("DELETE FROM docs WHERE tenant_id = ? AND file_id = ?", (tenant_id, file_id))]
        for d in docs:
            if d.tenant_id != tenant_id or d.file_id != file_id:
                raise ValueError("every document must belong to the file being replaced")
            emb = np.asarray(d.embedding, dtype=np.float32).tobytes() if d.embedding is not None else None
            if emb is not None and active is None:
                active = d.embedding_model
                stmts.append(("INSERT OR IGNORE INTO settings VALUES ('active_model', ?)", (active,)))
            staged = emb if emb is not None and d.embedding_model not in (None, active) else None
            if staged is not None:
                emb = None
            stmts.append((_INSERT, _doc_params(d, d.embedding_model if emb is not None else active, emb)))
            if staged is not None:
                stmts.append(
                    (
                        "INSERT OR REPLACE INTO staged SELECT rid, ?, ? FROM docs WHERE chunk_id = ?",
                        (d.embedding_model, staged, d.chunk_id),
                    )
                )
        return stmts, active

    def replace_files(self, files: Sequence[tuple[str, str, Sequence[IndexDoc]]]) -> None:
        """Replace several files' documents in one transaction (one fsync for a whole bulk batch)."""

        active = self.active_model()
        stmts: list[Statement] = []
        for tenant_id, file_id, docs in files:  # all validated before the transaction starts
            more, active = self.replace_statements(tenant_id, file_id, docs, active)
            stmts += more
        self.write(stmts, tenants=[t for t, _, _ in files])

    def delete_file(self, tenant_id: str, file_id: str) -> int:
        """Remove one file's documents (and, by trigger, their staged vectors); rows removed."""
        return self.write(
            [("DELETE FROM docs WHERE tenant_id = ? AND file_id = ?", (tenant_id, file_id))], tenants=[tenant_id]
        )

    def forget_tenant(self, tenant_id: str) -> int:
        """Every document of the tenant (and, by trigger, its staged vectors), with the freed pages
        overwritten (``secure_delete``: an erased tenant's text and vectors do not linger in the file) and
        the write-ahead log checkpointed and truncated (its frames hold the pages as they were); rows removed."""
        conn = self.conn()
        conn.execute("PRAGMA secure_delete=ON")
        try:
            gone = self.write([("DELETE FROM docs WHERE tenant_id = ?", (tenant_id,))], tenants=[tenant_id])
        finally:
            conn.execute("PRAGMA secure_delete=OFF")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return gone

    def set_latest(self, tenant_id: str, lineage_id: str, latest_file_id: str | None) -> list[sqlite3.Row]:
        """Flag ``latest_file_id``'s documents as the lineage's latest and the others' not (in place,
        nothing rewritten); the lineage's rows as they now are."""
        self.write(
            [
                (
                    "UPDATE docs SET is_latest = (file_id IS ?) WHERE tenant_id = ? AND lineage_id = ?",
                    (latest_file_id, tenant_id, lineage_id),
                )
            ],
            tenants=[tenant_id],
        )
        return self.rows("tenant_id = ? AND lineage_id = ?", (tenant_id, lineage_id))

    def clear(self) -> list[str]:
        """Every document and staged vector gone, and no searchable model: the next vectors name it.
        Returns the tenants that had documents."""
        tenants = self.tenants()
        self.write(
            [
                ("DELETE FROM docs", ()),
                ("DELETE FROM staged", ()),
                ("DELETE FROM settings WHERE key = 'active_model'", ()),
                (_BUMP_EPOCH, ()),
            ],
            tenants=tenants,
        )
        return tenants

    # -- embedding models -----------------------------------------------------------------------
    def stage_vectors(self, tenant_id: str, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Keep ``model``'s vectors beside these chunks' rows until the switch (chunks not stored are skipped)."""
        import numpy as np

        self.write(
            [
                (
                    "INSERT OR REPLACE INTO staged SELECT rid, ?, ? FROM docs WHERE tenant_id = ? AND chunk_id = ?",
                    (model, np.asarray(v, dtype=np.float32).tobytes(), tenant_id, chunk),
                )
                for chunk, v in vectors.items()
            ]
        )

    def staged_file_ids(
        self, model: str, tenant_id: str | None = None, *, after: str | None = None, until: str | None = None
    ) -> set[tuple[str, str]]:
        """(tenant, file) pairs with vectors of ``model`` staged, optionally one tenant's, in a file-id range."""
        sql = "SELECT DISTINCT d.tenant_id, d.file_id FROM staged s JOIN docs d ON d.rid = s.rid WHERE s.model = ?"
        params = [model]
        for cond, value in (("d.tenant_id = ?", tenant_id), ("d.file_id > ?", after), ("d.file_id <= ?", until)):
            if value is not None:
                sql += f" AND {cond}"
                params.append(value)
        return {(r[0], r[1]) for r in self.conn().execute(sql, params)}

    def switch_model(self, model: str) -> None:
        """In one transaction: ``model``'s staged vectors become the searchable ones, every other
        vector leaves, ``model`` is the active model, and the vector epoch moves on."""
        self.write(
            [
                (
                    "UPDATE docs SET embedding_model = ?, embedding ="
                    " (SELECT s.embedding FROM staged s WHERE s.rid = docs.rid AND s.model = ?)",
                    (model, model),
                ),
                ("DELETE FROM staged WHERE model = ?", (model,)),
                ("INSERT OR REPLACE INTO settings VALUES ('active_model', ?)", (model,)),
                (_BUMP_EPOCH, ()),
            ]
        )

    # -- reads ----------------------------------------------------------------------------------
    def kind_count(self, kind: str, tenant_id: str) -> int:
        """How many documents a tenant's keyword index of ``kind`` holds (file cards only with text): the
        count SQLite's triggers keep (``doc_counts``), read in O(1)."""
        assert kind in _KIND_SQL, kind
        sql = "SELECT n FROM doc_counts WHERE tenant_id = ? AND kind = ?"
        row = self.conn().execute(sql, (tenant_id, kind)).fetchone()
        return int(row[0]) if row else 0

    def kind_rows(self, kind: str, tenant_id: str) -> Iterator[sqlite3.Row]:
        """Every document a tenant's keyword index of ``kind`` holds, streamed (a rebuild reads them all)."""
        yield from self.conn().execute(f"SELECT * FROM docs WHERE tenant_id = ? AND {_KIND_SQL[kind]}", (tenant_id,))

    def tenants(self) -> list[str]:
        """The tenants with documents."""
        return [r[0] for r in self.conn().execute("SELECT DISTINCT tenant_id FROM docs ORDER BY 1")]

    def rows(self, where: str, params: Sequence[object]) -> list[sqlite3.Row]:
        return self.conn().execute(f"SELECT * FROM docs WHERE {where}", params).fetchall()

    def text_fields(self, rids: Sequence[int]) -> list[sqlite3.Row]:
        """The searched text fields (rid, title, text, filename, tags) of these ids, no vectors read."""
        out: list[sqlite3.Row] = []
        conn = self.conn()
        for i in range(0, len(rids), 500):
            part = [int(r) for r in rids[i : i + 500]]
            sql = f"SELECT rid, title, text, filename, tags FROM docs WHERE rid IN ({','.join('?' * len(part))})"
            out += conn.execute(sql, part).fetchall()
        return out

    def file_rows(self, keys: Sequence[tuple[str, str]]) -> list[sqlite3.Row]:
        """Every row of these (tenant, file) pairs."""
        out: list[sqlite3.Row] = []
        for i in range(0, len(keys), 400):
            part = keys[i : i + 400]
            cond = " OR ".join("(tenant_id = ? AND file_id = ?)" for _ in part)
            out += self.rows(cond, [v for key in part for v in key])
        return out

    def scoped_rids(self, rids: Sequence[int], clauses: Sequence[Clause]) -> dict[int, tuple[str, str]]:
        """Of ``rids``, those that exist and are in scope, with their (chunk_id, file_id)."""
        where, params = compile_sql(clauses)
        out: dict[int, tuple[str, str]] = {}
        conn = self.conn()
        for i in range(0, len(rids), 500):
            part = [int(r) for r in rids[i : i + 500]]
            sql = f"SELECT d.rid, d.chunk_id, d.file_id FROM docs d WHERE d.rid IN ({','.join('?' * len(part))})"
            for r in conn.execute(f"{sql} AND {where}", (*part, *params)):
                out[int(r[0])] = (r[1], r[2])
        return out

    def vectors(
        self, clauses: Sequence[Clause], after_rid: int = 0, dim: int | None = None, limit: int = -1
    ) -> VectorRows:
        """The searchable vectors in scope, of rows after ``after_rid``, in rid order."""
        where, params = compile_sql(clauses)
        rows = (
            self.conn()
            .execute(
                "SELECT d.rid, d.chunk_id, d.file_id, d.embedding FROM docs d"
                f" WHERE d.rid > ? AND d.embedding IS NOT NULL AND {where} ORDER BY d.rid LIMIT ?",
                (after_rid, *params, limit),
            )
            .fetchall()
        )
        return VectorRows.of(rows, dim)

    def reader_count(self, tenant_id: str, tokens: Sequence[str], cap: int) -> int:
        """How many rows of ``tenant_id`` one of ``tokens`` reads, counted up to ``cap`` (the index's
        entries, no row read)."""
        sql = (
            "SELECT COUNT(*) FROM (SELECT DISTINCT rid FROM doc_readers WHERE tenant_id = ?"
            " AND token IN (SELECT value FROM json_each(?)) LIMIT ?)"
        )
        return int(self.conn().execute(sql, (tenant_id, json.dumps(list(tokens)), cap)).fetchone()[0])

    def readable_of(self, tenant_id: str, tokens: Sequence[str], rids: Sequence[int]) -> list[int]:
        """Of ``rids``, those one of ``tokens`` reads, in their order: index seeks, no row read (the k-NN leg's
        candidates, before their rows are read to check the rest of the scope)."""
        found: set[int] = set()
        conn = self.conn()
        for i in range(0, len(rids), 500):
            part = [int(r) for r in rids[i : i + 500]]
            sql = (
                "SELECT rid FROM doc_readers WHERE tenant_id = ? AND token IN (SELECT value FROM json_each(?))"
                f" AND rid IN ({','.join('?' * len(part))})"
            )
            found.update(int(r[0]) for r in conn.execute(sql, (tenant_id, json.dumps(list(tokens)), *part)))
        return [int(r) for r in rids if int(r) in found]

    def reader_rows(self, tenant_id: str, tokens: Sequence[str], cap: int) -> list[int] | None:
        """The rids of ``tenant_id`` that one of ``tokens`` reads, when there are at most ``cap`` of them
        (read from the ``doc_readers`` index, at most ``cap + 1`` entries); ``None`` when there are more."""
        sql = (
            "SELECT DISTINCT rid FROM doc_readers WHERE tenant_id = ? AND token IN (SELECT value FROM json_each(?))"
            " LIMIT ?"
        )
        rows = self.conn().execute(sql, (tenant_id, json.dumps(list(tokens)), cap + 1)).fetchall()
        return [r for (r,) in rows] if len(rows) <= cap else None

    def vectors_of(self, rids: Sequence[int], clauses: Sequence[Clause], dim: int | None = None) -> VectorRows:
        """Of ``rids``, the rows that exist, have a searchable vector and are in scope."""
        where, params = compile_sql(clauses)
        rows: list[sqlite3.Row] = []
        conn = self.conn()
        for i in range(0, len(rids), 500):
            part = [int(r) for r in rids[i : i + 500]]
            rows += conn.execute(
                "SELECT d.rid, d.chunk_id, d.file_id, d.embedding FROM docs d"
                f" WHERE d.rid IN ({','.join('?' * len(part))}) AND d.embedding IS NOT NULL AND {where}",
                (*part, *params),
            ).fetchall()
        return VectorRows.of(rows, dim)

    def live_rids(self, clauses: Sequence[Clause], up_to: int) -> npt.NDArray[np.int64]:
        """Rids in scope with a searchable vector, up to ``up_to``."""
        import numpy as np

        where, params = compile_sql(clauses)
        sql = f"SELECT d.rid FROM docs d WHERE d.rid <= ? AND d.embedding IS NOT NULL AND {where}"
        return np.array([r[0] for r in self.conn().execute(sql, (up_to, *params))], dtype=np.int64)

    def staged_vectors(self, clauses: Sequence[Clause], model: str) -> VectorRows:
        where, params = compile_sql(clauses)
        rows = (
            self.conn()
            .execute(
                "SELECT d.rid, d.chunk_id, d.file_id, s.embedding AS embedding FROM staged s"
                f" JOIN docs d ON d.rid = s.rid WHERE s.model = ? AND {where} ORDER BY d.rid",
                (model, *params),
            )
            .fetchall()
        )
        return VectorRows.of(rows)

    def count(self, clauses: Sequence[Clause], after_rid: int = 0) -> int:
        where, params = compile_sql(clauses)
        sql = f"SELECT COUNT(*) FROM docs d WHERE d.rid > ? AND d.embedding IS NOT NULL AND {where}"
        return int(self.conn().execute(sql, (after_rid, *params)).fetchone()[0])

    def vector_tenants(self) -> list[str]:
        return [r[0] for r in self.conn().execute("SELECT DISTINCT tenant_id FROM docs WHERE embedding IS NOT NULL")]

    def max_rid(self) -> int:
        return int(self.conn().execute("SELECT COALESCE(MAX(rid), 0) FROM docs").fetchone()[0])

    def active_model(self) -> str | None:
        row = self.conn().execute("SELECT value FROM settings WHERE key = 'active_model'").fetchone()
        return str(row[0]) if row else None

    def get_docs(self, tenant_id: str, chunk_ids: Sequence[str]) -> dict[str, IndexDoc]:
        out: dict[str, IndexDoc] = {}
        ids = list(chunk_ids)
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            for r in self.rows(f"tenant_id = ? AND chunk_id IN ({','.join('?' * len(part))})", (tenant_id, *part)):
                out[r["chunk_id"]] = _doc(r)
        return out

    def file_ids(self, tenant_id: str | None = None, *, after: str | None = None, until: str | None = None) -> set[str]:
        conds: list[str] = []
        params: list[str] = []
        for cond, value in (("tenant_id = ?", tenant_id), ("file_id > ?", after), ("file_id <= ?", until)):
            if value is not None:
                conds.append(cond)
                params.append(value)
        sql = "SELECT DISTINCT file_id FROM docs" + (" WHERE " + " AND ".join(conds) if conds else "")
        return {r[0] for r in self.conn().execute(sql, params)}


def _doc_params(d: IndexDoc, model: str | None, embedding: bytes | None) -> tuple[object, ...]:
    return (
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
        model,
        embedding,
        json.dumps(d.readers),
    )


def _doc(r: sqlite3.Row) -> IndexDoc:
    return IndexDoc(
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
        readers=json.loads(r["readers"]),
        location=Location.model_validate_json(r["location"]),
        created_at=datetime.fromisoformat(r["created_at"]),
        embedding_model=r["embedding_model"],
    )
