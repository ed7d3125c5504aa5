"""``SqliteFileRepository``: file records in SQLite (WAL), the full record as JSON plus indexed columns."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from semfs.domain.errors import Conflict, NotFound
from semfs.domain.models import FileRecord
from semfs.domain.outcomes import TERMINAL_STATUSES
from semfs.domain.scope import After, AnyOf, Not, RecordClause, Term
from semfs.ports.repository import RecordQuery

from .sqlite_util import SqliteConnections, forget_tenant

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
  file_id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  lineage_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  is_latest INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  normalised_name TEXT NOT NULL,
  thread_id TEXT,
  source_type TEXT NOT NULL,
  status TEXT NOT NULL,
  outcome TEXT,
  embedding_model TEXT,
  created_at TEXT NOT NULL,
  deleted INTEGER NOT NULL DEFAULT 0,
  data TEXT NOT NULL,
  revision INTEGER NOT NULL DEFAULT 0,
  version_key TEXT
);
CREATE INDEX IF NOT EXISTS files_sha ON files(tenant_id, sha256);
CREATE INDEX IF NOT EXISTS files_version_key ON files(tenant_id, version_key, version);
CREATE INDEX IF NOT EXISTS files_lineage ON files(tenant_id, lineage_id, version);
CREATE INDEX IF NOT EXISTS files_status ON files(status);
CREATE INDEX IF NOT EXISTS files_tenant ON files(tenant_id, file_id);
"""

_COLUMNS = (
    "file_id, tenant_id, lineage_id, version, is_latest, sha256, normalised_name, thread_id, "
    "source_type, status, outcome, embedding_model, created_at, deleted, data, revision, version_key"
)


_ORDERS = {
    "id": "file_id",
    "newest": "created_at DESC, file_id",
    "oldest": "created_at, file_id",
    "name": "json_extract(data, '$.filename') COLLATE NOCASE, file_id",
    "size": "json_extract(data, '$.size_bytes') DESC, file_id",
}


def _row(r: FileRecord) -> tuple[object, ...]:
    return (
        r.file_id,
        r.tenant_id,
        r.lineage_id,
        r.version,
        int(r.is_latest),
        r.sha256,
        r.normalised_name,
        r.thread_id,
        r.source_type,
        r.status.value,
        r.outcome.value if r.outcome else None,
        r.embedding_model,
        r.created_at.isoformat(),
        int(r.deleted_at is not None),
        r.model_dump_json(),
        r.revision,
        r.version_key,
    )


def _load(rows: list[sqlite3.Row]) -> list[FileRecord]:
    return [FileRecord.model_validate_json(row["data"]) for row in rows]


