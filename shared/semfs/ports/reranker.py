from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Reranker(Protocol):
    """Scores passages against a query (a cross-encoder behind a ``/rerank`` endpoint)."""

    @property
    def top_n(self) -> int:
        """How many of the fused top files it reorders (0: none, the fused order stands)."""
        ...

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score per document, in input order, higher is better. Raises
        ``RerankUnavailable`` when the endpoint fails: the caller keeps the fused order."""
        ...
