"""One tenant's burst against another's single file on `semfs serve`'s queue: how long does the one wait?

Queues ``--burst`` files of tenant a (the queue's per-tenant cap raised so that none is refused), then
one file of tenant b, and lets the workers drain it (two, as `semfs serve` runs them; hash embedder, so
the files cost about the same). Prints, per order, how many of a's files finished before b's and b's
wait in seconds; ``fifo`` (oldest job first, the queue before tenants took turns) is the same run's
baseline. Repeats ``--rounds`` times and prints medians.

    .venv/bin/python bench/fair_queue.py [--burst 150] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "shared"))

from semfs.adapters.local.sqlite_jobs import SqliteJobQueue
from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.pipeline.intake.ingest import ingest_bytes


def _fifo_claim(self: SqliteJobQueue) -> tuple[str, dict[str, Any]] | None:
    """The claim before tenants took turns: the oldest queued job of anyone."""
    import json

    conn = self._db.get()
    conn.execute("BEGIN IMMEDIATE")
    try:
        oldest = "SELECT execution, input FROM jobs WHERE state='queued' ORDER BY enqueued_at LIMIT 1"
        row = conn.execute(oldest).fetchone()
        if row is not None:
            running = "UPDATE jobs SET state='running', started_at=? WHERE execution=?"
            conn.execute(running, (time.time(), row["execution"]))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return (row["execution"], json.loads(row["input"])) if row is not None else None


def run(order: str, burst: int) -> tuple[int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), embedder="hash", tenant_max_queued=burst + 1)
        c = build_container(settings, background_workers=2)
        if order == "fifo":
            c.jobs.claim = _fifo_claim.__get__(c.jobs)  # type: ignore[attr-defined]
        a = [ingest_bytes(c, "a", f"# A {n}\n\nTenant a's report {n}.".encode(), f"{n}.md") for n in range(burst)]
        queued_b = time.monotonic()
        b = ingest_bytes(c, "b", b"# B\n\nTenant b's one file.", "b.md").record.file_id
        c.starter.run_workers()  # type: ignore[attr-defined]
        while not c.repo.get("b", b).status.terminal:
            time.sleep(0.02)
        waited = time.monotonic() - queued_b
        c.starter.close()  # type: ignore[attr-defined]  # (the workers finish the file they hold)
        done_b = c.repo.get("b", b).updated_at
        finished = [c.repo.get("a", r.record.file_id) for r in a]
        ahead = sum(r.status.terminal and r.updated_at <= done_b for r in finished)
        return ahead, waited


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--burst", type=int, default=150, help="tenant a's files queued first")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    for order in ("fifo", "turns"):
        results = [run(order, args.burst) for _ in range(args.rounds)]
        ahead = statistics.median(r[0] for r in results)
        waited = statistics.median(r[1] for r in results)
        print(f"{order:6} a's files finished before b's: median {ahead:5.0f} of {args.burst}", end="   ")
        print(f"b waited: median {waited:6.2f} s")


if __name__ == "__main__":
    main()
