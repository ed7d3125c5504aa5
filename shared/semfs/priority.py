"""Ingestion steps back for searches. On a machine with few cores, a bulk ingest (``semfs ingest``, the
workers of ``semfs serve``) and a search compete for the same cores, and a search's query embedding waits
for them. A process or thread that ingests therefore runs at a lower scheduling priority (its niceness,
``SEMFS_INGEST_NICE``): the scheduler gives a search the cores first and the ingest whatever is left, so
an idle machine ingests as fast as before (``bench/search_latency.py`` measures a search beside a writer
at both priorities)."""

from __future__ import annotations

import contextvars
import os
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from semfs.observability import get_logger

log = get_logger(__name__)
T = TypeVar("T")


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


def lowered(niceness: int, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a thread of its own at ``niceness``, the caller waiting: only the ingesting thread (and
    the worker processes it starts) step back; the caller's process and thread keep their priority. An
    unprivileged process cannot raise its priority again once lowered, so ``semfs ingest`` used as a library
    left its caller's whole process at nice 10 (issue 47.10). Where threads have no priorities of their own
    (not Linux), ``fn`` runs here, as it is."""
    if niceness <= 0 or not hasattr(os, "setpriority") or not sys.platform.startswith("linux"):
        return fn(*args)
    done: dict[str, Any] = {}
    context = contextvars.copy_context()

    def body() -> None:
        yield_to_searches(niceness, thread=True)
        try:
            done["value"] = context.run(fn, *args)
        except BaseException as e:  # handed to the caller, whatever it is
            done["error"] = e

    worker = threading.Thread(target=body, name="semfs-ingest", daemon=True)  # (Ctrl-C in the caller ends it)
    worker.start()
    worker.join()
    if "error" in done:
        raise done["error"]
    return done["value"]  # type: ignore[no-any-return]
