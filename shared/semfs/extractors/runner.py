"""Runs ``extract_file`` in a bounded worker process (docs/outcomes.md: what each bound ends as).

A pebble process pool (one worker, recycled every ``max_tasks`` files) started from a forkserver,
so the worker never inherits the parent's model or threads. The worker's address space is capped
with ``resource.RLIMIT_AS``; a parse that outlives ``timeout_s`` has its worker killed. Either way
the file ends with an outcome code, and the parent process is unharmed.
"""

from __future__ import annotations

import multiprocessing
import resource
import sys
import threading
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from semfs.domain.errors import UNGUARDED_MAIN, ParseFailed, PermanentError, SemfsError
from semfs.domain.outcomes import Outcome

if TYPE_CHECKING:  # the parsers load when the first file is read, not when the container is built
    from semfs.extractors.dispatch import ExtractOutput
    from semfs.extractors.limits import ExtractLimits

RECYCLE_AFTER_BYTES = 16 * 1024 * 1024  # input over this, or extracted text over the next: a fresh worker after
RECYCLE_AFTER_CHARS = 1_000_000

# A small file of plain text, Markdown or source code is read here, not in the worker: its parsers are pure
# Python and linear in the input, so 32 KiB of it takes ~7 ms and cannot exhaust memory, while a round trip
# through the worker (pickling, pebble's pipes and its threads) cost more CPU than the reading itself
# (bench/ingest_throughput.py: ~6 ms a file beside the model, issue 47.11). Every other kind, and anything
# larger, keeps its bounds.
IN_PROCESS_BYTES = 32 * 1024
IN_PROCESS_PARSERS = frozenset({"extract_plain_text", "extract_markdown", "extract_code"})


def read_here(data: bytes, filename: str) -> bool:
    """Whether ``data`` is small plain text that is read in the calling process (``IN_PROCESS_PARSERS``)."""
    if len(data) > IN_PROCESS_BYTES:
        return False
    from semfs.extractors.formats import reader_of
    from semfs.extractors.sniff import sniff

    try:
        kind = sniff(data, filename).kind
        return reader_of(kind).parser in IN_PROCESS_PARSERS
    except (SemfsError, KeyError):  # refused or skipped: the worker's path gives the same answer
        return False


def _limit_memory(max_bytes: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))


def _worker_did_not_start(error: RuntimeError) -> SemfsError | RuntimeError:
    """What to raise when the pool answers ``RuntimeError``: a worker re-importing a script that runs semfs at
    import fails that way (``multiprocessing`` refuses a process started while one is bootstrapping), and every
    file then ended ``FAILED_INTERNAL`` with no hint. Said plainly when this process was started from a script
    file; any other ``RuntimeError`` is raised as it is."""
    main = sys.modules.get("__main__")
    if getattr(main, "__file__", None) and getattr(main, "__spec__", None) is None:  # started from a script file
        return PermanentError(UNGUARDED_MAIN, outcome=Outcome.FAILED_INTERNAL)
    return error


