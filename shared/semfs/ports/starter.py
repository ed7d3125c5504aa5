from __future__ import annotations

from typing import Any, Protocol


class PipelineStarter(Protocol):
    """Starts the ProcessFile state machine for one registered file."""

    def start(self, name: str, state: dict[str, Any]) -> dict[str, Any] | None:
        """Start (or, for a name already used, do not start again) the execution ``name``.
        The local starter runs it to completion and returns the final state; AWS returns ``None``."""
        ...

    def running(self, name: str) -> bool:
        """Whether the execution ``name`` is still waiting or running (not closed, not unknown)."""
        ...

    def close(self) -> None:
        """Stop any background workers after the job each is running; idempotent."""
        ...
