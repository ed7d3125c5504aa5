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
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from semfs.observability import get_logger

log = get_logger(__name__)
T = TypeVar("T")
Item = TypeVar("Item")


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


def each_lowered(
    niceness: int, fn: Callable[[Item], T], items: Iterable[Item], at_once: int = 1
) -> Iterator[tuple[Item, T]]:
    """``fn(item)`` for each of ``items``, ``at_once`` at a time, on threads of their own at ``niceness``; yields
    ``(item, result)`` as each finishes. Only those threads (and the worker processes they start) step back: the
    caller's process and thread keep their priority, since an unprivileged process cannot raise its priority
    again once lowered (``semfs ingest`` used as a library left its caller's whole process at nice 10, issue
    47.10). Where threads have no priorities of their own (not Linux), they run at the caller's. An error ``fn``
    raises ends the iteration there: the items not yet started never are, those running finish first. The
    threads are daemons: Ctrl-C in the caller ends the process at once, as it did with one file at a time (a
    file stopped half-way is finished by the next run; every stage is idempotent)."""
    import queue

    context = contextvars.copy_context()
    done: queue.Queue[tuple[Item, T | None, BaseException | None]] = queue.Queue()

    def body(item: Item) -> None:
        if sys.platform.startswith("linux"):
            yield_to_searches(niceness, thread=True)
        try:
            done.put((item, context.copy().run(fn, item), None))
        except BaseException as e:  # handed to the caller, whatever it is
            done.put((item, None, e))

    todo, running, failed = iter(items), 0, None
    while True:
        while failed is None and running < max(1, at_once) and (item := next(todo, _END)) is not _END:
            threading.Thread(target=body, args=(item,), name="semfs-ingest", daemon=True).start()
            running += 1
        if not running:
            if failed is not None:
                raise failed
            return
        item, result, error = done.get()
        running -= 1
        if error is not None:
            failed = failed or error
        elif failed is None:
            yield item, result  # type: ignore[misc]


_END: Any = object()
