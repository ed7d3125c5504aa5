from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    """Text → unit-length vectors. Loads its model or connects on first use, never in ``__init__``."""

    @property
    def model(self) -> str:
        """The model id stored with every vector (re-embedding compares it)."""
        ...

    @property
    def dim(self) -> int:
        """Vector dimension."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order. Deterministic for a given model.
        Raises ``EmbeddingUnavailable`` (retryable) when the model or endpoint cannot answer, and
        ``EmbeddingKeyRefused`` (permanent) when the endpoint refuses the key."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """The vector for a search query. Raises as ``embed_documents``."""
        ...
