"""``SqlitePrincipalRepository``: a tenant's users and groups, one row each (the user or group as JSON)."""

from __future__ import annotations

from pathlib import Path

from semfs.domain.models import Group, User

from .sqlite_util import SqliteConnections, forget_tenant

_SCHEMA = """
CREATE TABLE IF NOT EXISTS principal_users (
  tenant_id TEXT NOT NULL, name TEXT NOT NULL, created_at TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (tenant_id, name)
);
CREATE TABLE IF NOT EXISTS principal_groups (
  tenant_id TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (tenant_id, name)
);
"""
_UPSERT_USER = (
    "INSERT INTO principal_users VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, name) DO UPDATE SET data = excluded.data"
)
_UPSERT_GROUP = (
    "INSERT INTO principal_groups VALUES (?, ?, ?) ON CONFLICT (tenant_id, name) DO UPDATE SET data = excluded.data"
)


class SqlitePrincipalRepository:
    """PrincipalRepository on SQLite."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA)

    def save_user(self, tenant_id: str, user: User) -> None:
        self._db.get().execute(
            _UPSERT_USER, (tenant_id, user.name, user.created_at.isoformat(), user.model_dump_json())
        )

    def users(self, tenant_id: str) -> list[User]:
        sql = "SELECT data FROM principal_users WHERE tenant_id = ? ORDER BY created_at, name"
        return [User.model_validate_json(r[0]) for r in self._db.get().execute(sql, (tenant_id,))]

    def delete_user(self, tenant_id: str, name: str) -> bool:
        sql = "DELETE FROM principal_users WHERE tenant_id = ? AND name = ?"
        return bool(self._db.get().execute(sql, (tenant_id, name)).rowcount)

    def save_group(self, tenant_id: str, group: Group) -> None:
        self._db.get().execute(_UPSERT_GROUP, (tenant_id, group.name, group.model_dump_json()))

    def groups(self, tenant_id: str) -> list[Group]:
        sql = "SELECT data FROM principal_groups WHERE tenant_id = ? ORDER BY name"
        return [Group.model_validate_json(r[0]) for r in self._db.get().execute(sql, (tenant_id,))]

    def delete_group(self, tenant_id: str, name: str) -> bool:
        sql = "DELETE FROM principal_groups WHERE tenant_id = ? AND name = ?"
        return bool(self._db.get().execute(sql, (tenant_id, name)).rowcount)

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's users and groups; how many rows went."""
        return forget_tenant(self._db.get(), ("principal_users", "principal_groups"), tenant_id)