def _migrate(conn: sqlite3.Connection) -> None:
    """Databases made before records had revisions gain the column (every row at revision 0)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(files)")}
    if columns and "revision" not in columns:
        conn.execute("ALTER TABLE files ADD COLUMN revision INTEGER NOT NULL DEFAULT 0")
    if columns and "version_key" not in columns:  # implicit versions now need a version key (reconcile)
        conn.execute("ALTER TABLE files ADD COLUMN version_key TEXT")


# each record field's SQL: a column, or a value inside the record's JSON
_RECORD_SQL = {
    "tenant": "tenant_id",
    "status": "status",
    "lineage": "lineage_id",
    "thread": "thread_id",
    "source_type": "source_type",
    "mime": "json_extract(data, '$.mime_type')",
    "source_key": "json_extract(data, '$.source_key')",
    "latest": "is_latest",
    "deleted": "deleted",
    "created": "created_at",
    "outcome": "outcome",
    "file_id": "file_id",
}
# list-valued fields: JSON arrays, searched with json_each (a tag is a person's or the enricher's)
_RECORD_LISTS = {"tag": ("$.tags", "$.auto_tags"), "contact": ("$.contact_ids",), "entity": ("$.entities",)}


# a file's readers; a record from before access lists has none and is the whole tenant's (domain/access.py)
_READERS = """COALESCE(NULLIF(json_extract(data, '$.readers'), '[]'), '["tenant"]')"""


_ONE_OF = "(SELECT value FROM json_each(?))"  # one variable, however many values


def compile_record_sql(clauses: Sequence[RecordClause]) -> tuple[str, list[object]]:
    """A record query's clauses as a WHERE clause over ``files`` (the tenant condition first)."""
    where: list[str] = []
    params: list[object] = []
    for c in clauses:
        if isinstance(c, AnyOf) and c.field == "reader":
            where.append(
                f"EXISTS (SELECT 1 FROM json_each({_READERS}) WHERE value IN (SELECT value FROM json_each(?)))"
            )
            params.append(json.dumps(list(c.values)))
        elif isinstance(c, Term) and c.field in _RECORD_LISTS:
            paths = _RECORD_LISTS[c.field]
            where.append(
                "(" + " OR ".join(f"EXISTS (SELECT 1 FROM json_each(data, '{p}') WHERE value = ?)" for p in paths) + ")"
            )
            params += [c.value] * len(paths)
        elif isinstance(c, Term):
            where.append(f"{_RECORD_SQL[c.field]} = ?")
            params.append(int(c.value) if isinstance(c.value, bool) else c.value)
        elif isinstance(c, Not):
            where.append(f"{_RECORD_SQL[c.term.field]} IS NOT ?")
            params.append(c.term.value)
        elif isinstance(c, AnyOf):
            where.append(f"{_RECORD_SQL[c.field]} IN (SELECT value FROM json_each(?))")  # one variable for all
            params.append(json.dumps(list(c.values)))
        elif isinstance(c, After):
            where.append(f"{_RECORD_SQL[c.field]} > ?")
            params.append(c.value)
        else:
            for op, bound in ((">=", c.low), ("<=", c.high)):
                if bound is not None:
                    where.append(f"{_RECORD_SQL[c.field]} {op} ?")
                    params.append(bound)
    return " AND ".join(where), params


