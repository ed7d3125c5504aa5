"""``SqliteTagRepository``: tag uses per file (idempotent), per-tag counters and merge aliases."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from semfs.domain.tags import stem_key

from .sqlite_util import SqliteConnections, forget_tenant

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tag_uses (
  tenant_id TEXT NOT NULL, tag TEXT NOT NULL, file_id TEXT NOT NULL,
  PRIMARY KEY (tenant_id, tag, file_id)
);
CREATE TABLE IF NOT EXISTS tag_counts (
  tenant_id TEXT NOT NULL, tag TEXT NOT NULL, files INTEGER NOT NULL, stem TEXT,
  PRIMARY KEY (tenant_id, tag)
);
CREATE INDEX IF NOT EXISTS tag_counts_top ON tag_counts(tenant_id, files DESC, tag);
CREATE INDEX IF NOT EXISTS tag_counts_stem ON tag_counts(tenant_id, stem, files DESC, tag);
CREATE TABLE IF NOT EXISTS tag_aliases (
  tenant_id TEXT NOT NULL, source TEXT NOT NULL, target TEXT NOT NULL,
  PRIMARY KEY (tenant_id, source)
);
"""


def _migrate(conn: sqlite3.Connection) -> None:
    """A vocabulary counted before tags were looked up by stem: add the column and fill it once."""
    columns = {r[1] for r in conn.execute("PRAGMA table_info(tag_counts)")}
    if not columns or "stem" in columns:
        return
    conn.execute("ALTER TABLE tag_counts ADD COLUMN stem TEXT")
    rows = conn.execute("SELECT DISTINCT tag FROM tag_counts").fetchall()
    conn.executemany("UPDATE tag_counts SET stem = ? WHERE tag = ?", [(stem_key(r[0]), r[0]) for r in rows])


class SqliteTagRepository:
    """TagRepository on SQLite: a counter moves only when its (tenant, tag, file) row is new; each counted tag
    keeps its stem, so a new tag is matched to the vocabulary by an index lookup."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA, migrate=_migrate)

    def record_uses(self, tenant_id: str, file_id: str, tags: Sequence[str]) -> None:
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            for tag in dict.fromkeys(tags):
                new = conn.execute("INSERT OR IGNORE INTO tag_uses VALUES (?, ?, ?)", (tenant_id, tag, file_id))
                if new.rowcount:
                    conn.execute(
                        "INSERT INTO tag_counts VALUES (?, ?, 1, ?)"
                        " ON CONFLICT (tenant_id, tag) DO UPDATE SET files = files + 1",
                        (tenant_id, tag, stem_key(tag)),
                    )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def top(self, tenant_id: str, limit: int) -> list[str]:
        rows = self._db.get().execute(
            "SELECT tag FROM tag_counts WHERE tenant_id=? ORDER BY files DESC, tag LIMIT ?", (tenant_id, limit)
        )
        return [r[0] for r in rows]

    def preferred(self, tenant_id: str, stems: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        conn = self._db.get()
        for stem in dict.fromkeys(stems):  # one index seek each: a file has a dozen tags
            row = conn.execute(
                "SELECT tag FROM tag_counts WHERE tenant_id=? AND stem=? ORDER BY files DESC, tag LIMIT 1",
                (tenant_id, stem),
            ).fetchone()
            if row is not None:
                out[stem] = row[0]
        return out

    def aliases(self, tenant_id: str) -> dict[str, str]:
        rows = self._db.get().execute("SELECT source, target FROM tag_aliases WHERE tenant_id=?", (tenant_id,))
        return {r[0]: r[1] for r in rows}

    def set_alias(self, tenant_id: str, source: str, target: str) -> None:
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("UPDATE tag_aliases SET target=? WHERE tenant_id=? AND target=?", (target, tenant_id, source))
            conn.execute("DELETE FROM tag_aliases WHERE tenant_id=? AND source=?", (tenant_id, target))
            conn.execute("INSERT OR REPLACE INTO tag_aliases VALUES (?, ?, ?)", (tenant_id, source, target))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's tag counts and aliases; how many rows went."""
        return forget_tenant(self._db.get(), ("tag_uses", "tag_counts", "tag_aliases"), tenant_id)
