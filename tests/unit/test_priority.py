"""Ingestion steps back for searches (``semfs.priority``): an ingesting thread runs at the configured
niceness, a priority is never raised, and 0 changes nothing. Linux schedules threads on their own, which
is what lets ``semfs serve`` lower its ingest workers and not the threads that answer searches."""

from __future__ import annotations

import os
import threading

import pytest

from semfs.priority import yield_to_searches

pytestmark = pytest.mark.unit


def _in_thread(*niceness: int) -> list[int]:
    seen: list[int] = []

    def run() -> None:
        for n in niceness:
            yield_to_searches(n, thread=True)
            seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return seen


def test_a_thread_steps_back_never_forward_and_the_rest_of_the_process_stays() -> None:
    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert _in_thread(0, 7, 3, 25) == [before, max(before, 7), max(before, 7), 19]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before  # this thread untouched


def test_serves_ingest_workers_run_stepped_back(tmp_path: object) -> None:
    from pathlib import Path

    from semfs.adapters.local.sqlite_jobs import QueuedStarter, SqliteJobQueue

    seen: list[int] = []
    done = threading.Event()

    class Run:
        def start(self, name: str, state: dict[str, object]) -> None:
            seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
            done.set()

        def running(self, name: str) -> bool:
            return False

        def close(self) -> None:
            return None

    queue = SqliteJobQueue(Path(str(tmp_path)) / "jobs.db")
    starter = QueuedStarter(queue, Run(), workers=1, poll_s=0.01, nice=9)  # type: ignore[arg-type]
    try:
        starter.run_workers()
        starter.start("exec-1", {"tenant_id": "t", "file_id": "f_1"})
        assert done.wait(120)
    finally:
        starter.close()
    assert seen and seen[0] >= 9