class SqliteFileRepository:
    """File records in one SQLite database. Conditional create by primary key, conditional writes by
    revision (``UPDATE … WHERE revision = ?``)."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA, migrate=_migrate)

    def create(self, record: FileRecord) -> bool:
        first = record.model_copy(update={"revision": 1})
        cur = self._db.get().execute(
            f"INSERT OR IGNORE INTO files ({_COLUMNS}) VALUES ({','.join('?' * 17)})", _row(first)
        )
        return cur.rowcount == 1

    def save(self, record: FileRecord) -> FileRecord:
        stored = record.model_copy(update={"revision": record.revision + 1})
        values = _row(stored)
        conn = self._db.get()
        cur = conn.execute(
            "UPDATE files SET tenant_id=?, lineage_id=?, version=?, is_latest=?, sha256=?, normalised_name=?,"
            " thread_id=?, source_type=?, status=?, outcome=?, embedding_model=?, created_at=?, deleted=?,"
            " data=?, revision=?, version_key=? WHERE file_id=? AND revision=?",
            (*values[1:], values[0], record.revision),
        )
        if cur.rowcount != 1:
            if conn.execute("SELECT 1 FROM files WHERE file_id=?", (record.file_id,)).fetchone() is None:
                raise NotFound(f"no record {record.file_id}")
            raise Conflict(f"record {record.file_id} changed since revision {record.revision}")
        return stored

    def get(self, tenant_id: str, file_id: str) -> FileRecord:
        rows = (
            self._db.get()
            .execute("SELECT data FROM files WHERE tenant_id=? AND file_id=?", (tenant_id, file_id))
            .fetchall()
        )
        if not rows:
            raise NotFound(f"no file {file_id}")
        return _load(rows)[0]

    def find_by_sha256(self, tenant_id: str, sha256: str) -> list[FileRecord]:
        rows = (
            self._db.get()
            .execute(
                "SELECT data FROM files WHERE tenant_id=? AND sha256=? AND deleted=0 ORDER BY created_at, file_id",
                (tenant_id, sha256),
            )
            .fetchall()
        )
        return _load(rows)

    def find_latest(self, tenant_id: str, version_key: str) -> FileRecord | None:
        rows = (
            self._db.get()
            .execute(
                "SELECT data FROM files WHERE tenant_id=? AND version_key=?"
                " AND deleted=0 AND status NOT IN ('skipped') ORDER BY version DESC LIMIT 1",
                (tenant_id, version_key),
            )
            .fetchall()
        )
        return _load(rows)[0] if rows else None

    def registered_under(self, tenant_id: str, version_key: str) -> bool:
        row = (
            self._db.get()
            .execute("SELECT 1 FROM files WHERE tenant_id=? AND version_key=? LIMIT 1", (tenant_id, version_key))
            .fetchone()
        )
        return row is not None

    def lineage(self, tenant_id: str, lineage_id: str) -> list[FileRecord]:
        rows = (
            self._db.get()
            .execute(
                "SELECT data FROM files WHERE tenant_id=? AND lineage_id=? ORDER BY version",
                (tenant_id, lineage_id),
            )
            .fetchall()
        )
        return _load(rows)

    def set_latest(self, tenant_id: str, lineage_id: str, file_id: str) -> list[FileRecord]:
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            versions = _load(
                conn.execute(
                    "SELECT data FROM files WHERE tenant_id=? AND lineage_id=? ORDER BY version",
                    (tenant_id, lineage_id),
                ).fetchall()
            )
            target = next((v for v in versions if v.file_id == file_id), None)
            if target is None or target.deleted_at is not None:
                conn.execute("ROLLBACK")
                return []
            newer_live = [
                v
                for v in versions
                if v.version > target.version and v.deleted_at is None and v.status.value != "skipped" and v.is_latest
            ]
            if newer_live:
                conn.execute("ROLLBACK")
                return versions
            after: list[FileRecord] = []
            for old in versions:
                want = old.file_id == file_id
                v = old
                if old.is_latest != want:
                    v = old.evolve(is_latest=want, revision=old.revision + 1)
                    conn.execute(
                        "UPDATE files SET is_latest=?, data=?, revision=? WHERE file_id=?",
                        (int(want), v.model_dump_json(), v.revision, v.file_id),
                    )
                after.append(v)
            conn.execute("COMMIT")
            return after
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def query(self, q: RecordQuery) -> list[FileRecord]:
        where, params = compile_record_sql(q.clauses())
        sql = f"SELECT data FROM files WHERE {where} ORDER BY {_ORDERS[q.order]} LIMIT ? OFFSET ?"
        return _load(self._db.get().execute(sql, (*params, q.limit, q.offset)).fetchall())

    def counts(self, tenant_id: str | None = None) -> dict[tuple[str, str | None], int]:
        sql = "SELECT status, outcome, COUNT(*) AS n FROM files"
        params: tuple[object, ...] = ()
        if tenant_id is not None:
            sql += " WHERE tenant_id = ?"
            params = (tenant_id,)
        rows = self._db.get().execute(sql + " GROUP BY status, outcome", params).fetchall()
        return {(r["status"], r["outcome"]): r["n"] for r in rows}

    def tenants(self) -> list[str]:
        return [r[0] for r in self._db.get().execute("SELECT DISTINCT tenant_id FROM files ORDER BY 1")]

    def unfinished(self) -> list[FileRecord]:
        done = [s.value for s in TERMINAL_STATUSES]
        rows = (
            self._db.get()
            .execute(
                f"SELECT data FROM files WHERE status NOT IN ({','.join('?' * len(done))}) ORDER BY created_at",
                done,
            )
            .fetchall()
        )
        return _load(rows)

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's records; how many rows went."""
        return forget_tenant(self._db.get(), ("files",), tenant_id)
