"""Shared SQLite connection setup: WAL, a busy timeout, one connection per thread."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path


class SqliteConnections:
    """Lazily opens one connection per thread (sqlite3 connections are not shared across threads)."""

    def __init__(
        self,
        path: Path,
        schema: str,
        migrate: Callable[[sqlite3.Connection], None] | None = None,
        pragmas: tuple[str, ...] = (),
    ) -> None:
        self._path = path
        self._pragmas = pragmas
        self._schema = schema
        self._migrate = migrate
        self._local = threading.local()
        self._initialised = False
        self._lock = threading.Lock()

    def get(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self._path, timeout=30, isolation_level=None, check_same_thread=True)
            conn.row_factory = sqlite3.Row
            with self._lock:
                # Switching to WAL takes an exclusive lock and does not wait on the busy timeout: threads
                # (or processes) opening a fresh database at once see "database is locked". Retry it.
                for attempt in range(50):
                    try:
                        conn.execute("PRAGMA journal_mode=WAL")
                        break
                    except sqlite3.OperationalError as e:
                        busy = getattr(e, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
                        if not busy or attempt == 49:
                            raise
                        time.sleep(0.01 * (attempt + 1))
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.execute("PRAGMA foreign_keys=ON")
                for pragma in self._pragmas:
                    conn.execute(f"PRAGMA {pragma}")
                if not self._initialised:
                    if self._migrate is not None:
                        self._migrate(conn)
                    conn.executescript(self._schema)
                    self._initialised = True
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def forget_tenant(conn: sqlite3.Connection, tables: tuple[str, ...], tenant_id: str) -> int:
    """Delete every row of ``tenant_id`` from ``tables`` in one transaction, the freed pages overwritten
    (``secure_delete``: an erased tenant's text does not linger in the file's free pages) and the
    write-ahead log checkpointed and truncated (its frames hold the pages as they were); rows deleted."""
    conn.execute("PRAGMA secure_delete=ON")
    gone = 0
    try:
        conn.execute("BEGIN IMMEDIATE")
        for table in tables:
            gone += conn.execute(f"DELETE FROM {table} WHERE tenant_id = ?", (tenant_id,)).rowcount
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    finally:
        conn.execute("PRAGMA secure_delete=OFF")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return gone
