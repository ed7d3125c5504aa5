"""``SqliteJobQueue``: the durable local work queue, and ``QueuedStarter``, which feeds it.

``semfs serve`` builds its container with a ``QueuedStarter``: registering a file (HTTP upload, SMTP,
drop folder) enqueues its execution and returns at once; worker threads claim jobs oldest first and
run them through the in-process ASL interpreter. Tenants take turns: a worker claims the oldest job of
the tenant whose turn came longest ago, so one tenant's 150 uploads delay another's file by at most a
file per worker, not by 150. Jobs survive a restart: a job left ``running`` by a
dead process is queued again when the next one starts (every stage is idempotent).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

from semfs.observability import get_logger
from semfs.ports.jobs import Job, JobState
from semfs.ports.starter import PipelineStarter
from semfs.priority import yield_to_searches

from .sqlite_util import SqliteConnections

log = get_logger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
  execution TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, file_id TEXT NOT NULL, state TEXT NOT NULL,
  input TEXT NOT NULL, enqueued_at REAL NOT NULL, started_at REAL, finished_at REAL
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, enqueued_at);
CREATE INDEX IF NOT EXISTS jobs_file ON jobs(tenant_id, file_id);
CREATE INDEX IF NOT EXISTS jobs_tenant ON jobs(tenant_id, state, enqueued_at);
-- each tenant's last turn (a counter, not a clock: two claims in one tick are still ordered)
CREATE TABLE IF NOT EXISTS turns (tenant_id TEXT PRIMARY KEY, turn INTEGER NOT NULL);
"""


def _job(row: Any) -> Job:
    return Job(
        row["execution"],
        row["tenant_id"],
        row["file_id"],
        row["state"],
        row["enqueued_at"],
        row["started_at"],
        row["finished_at"],
    )


class SqliteJobQueue:
    """JobQueue on SQLite (beside the records)."""

    def __init__(self, path: Path) -> None:
        self._db = SqliteConnections(path, _SCHEMA)

    def enqueue(self, execution: str, tenant_id: str, file_id: str, state: dict[str, Any]) -> bool:
        cur = self._db.get().execute(
            "INSERT OR IGNORE INTO jobs (execution, tenant_id, file_id, state, input, enqueued_at)"
            " VALUES (?, ?, ?, 'queued', ?, ?)",
            (execution, tenant_id, file_id, json.dumps(state), time.time()),
        )
        return cur.rowcount == 1

    def requeue(self, execution: str, state: dict[str, Any]) -> None:
        """Queue a finished execution again (a retry of a failed file)."""
        self._db.get().execute(
            "UPDATE jobs SET state='queued', input=?, enqueued_at=?, started_at=NULL, finished_at=NULL"
            " WHERE execution=? AND state IN ('done', 'failed', 'cancelled')",
            (json.dumps(state), time.time(), execution),
        )

    def claim(self) -> tuple[str, dict[str, Any]] | None:
        """The oldest queued job of the tenant whose turn came longest ago (a tenant never served first),
        now running; one writer wins (BEGIN IMMEDIATE)."""
        conn = self._db.get()
        conn.execute("BEGIN IMMEDIATE")
        try:
            tenant = conn.execute(
                "SELECT q.tenant_id FROM (SELECT DISTINCT tenant_id FROM jobs WHERE state='queued') q"
                " LEFT JOIN turns t ON t.tenant_id = q.tenant_id ORDER BY COALESCE(t.turn, 0), q.tenant_id LIMIT 1"
            ).fetchone()
            row = None
            if tenant is not None:
                row = conn.execute(
                    "SELECT execution, input FROM jobs WHERE tenant_id=? AND state='queued'"
                    " ORDER BY enqueued_at LIMIT 1",
                    (tenant["tenant_id"],),
                ).fetchone()
                conn.execute(
                    "UPDATE jobs SET state='running', started_at=? WHERE execution=?", (time.time(), row["execution"])
                )
                conn.execute(
                    "INSERT INTO turns (tenant_id, turn) VALUES (?, (SELECT COALESCE(MAX(turn), 0) + 1 FROM turns))"
                    " ON CONFLICT (tenant_id) DO UPDATE SET turn = excluded.turn",
                    (tenant["tenant_id"],),
                )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        return (row["execution"], json.loads(row["input"])) if row is not None else None

    def finish(self, execution: str, state: JobState) -> None:
        self._db.get().execute(
            "UPDATE jobs SET state=?, finished_at=? WHERE execution=?", (state, time.time(), execution)
        )

    def recover(self) -> int:
        """Jobs a dead process left running are queued again."""
        return self._db.get().execute("UPDATE jobs SET state='queued' WHERE state='running'").rowcount

    def jobs(self, tenant_id: str, states: tuple[JobState, ...] = ("queued", "running")) -> list[Job]:
        marks = ",".join("?" * len(states))
        rows = self._db.get().execute(
            f"SELECT * FROM jobs WHERE tenant_id=? AND state IN ({marks}) ORDER BY enqueued_at",
            (tenant_id, *states),
        )
        return [_job(r) for r in rows]

    def backlog(self, tenant_id: str) -> int:
        row = (
            self._db.get()
            .execute("SELECT COUNT(*) AS n FROM jobs WHERE tenant_id=? AND state='queued'", (tenant_id,))
            .fetchone()
        )
        return int(row["n"])

    def state_of(self, execution: str) -> str | None:
        row = self._db.get().execute("SELECT state FROM jobs WHERE execution=?", (execution,)).fetchone()
        return str(row["state"]) if row is not None else None

    def cancel(self, tenant_id: str, file_id: str) -> bool:
        cur = self._db.get().execute(
            "UPDATE jobs SET state='cancelled', finished_at=? WHERE tenant_id=? AND file_id=? AND state='queued'",
            (time.time(), tenant_id, file_id),
        )
        return cur.rowcount > 0


