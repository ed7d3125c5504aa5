from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the parsers load where files are read, not where records are listed
    from semfs.extractors.dispatch import ExtractOutput


class Extractor(Protocol):
    """Bytes → text and structure, inside the bounds the root chose (a worker process locally,
    the Lambda's own limits in AWS)."""

    def extract(self, data: bytes, filename: str) -> ExtractOutput:
        """Sniff, guard and parse one file. Raises a ``PermanentError`` leaf with its outcome for every
        bad input (``FAILED_TIMEOUT``/``FAILED_MEMORY`` when a bound is hit); never hangs."""
        ...

    def render(self, data: bytes, kind: str, pages: list[int], dpi: int) -> list[tuple[int, bytes]]:
        """PNG images of these 1-based ``pages`` of a PDF or image (for page-by-page OCR engines)."""
        ...

    def pdf_pages(self, data: bytes, pages: list[int]) -> bytes:
        """A PDF of these 1-based pages, in order (parsed in the same bounds as ``extract``)."""
        ...

    def run(self, fn: Callable[..., Any], args: tuple[Any, ...], timeout_s: float) -> Any:
        """``fn(*args)`` in the same bounds, for other work on a document's text (enrichment): a module-level
        function and picklable arguments. Raises ``TimeoutError`` past ``timeout_s`` (the worker is
        killed) and ``MemoryError`` or ``ChildProcessError`` when the worker dies."""
        ...

    def close(self) -> None:
        """Stop any worker; idempotent."""
        ...
