"""Structured logs: events with keys, never document text, prompts, embeddings or signed URLs."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

_configured = False


class _KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        payload: dict[str, Any] = {
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        payload.update(getattr(record, "keys", {}))
        return json.dumps(payload, default=str)


class Logger:
    """``log.info("ocr finished", pages=3, engine="tesseract")`` → one JSON line."""

    def __init__(self, name: str) -> None:
        self._log = logging.getLogger(name)

    def _emit(self, level: int, message: str, keys: dict[str, Any]) -> None:
        if self._log.isEnabledFor(level):
            self._log.log(level, message, extra={"keys": keys})

    def debug(self, message: str, **keys: Any) -> None:
        self._emit(logging.DEBUG, message, keys)

    def info(self, message: str, **keys: Any) -> None:
        self._emit(logging.INFO, message, keys)

    def warning(self, message: str, **keys: Any) -> None:
        self._emit(logging.WARNING, message, keys)

    def error(self, message: str, **keys: Any) -> None:
        self._emit(logging.ERROR, message, keys)


def get_logger(name: str) -> Logger:
    return Logger(name)


def configure(level: str = "WARNING") -> None:
    """Send semfs logs to stderr as JSON lines (the CLI keeps stdout for results)."""
    global _configured  # noqa: PLW0603 - configure once per process
    if _configured:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_KeyValueFormatter())
    root = logging.getLogger("semfs")
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False
    _configured = True


def count(metric: str, value: float = 1) -> None:
    """One occurrence of ``metric``: in Lambda a CloudWatch metric (namespace ``semfs``, dimension
    ``service=semfs``, the alarms' in template.yaml) written as an embedded-metric-format line on stdout,
    which CloudWatch Logs turns into the metric; elsewhere a log line."""
    import os
    import time

    if os.environ.get("AWS_LAMBDA_FUNCTION_NAME"):
        emf = {
            "_aws": {
                "Timestamp": int(time.time() * 1000),
                "CloudWatchMetrics": [
                    {"Namespace": "semfs", "Dimensions": [["service"]], "Metrics": [{"Name": metric, "Unit": "Count"}]}
                ],
            },
            "service": "semfs",
            metric: value,
        }
        sys.stdout.write(json.dumps(emf) + "\n")  # CloudWatch reads EMF from the function's output
        sys.stdout.flush()
    else:
        get_logger("semfs.metrics").info("metric", metric=metric, value=value)
