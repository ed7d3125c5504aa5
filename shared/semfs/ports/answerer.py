"""Who writes a grounded answer from retrieved passages: the LLM when one is configured, else extraction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from semfs.domain.models import Citation, IndexDoc


class Answerer(Protocol):
    """Answers a question from passages retrieved in the caller's scope, citing each claim. The composition
    root chooses one; ``ask`` verifies nothing about which it got (each checks its own citations)."""

    @property
    def method(self) -> str:
        """``"llm"`` or ``"extractive"``, reported with the answer."""
        ...

    def answer(
        self, question: str, keyword_query: str, passages: Sequence[IndexDoc]
    ) -> tuple[str, list[Citation]] | str:
        """The answer and its citations (every quote occurs in its passage), or why there is none."""
        ...
