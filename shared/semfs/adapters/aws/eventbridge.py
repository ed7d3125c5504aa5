"""``EventBridgePublisher``: FileIndexed / FileFailed / FileDeleted events, ids only."""

from __future__ import annotations

import json
from typing import Any

from semfs.config import Settings
from semfs.observability import get_logger

from .clients import client

log = get_logger(__name__)


class EventBridgePublisher:
    """PutEvents on the configured bus. Best effort: a failure is logged, never raised."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def publish(self, detail_type: str, detail: dict[str, Any]) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        entry = {
            "Source": "semfs",
            "DetailType": detail_type,
            "Detail": json.dumps(detail),
            "EventBusName": self._settings.aws.event_bus,
        }
        try:
            result = client(self._settings, "events").put_events(Entries=[entry])
            if result.get("FailedEntryCount"):
                log.warning("event not published", detail_type=detail_type, file_id=detail.get("file_id"))
        except (ClientError, BotoCoreError) as e:
            log.warning("event not published", detail_type=detail_type, error=type(e).__name__)
