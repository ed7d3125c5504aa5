from __future__ import annotations

from typing import Any, Protocol


class EventPublisher(Protocol):
    """Domain events (FileIndexed, FileFailed, FileDeleted) with ids only — never text."""

    def publish(self, detail_type: str, detail: dict[str, Any]) -> None:
        """Publish one event. Best effort: failures are logged, never raised into the pipeline."""
        ...
