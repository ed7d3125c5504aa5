"""``StepFunctionsStarter``: one named Standard execution per file (the name is the idempotency key)."""

from __future__ import annotations

import json
from typing import Any

from semfs.config import Settings

from .clients import client, error_code, is_retryable, retryable


class StepFunctionsStarter:
    """StartExecution with a deterministic name; a name already used is a no-op."""

    def __init__(self, settings: Settings) -> None:
        assert settings.state_machine_arn
        self._settings = settings
        self._arn = settings.state_machine_arn

    def start(self, name: str, state: dict[str, Any]) -> dict[str, Any] | None:
        from botocore.exceptions import ClientError

        sfn = client(self._settings, "stepfunctions")
        try:
            sfn.start_execution(stateMachineArn=self._arn, name=name, input=json.dumps(state))
        except ClientError as e:
            if error_code(e) == "ExecutionAlreadyExists":
                return None  # at-least-once delivery: this file's execution was already started
            if is_retryable(e):
                raise retryable(e, "StartExecution failed") from e
            raise
        return None

    def close(self) -> None:
        return None  # executions run in AWS
