"""``SqliteViewRepository``: a tenant's saved views, one row each (the view as JSON)."""

from __future__ import annotations

from pathlib import Path

from semfs.domain.models import SavedView

from .sqlite_util import SqliteConnections, forget_tenant

_SCHEMA = """
CREATE TABLE IF NOT EXISTS saved_views (
  tenant_id TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (tenant_id, name)
);
"""


class SqliteViewRepository:
    """ViewRepository on SQLite."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA)

    def save(self, tenant_id: str, view: SavedView) -> None:
        sql = (
            "INSERT INTO saved_views VALUES (?, ?, ?) ON CONFLICT (tenant_id, name) DO UPDATE SET data = excluded.data"
        )
        self._db.get().execute(sql, (tenant_id, view.name, view.model_dump_json()))

    def views(self, tenant_id: str) -> list[SavedView]:
        rows = self._db.get().execute("SELECT data FROM saved_views WHERE tenant_id = ? ORDER BY name", (tenant_id,))
        return [SavedView.model_validate_json(r[0]) for r in rows]

    def delete(self, tenant_id: str, name: str) -> bool:
        gone = self._db.get().execute("DELETE FROM saved_views WHERE tenant_id = ? AND name = ?", (tenant_id, name))
        return bool(gone.rowcount)

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's saved views; how many rows went."""
        return forget_tenant(self._db.get(), ("saved_views",), tenant_id)