class SubprocessExtractor:
    """Extraction with wall-clock and memory bounds. The pool starts on first use."""

    def __init__(self, limits: ExtractLimits, timeout_s: float, memory_mb: int, max_tasks: int = 200) -> None:
        self._limits = limits
        self._timeout = timeout_s
        self._memory = memory_mb * 1024 * 1024
        self._max_tasks = max_tasks
        self._pool: Any = None
        self._lock = threading.Lock()

    def _get_pool(self) -> Any:
        with self._lock:
            if self._pool is None or not self._pool.active:
                from pebble import ProcessPool

                self._pool = ProcessPool(
                    max_workers=1,
                    max_tasks=self._max_tasks,
                    initializer=_limit_memory,
                    initargs=(self._memory,),
                    context=multiprocessing.get_context("forkserver"),
                )
            return self._pool

    def extract(self, data: bytes, filename: str) -> ExtractOutput:
        from pebble import ProcessExpired

        from semfs.extractors.dispatch import extract_file

        if read_here(data, filename):
            return extract_file(data, filename, self._limits)
        try:
            future = self._get_pool().schedule(extract_file, args=(data, filename, self._limits), timeout=self._timeout)
            out: ExtractOutput = future.result()
            if len(data) > RECYCLE_AFTER_BYTES or sum(len(b.text) for b in out.document.blocks) > RECYCLE_AFTER_CHARS:
                self._recycle()  # a large file grew the worker's heap: the next file gets a fresh process
            return out
        except SemfsError:
            raise
        except FutureTimeout as e:
            raise PermanentError(
                f"parsing took longer than {self._timeout:.0f}s", outcome=Outcome.FAILED_TIMEOUT
            ) from e
        except ProcessExpired as e:
            if e.exitcode in (-9, 137):
                raise PermanentError("the parser was killed (memory)", outcome=Outcome.FAILED_MEMORY) from e
            if e.exitcode in (-6, 134):  # SIGABRT: native code that could not allocate under RLIMIT_AS aborts
                raise PermanentError(
                    "the parser aborted (out of memory in native code)", outcome=Outcome.FAILED_MEMORY
                ) from e
            raise ParseFailed(f"the parser crashed (exit code {e.exitcode})") from e
        except MemoryError as e:
            raise PermanentError("the parser ran out of memory", outcome=Outcome.FAILED_MEMORY) from e
        except RuntimeError as e:
            raise _worker_did_not_start(e) from e

    def _recycle(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
            pool.join(timeout=10)

    def render(self, data: bytes, kind: str, pages: list[int], dpi: int) -> list[tuple[int, bytes]]:
        """Page images for OCR, rendered in the bounded worker."""
        from pebble import ProcessExpired

        from semfs.extractors.dispatch import render_pages

        args = (data, kind, pages, dpi, self._limits.max_image_pixels)
        future = self._get_pool().schedule(render_pages, args=args, timeout=self._timeout)
        try:
            return future.result()  # type: ignore[no-any-return]
        except SemfsError:
            raise
        except FutureTimeout as e:
            raise PermanentError("rendering pages for OCR took too long", outcome=Outcome.FAILED_TIMEOUT) from e
        except (ProcessExpired, MemoryError) as e:
            raise PermanentError("rendering pages for OCR ran out of memory", outcome=Outcome.FAILED_MEMORY) from e
        except Exception as e:  # pdfium / Pillow errors on a page
            raise PermanentError(f"a page could not be rendered: {type(e).__name__}", outcome=Outcome.FAILED_OCR) from e

    def pdf_pages(self, data: bytes, pages: list[int]) -> bytes:
        """Some pages as a PDF of their own, cut in the bounded worker."""
        from pebble import ProcessExpired

        from semfs.extractors.pdf import pdf_pages as cut_pages

        future = self._get_pool().schedule(cut_pages, args=(data, pages), timeout=self._timeout)
        try:
            return future.result()  # type: ignore[no-any-return]
        except FutureTimeout as e:
            raise PermanentError("cutting the pages for OCR took too long", outcome=Outcome.FAILED_TIMEOUT) from e
        except (ProcessExpired, MemoryError) as e:
            raise PermanentError("cutting the pages for OCR ran out of memory", outcome=Outcome.FAILED_MEMORY) from e
        except Exception as e:  # pdfium on a damaged file
            raise PermanentError(f"the pages could not be cut: {type(e).__name__}", outcome=Outcome.FAILED_OCR) from e

    def run(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout_s: float) -> Any:
        """``fn(*args)`` in the worker, under its own deadline (see the Extractor port)."""
        from pebble import ProcessExpired

        future = self._get_pool().schedule(fn, args=args, timeout=timeout_s)
        try:
            return future.result()
        except FutureTimeout as e:
            raise TimeoutError(f"the work took longer than {timeout_s:.0f}s") from e
        except ProcessExpired as e:
            if e.exitcode in (-9, 137, -6, 134):
                raise MemoryError("the worker ran out of memory") from e
            raise ChildProcessError(f"the worker crashed (exit code {e.exitcode})") from e

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.close()
                self._pool.join(timeout=5)
                self._pool = None


class InProcessExtractor:
    """Extraction in the calling process: for Lambda, whose own timeout and memory bound it."""

    def __init__(self, limits: ExtractLimits) -> None:
        self._limits = limits

    def extract(self, data: bytes, filename: str) -> ExtractOutput:
        from semfs.extractors.dispatch import extract_file

        return extract_file(data, filename, self._limits)

    def render(self, data: bytes, kind: str, pages: list[int], dpi: int) -> list[tuple[int, bytes]]:
        from semfs.extractors.dispatch import render_pages

        return render_pages(data, kind, pages, dpi, self._limits.max_image_pixels)

    def pdf_pages(self, data: bytes, pages: list[int]) -> bytes:
        from semfs.extractors.pdf import pdf_pages as cut_pages

        return cut_pages(data, pages)

    def run(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout_s: float) -> Any:
        """``fn(*args)`` here: the Lambda's own timeout bounds it."""
        return fn(*args)

    def close(self) -> None:
        return None
