"""Mail accounts on SQLite (``SqliteMailAccountRepository``), and their secrets encrypted by a key file of the
data folder (``FernetSecretStore``).

The key file (``secret.key``, mode 0600, made on first use) holds a Fernet key (AES-128-CBC with an HMAC-SHA256,
from ``cryptography``); the database holds only ciphertext. A copy of the database without the key file
reveals no password; losing the key file loses the secrets (the accounts say so and ask for them again).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from semfs.domain.errors import MailboxRefused, NotFound
from semfs.domain.mail_accounts import FolderCursor, MailAccount

from .sqlite_util import SqliteConnections, forget_tenant

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mail_accounts (
  tenant_id TEXT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (tenant_id, name)
);
CREATE TABLE IF NOT EXISTS mail_cursors (
  tenant_id TEXT NOT NULL, name TEXT NOT NULL, folder TEXT NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (tenant_id, name, folder)
);
CREATE TABLE IF NOT EXISTS secrets (
  tenant_id TEXT NOT NULL, ref TEXT NOT NULL PRIMARY KEY, name TEXT NOT NULL, sealed BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS secrets_by_name ON secrets (tenant_id, name);
"""


class SqliteMailAccountRepository:
    """MailAccountRepository on SQLite: one row per account, one per (account, folder) cursor."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA)

    def save(self, tenant_id: str, account: MailAccount) -> None:
        sql = (
            "INSERT INTO mail_accounts VALUES (?, ?, ?) "
            "ON CONFLICT (tenant_id, name) DO UPDATE SET data = excluded.data"
        )
        self._db.get().execute(sql, (tenant_id, account.name, account.model_dump_json()))

    def account(self, tenant_id: str, name: str) -> MailAccount | None:
        row = (
            self._db.get()
            .execute("SELECT data FROM mail_accounts WHERE tenant_id = ? AND name = ?", (tenant_id, name))
            .fetchone()
        )
        return MailAccount.model_validate_json(row[0]) if row else None

    def accounts(self, tenant_id: str) -> list[MailAccount]:
        rows = self._db.get().execute("SELECT data FROM mail_accounts WHERE tenant_id = ? ORDER BY name", (tenant_id,))
        return [MailAccount.model_validate_json(r[0]) for r in rows]

    def all_accounts(self) -> Iterator[tuple[str, MailAccount]]:
        rows = self._db.get().execute("SELECT tenant_id, data FROM mail_accounts ORDER BY tenant_id, name").fetchall()
        for tenant, data in rows:
            yield tenant, MailAccount.model_validate_json(data)

    def delete(self, tenant_id: str, name: str) -> bool:
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("DELETE FROM mail_cursors WHERE tenant_id = ? AND name = ?", (tenant_id, name))
            gone = conn.execute("DELETE FROM mail_accounts WHERE tenant_id = ? AND name = ?", (tenant_id, name))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return bool(gone.rowcount)

    def cursor(self, tenant_id: str, name: str, folder: str) -> FolderCursor | None:
        sql = "SELECT data FROM mail_cursors WHERE tenant_id = ? AND name = ? AND folder = ?"
        row = self._db.get().execute(sql, (tenant_id, name, folder)).fetchone()
        return FolderCursor.model_validate_json(row[0]) if row else None

    def save_cursor(self, tenant_id: str, name: str, cursor: FolderCursor) -> None:
        sql = (
            "INSERT INTO mail_cursors VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, name, folder) DO UPDATE SET data = excluded.data"
        )
        self._db.get().execute(sql, (tenant_id, name, cursor.folder, cursor.model_dump_json()))

    def forget_tenant(self, tenant_id: str) -> int:
        return forget_tenant(self._db.get(), ("mail_cursors", "mail_accounts"), tenant_id)


def _key(path: Path) -> bytes:
    """The data folder's key, made on first use with mode 0600 (created exclusively: two processes starting at
    once agree on one key)."""
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = Fernet.generate_key()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


class FernetSecretStore:
    """SecretStore in the records database, sealed by the data folder's key file (module docstring)."""

    def __init__(self, db: Path, key_file: Path) -> None:
        self._db = SqliteConnections(db, _SCHEMA)
        self._key_file = key_file
        self._fernet: Fernet | None = None

    def _box(self) -> Fernet:
        if self._fernet is None:
            self._fernet = Fernet(_key(self._key_file))
        return self._fernet

    def put(self, tenant_id: str, name: str, secret: str) -> str:
        sealed = self._box().encrypt(secret.encode())
        ref = f"local:{uuid.uuid4().hex}"
        sql = (
            "INSERT INTO secrets VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, name) DO UPDATE SET sealed = excluded.sealed RETURNING ref"
        )
        row = self._db.get().execute(sql, (tenant_id, ref, name, sealed)).fetchone()
        return str(row[0])

    def get(self, ref: str) -> str:
        row = self._db.get().execute("SELECT sealed FROM secrets WHERE ref = ?", (ref,)).fetchone()
        if row is None:
            raise NotFound("the account's secret is gone: set it again")
        try:
            return self._box().decrypt(bytes(row[0])).decode()
        except InvalidToken as e:
            raise MailboxRefused(f"the account's secret does not open with {self._key_file.name}: set it again") from e

    def delete(self, ref: str) -> None:
        self._db.get().execute("DELETE FROM secrets WHERE ref = ?", (ref,))

    def forget_tenant(self, tenant_id: str) -> int:
        return forget_tenant(self._db.get(), ("secrets",), tenant_id)
