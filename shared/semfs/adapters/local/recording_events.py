"""Local event publishers: log the event (ids only) and call in-process subscribers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from semfs.observability import get_logger

log = get_logger(__name__)


class LogEventPublisher:
    """Logs each event and hands it to subscribers; a failing subscriber never fails the pipeline."""

    def __init__(self) -> None:
        self.subscribers: list[Callable[[str, dict[str, Any]], None]] = []

    def publish(self, detail_type: str, detail: dict[str, Any]) -> None:
        log.info("event", detail_type=detail_type, file_id=detail.get("file_id"), outcome=detail.get("outcome"))
        for subscriber in self.subscribers:
            try:
                subscriber(detail_type, detail)
            except Exception as e:  # a subscriber is not allowed to break ingestion
                log.warning("event subscriber failed", detail_type=detail_type, error=type(e).__name__)


class RecordingEventPublisher:
    """Test double: remembers every event."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def publish(self, detail_type: str, detail: dict[str, Any]) -> None:
        self.events.append((detail_type, dict(detail)))