class QueuedStarter:
    """A PipelineStarter that queues executions for background workers (``semfs serve``)."""

    def __init__(
        self, queue: SqliteJobQueue, run: PipelineStarter, workers: int = 2, poll_s: float = 0.2, nice: int = 0
    ) -> None:
        self._queue = queue
        self._run = run
        self._workers = workers
        self._poll = poll_s
        self._stop = threading.Event()
        self._nice = nice
        self._threads: list[threading.Thread] = []
        self._wake = threading.Event()

    def start(self, name: str, state: dict[str, Any]) -> dict[str, Any] | None:
        if not self._queue.enqueue(name, str(state["tenant_id"]), str(state["file_id"]), state):
            self._queue.requeue(name, state)  # a retry: the same name, run again
        self._wake.set()
        return None  # like Step Functions: the caller reads the record for progress

    def running(self, name: str) -> bool:
        return self._queue.state_of(name) in ("queued", "running")

    def run_workers(self) -> None:
        """Start the worker threads (idempotent); queued jobs of a previous run are picked up first."""
        if self._threads:
            return
        recovered = self._queue.recover()
        if recovered:
            log.info("queue recovered", jobs=recovered)
        for n in range(self._workers):
            t = threading.Thread(target=self._work, daemon=True, name=f"semfs-worker-{n}")
            t.start()
            self._threads.append(t)

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        for t in self._threads:
            t.join(timeout=30)

    def _work(self) -> None:
        yield_to_searches(self._nice, thread=True)  # a search served beside it gets the cores first
        while not self._stop.is_set():
            claimed = self._queue.claim()
            if claimed is None:
                self._wake.wait(self._poll)
                self._wake.clear()
                continue
            name, state = claimed
            try:
                self._run.start(name, state)
                self._queue.finish(name, "done")
                log.info("job done", execution=name)
            except Exception as e:  # the record carries the outcome; the worker goes on
                self._queue.finish(name, "failed")
                log.error("job failed", execution=name, error=type(e).__name__)
