"""``SqliteEntityRepository``: the entities a tenant's files name, one row per (entity, file) and a
counted row per entity."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from semfs.domain.vocabulary import EntityKind
from semfs.ports.entity_repository import FileMention

from .sqlite_util import SqliteConnections, forget_tenant

if TYPE_CHECKING:  # the records load when entities are read: `semfs ls` never reads one
    from semfs.domain.mentions import FileEntity
    from semfs.domain.results import EntityInfo

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entity_files (
  tenant_id TEXT NOT NULL, entity_id TEXT NOT NULL, file_id TEXT NOT NULL, kind TEXT NOT NULL,
  label TEXT NOT NULL, mentions INTEGER NOT NULL, location TEXT NOT NULL, detail TEXT, contact_id TEXT,
  PRIMARY KEY (tenant_id, entity_id, file_id)
);
CREATE INDEX IF NOT EXISTS entity_files_of_file ON entity_files(tenant_id, file_id);
CREATE TABLE IF NOT EXISTS entities (
  tenant_id TEXT NOT NULL, entity_id TEXT NOT NULL, kind TEXT NOT NULL, label TEXT NOT NULL,
  files INTEGER NOT NULL, detail TEXT, contact_id TEXT,
  PRIMARY KEY (tenant_id, entity_id)
);
CREATE INDEX IF NOT EXISTS entities_by_kind ON entities(tenant_id, kind, files DESC, label);
CREATE INDEX IF NOT EXISTS entities_by_files ON entities(tenant_id, files DESC, label);
"""


class SqliteEntityRepository:
    """EntityRepository on SQLite: an entity's count moves only when its (entity, file) row comes or goes,
    in the transaction that adds or removes that row."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA)

    def replace_file(self, tenant_id: str, file_id: str, entities: Sequence[FileEntity]) -> None:
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            wanted = {e.entity_id: e for e in entities}
            held = [
                r[0]
                for r in conn.execute(
                    "SELECT entity_id FROM entity_files WHERE tenant_id=? AND file_id=?", (tenant_id, file_id)
                )
            ]
            for gone in (eid for eid in held if eid not in wanted):
                conn.execute(
                    "DELETE FROM entity_files WHERE tenant_id=? AND entity_id=? AND file_id=?",
                    (tenant_id, gone, file_id),
                )
                conn.execute(
                    "UPDATE entities SET files = files - 1 WHERE tenant_id=? AND entity_id=?", (tenant_id, gone)
                )
            conn.execute("DELETE FROM entities WHERE tenant_id=? AND files <= 0", (tenant_id,))
            for e in wanted.values():
                new = e.entity_id not in held
                conn.execute(
                    "INSERT OR REPLACE INTO entity_files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (tenant_id, e.entity_id, file_id, e.kind, e.label, e.mentions, e.location, e.detail, e.contact_id),
                )
                conn.execute(
                    "INSERT INTO entities VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, entity_id) DO UPDATE"
                    " SET files = files + ?, detail = coalesce(detail, excluded.detail),"
                    " contact_id = coalesce(excluded.contact_id, contact_id)",
                    (tenant_id, e.entity_id, e.kind, e.label, int(new), e.detail, e.contact_id, int(new)),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def of_file(self, tenant_id: str, file_id: str) -> list[FileEntity]:
        from semfs.domain.mentions import FileEntity

        rows = self._db.get().execute(
            "SELECT entity_id, kind, label, mentions, location, detail, contact_id FROM entity_files"
            " WHERE tenant_id=? AND file_id=? ORDER BY mentions DESC, entity_id",
            (tenant_id, file_id),
        )
        return [
            FileEntity(
                entity_id=r[0], kind=r[1], label=r[2], mentions=r[3], location=r[4], detail=r[5], contact_id=r[6]
            )
            for r in rows
        ]

    def files(self, tenant_id: str, entity_id: str, limit: int = 500) -> list[FileMention]:
        rows = self._db.get().execute(
            "SELECT file_id, label, mentions, location FROM entity_files WHERE tenant_id=? AND entity_id=?"
            " ORDER BY mentions DESC, file_id LIMIT ?",
            (tenant_id, entity_id, limit),
        )
        return [FileMention(file_id=r[0], label=r[1], mentions=r[2], location=r[3]) for r in rows]

    def get(self, tenant_id: str, entity_id: str) -> EntityInfo | None:
        row = (
            self._db.get()
            .execute(
                f"SELECT {_COLUMNS} FROM entities WHERE tenant_id=? AND entity_id=?",
                (tenant_id, entity_id),
            )
            .fetchone()
        )
        return _info(row) if row else None

    def entities(self, tenant_id: str, kind: EntityKind | None = None, limit: int = 100) -> list[EntityInfo]:
        sql = f"SELECT {_COLUMNS} FROM entities WHERE tenant_id=?"
        params: list[object] = [tenant_id]
        if kind:
            sql += " AND kind=?"
            params.append(kind)
        rows = self._db.get().execute(f"{sql} ORDER BY files DESC, label LIMIT ?", (*params, limit))
        return [_info(r) for r in rows]

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's entities; how many rows went."""
        return forget_tenant(self._db.get(), ("entity_files", "entities"), tenant_id)


_INFO = ("entity_id", "kind", "label", "files", "detail", "contact_id")  # the columns every entity read selects
_COLUMNS = ", ".join(_INFO)


def _info(r: Sequence[object]) -> EntityInfo:
    from semfs.domain.results import EntityInfo

    return EntityInfo.model_validate(dict(zip(_INFO, r, strict=True)))
