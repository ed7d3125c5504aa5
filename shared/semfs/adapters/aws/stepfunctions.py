"""``StepFunctionsStarter``: one named Standard execution per file attempt (the name is the idempotency
key), admitted through the gate when one is configured: a file that finds every slot taken waits in the
admission queue (``functions/admit`` starts it when a slot frees) instead of running into throttling."""

from __future__ import annotations

import json
import random
from typing import Any

from semfs.config import Settings
from semfs.observability import get_logger
from semfs.ports.admission import Admission

from .clients import call, error_code

log = get_logger(__name__)


class StepFunctionsStarter:
    """StartExecution with a deterministic name; a name already used is a no-op."""

    def __init__(self, settings: Settings, admission: Admission | None = None) -> None:
        assert settings.aws.state_machine_arn
        assert admission is None or settings.aws.admission_queue_url, "the gate needs SEMFS_ADMISSION_QUEUE_URL"
        self._settings = settings
        self._arn = settings.aws.state_machine_arn
        self._admission = admission

    def start(self, name: str, state: dict[str, Any]) -> dict[str, Any] | None:
        tenant = str(state["tenant_id"])
        if self._admission is not None and not self._admission.admit(name, tenant):
            self._defer(name, state)
            return None
        try:
            self._start(name, state)
        except BaseException:
            if self._admission is not None:
                self._admission.release(name, tenant)  # nothing runs under this name: its slot is free
            raise
        return None

    def _start(self, name: str, state: dict[str, Any]) -> None:
        from botocore.exceptions import ClientError

        try:
            call(
                self._settings,
                "stepfunctions",
                "start_execution",
                "StartExecution failed",
                stateMachineArn=self._arn,
                name=name,
                input=json.dumps(state),
            )
        except ClientError as e:
            if error_code(e) != "ExecutionAlreadyExists":
                raise
            # at-least-once delivery: this attempt was already started. If it has ended since, the
            # slot just taken again for it would never be freed.
            if self._admission is not None and not self.running(name):
                self._admission.release(name, str(state["tenant_id"]))

    def running(self, name: str) -> bool:
        from botocore.exceptions import ClientError

        execution = self._arn.replace(":stateMachine:", ":execution:", 1) + f":{name}"
        try:
            desc = call(
                self._settings,
                "stepfunctions",
                "describe_execution",
                "DescribeExecution failed",
                executionArn=execution,
            )
        except ClientError as e:
            if error_code(e) == "ExecutionDoesNotExist":
                return False
            raise
        return bool(desc["status"] == "RUNNING")

    def _defer(self, name: str, state: dict[str, Any]) -> None:
        """Every slot is taken: queue the start. Each try is a new message, so a file waiting through
        many tries never reaches the queue's dead-letter count; jitter spreads the retries."""
        base = self._settings.aws.admission_delay_s
        delay = min(900, base + random.randint(0, base))
        call(
            self._settings,
            "sqs",
            "send_message",
            "queueing a file for admission failed",
            QueueUrl=self._settings.aws.admission_queue_url,
            MessageBody=json.dumps({"name": name, "state": state}),
            DelaySeconds=delay,
        )
        log.info("file waits for a slot", execution=name, delay_s=delay)

    def close(self) -> None:
        return None  # executions run in AWS
