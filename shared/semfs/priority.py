"""Ingestion steps back for searches. On a machine with few cores, a bulk ingest (``semfs ingest``, the
workers of ``semfs serve``) and a search compete for the same cores, and a search's query embedding waits
for them. A process or thread that ingests therefore runs at a lower scheduling priority (its niceness,
``SEMFS_INGEST_NICE``): the scheduler gives a search the cores first and the ingest whatever is left, so
an idle machine ingests as fast as before (``bench/search_latency.py`` measures a search beside a writer
at both priorities)."""

from __future__ import annotations

import os
import threading

from semfs.observability import get_logger

log = get_logger(__name__)


def yield_to_searches(niceness: int, *, thread: bool = False) -> None:
    """Lower this process's priority to ``niceness`` (0-19; never raise it), or only the calling thread's
    (``thread``: Linux schedules threads on their own). Threads and processes started afterwards inherit it.
    Where the platform has no priorities, or refuses, nothing changes."""
    if niceness <= 0 or not hasattr(os, "setpriority"):
        return
    who = threading.get_native_id() if thread else os.getpid()
    try:
        current = os.getpriority(os.PRIO_PROCESS, who)
        if current < niceness:
            os.setpriority(os.PRIO_PROCESS, who, min(19, niceness))
    except OSError as e:
        log.info("priority unchanged", error=type(e).__name__)
