"""``SqliteMailRepository``: threads, their messages and contacts as rows (beside the file records).

Membership rows (``thread_messages``, ``contact_messages``) have the message id in their primary key,
so a redelivered message inserts nothing and counts are ``COUNT(*)`` of distinct messages; each write
is one ``BEGIN IMMEDIATE`` transaction, so two processes adding two messages of one thread both land.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from semfs.ports.mail import Contact, Person, Thread

from .sqlite_util import SqliteConnections, forget_tenant

_SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
  tenant_id TEXT NOT NULL, thread_id TEXT NOT NULL, subject TEXT NOT NULL,
  PRIMARY KEY (tenant_id, thread_id)
);
CREATE TABLE IF NOT EXISTS thread_messages (
  tenant_id TEXT NOT NULL, message_id TEXT NOT NULL, thread_id TEXT NOT NULL,
  PRIMARY KEY (tenant_id, message_id)
);
CREATE INDEX IF NOT EXISTS thread_messages_thread ON thread_messages(tenant_id, thread_id);
CREATE TABLE IF NOT EXISTS thread_participants (
  tenant_id TEXT NOT NULL, thread_id TEXT NOT NULL, address TEXT NOT NULL,
  PRIMARY KEY (tenant_id, thread_id, address)
);
CREATE TABLE IF NOT EXISTS thread_subjects (
  tenant_id TEXT NOT NULL, subject_key TEXT NOT NULL, thread_id TEXT NOT NULL,
  PRIMARY KEY (tenant_id, subject_key)
);
CREATE TABLE IF NOT EXISTS contacts (
  tenant_id TEXT NOT NULL, contact_id TEXT NOT NULL, email TEXT NOT NULL, name TEXT NOT NULL,
  organisation TEXT,
  PRIMARY KEY (tenant_id, contact_id)
);
CREATE TABLE IF NOT EXISTS contact_messages (
  tenant_id TEXT NOT NULL, contact_id TEXT NOT NULL, message_id TEXT NOT NULL,
  PRIMARY KEY (tenant_id, contact_id, message_id)
);
"""


class SqliteMailRepository:
    """MailRepository on SQLite (see module docstring)."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA)

    def _one(self, sql: str, params: tuple[object, ...]) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._db.get().execute(sql, params).fetchone()
        return row

    def thread_of_message(self, tenant_id: str, message_id: str) -> str | None:
        row = self._one(
            "SELECT thread_id FROM thread_messages WHERE tenant_id=? AND message_id=?", (tenant_id, message_id)
        )
        return str(row["thread_id"]) if row else None

    def thread_of_subject(self, tenant_id: str, subject_key: str) -> str | None:
        row = self._one(
            "SELECT thread_id FROM thread_subjects WHERE tenant_id=? AND subject_key=?", (tenant_id, subject_key)
        )
        return str(row["thread_id"]) if row else None

    def add_message(
        self,
        tenant_id: str,
        thread_id: str,
        message_id: str,
        subject: str,
        subject_key: str | None,
        participants: Sequence[str],
    ) -> Thread:
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT OR IGNORE INTO threads VALUES (?, ?, ?)", (tenant_id, thread_id, subject))
            conn.execute("INSERT OR IGNORE INTO thread_messages VALUES (?, ?, ?)", (tenant_id, message_id, thread_id))
            conn.executemany(
                "INSERT OR IGNORE INTO thread_participants VALUES (?, ?, ?)",
                [(tenant_id, thread_id, p) for p in sorted(set(participants))],
            )
            if subject_key:
                conn.execute(
                    "INSERT OR REPLACE INTO thread_subjects VALUES (?, ?, ?)", (tenant_id, subject_key, thread_id)
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        found = self.thread(tenant_id, thread_id)
        assert found is not None
        return found

    def add_contact_message(self, tenant_id: str, person: Person, message_id: str) -> Contact:
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "INSERT INTO contacts VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, contact_id) DO UPDATE SET"
                " name = CASE WHEN excluded.name != '' THEN excluded.name ELSE contacts.name END,"
                " organisation = COALESCE(excluded.organisation, contacts.organisation)",
                (tenant_id, person.contact_id, person.email, person.name, person.organisation),
            )
            conn.execute(
                "INSERT OR IGNORE INTO contact_messages VALUES (?, ?, ?)", (tenant_id, person.contact_id, message_id)
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return next(c for c in self._contacts(tenant_id, person.contact_id))

    def upsert_contact(self, tenant_id: str, person: Person) -> Contact:
        self._db.get().execute(
            "INSERT INTO contacts VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, contact_id) DO UPDATE SET"
            " name = CASE WHEN excluded.name != '' THEN excluded.name ELSE contacts.name END,"
            " organisation = COALESCE(excluded.organisation, contacts.organisation)",
            (tenant_id, person.contact_id, person.email, person.name, person.organisation),
        )
        return self._contacts(tenant_id, person.contact_id)[0]

    def threads(self, tenant_id: str) -> list[Thread]:
        ids = [r[0] for r in self._db.get().execute("SELECT thread_id FROM threads WHERE tenant_id=?", (tenant_id,))]
        return [t for i in ids if (t := self.thread(tenant_id, i)) is not None]

    def thread(self, tenant_id: str, thread_id: str) -> Thread | None:
        row = self._one("SELECT subject FROM threads WHERE tenant_id=? AND thread_id=?", (tenant_id, thread_id))
        if row is None:
            return None
        conn = self._db.get()
        people = [
            r[0]
            for r in conn.execute(
                "SELECT address FROM thread_participants WHERE tenant_id=? AND thread_id=? ORDER BY address",
                (tenant_id, thread_id),
            )
        ]
        (count,) = conn.execute(
            "SELECT COUNT(*) FROM thread_messages WHERE tenant_id=? AND thread_id=?", (tenant_id, thread_id)
        ).fetchone()
        return Thread(tenant_id, thread_id, str(row["subject"]), tuple(people), int(count))

    def _contacts(self, tenant_id: str, contact_id: str | None = None) -> list[Contact]:
        sql = (
            "SELECT c.contact_id, c.email, c.name, c.organisation,"
            " (SELECT COUNT(*) FROM contact_messages m WHERE m.tenant_id = c.tenant_id"
            "  AND m.contact_id = c.contact_id) AS messages"
            " FROM contacts c WHERE c.tenant_id = ?"
        )
        params: tuple[object, ...] = (tenant_id,)
        if contact_id is not None:
            sql += " AND c.contact_id = ?"
            params = (tenant_id, contact_id)
        rows = self._db.get().execute(sql + " ORDER BY c.contact_id", params).fetchall()
        return [
            Contact(tenant_id, r["contact_id"], r["email"], r["name"], r["organisation"], int(r["messages"]))
            for r in rows
        ]

    def contact(self, tenant_id: str, contact_id: str) -> Contact | None:
        found = self._contacts(tenant_id, contact_id)
        return found[0] if found else None

    def contacts(self, tenant_id: str) -> list[Contact]:
        return self._contacts(tenant_id)

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's threads, messages and contacts; how many rows went."""
        return forget_tenant(
            self._db.get(),
            ("threads", "thread_messages", "thread_participants", "thread_subjects", "contacts", "contact_messages"),
            tenant_id,
        )
