from __future__ import annotations

from typing import Any, Protocol


class ChatModel(Protocol):
    """A chat model that answers with JSON matching a strict schema (no tools, no free text)."""

    def complete_json(self, system: str, user: str, schema: dict[str, Any]) -> dict[str, Any]:
        """One structured-output call. The answer is untrusted: callers validate it. Raises
        ``EnrichmentFailed`` (retryable) when the model cannot answer or answers off-schema."""
        ...
