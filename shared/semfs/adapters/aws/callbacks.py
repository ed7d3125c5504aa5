"""``DynamoJobWaits``: a Step Functions task token and the end of the Textract job it waits on, met in
one item of the gate table (``id = job#<JobId>``).

Each side writes its half with one ``UpdateItem`` that returns the whole item. DynamoDB applies the two
updates one after the other, so exactly one of them sees both halves, and that one sends
``SendTaskSuccess``: a job that ends before its waiter is recorded (a one-page scan can) still resumes
its execution, and no execution is resumed twice. The item expires a day later (the table's TTL).
"""

from __future__ import annotations

import time
from typing import Any

from semfs.config import Settings
from semfs.observability import get_logger

from .clients import call, error_code

log = get_logger(__name__)
KEEP_S = 24 * 3600
# SendTaskSuccess on a token whose step has gone on (timed out, execution stopped): nothing to resume
CLOSED_TOKEN = frozenset({"TaskTimedOut", "TaskDoesNotExist", "InvalidToken"})


class DynamoJobWaits:
    def __init__(self, settings: Settings) -> None:
        assert settings.aws.gate_table
        self._settings = settings
        self._table = settings.aws.gate_table

    def _record(self, job_id: str, expression: str, values: dict[str, Any]) -> dict[str, Any]:
        expiry = {":expiration": {"N": str(int(time.time()) + KEEP_S)}}
        found = call(
            self._settings,
            "dynamodb",
            "update_item",
            "the OCR job's waiter",
            TableName=self._table,
            Key={"id": {"S": f"job#{job_id}"}},
            UpdateExpression=f"SET {expression}, expiration = :expiration",
            ExpressionAttributeValues={**values, **expiry},
            ReturnValues="ALL_NEW",
        )
        return dict(found.get("Attributes", {}))

    def _resume(self, job_id: str, token: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            call(
                self._settings,
                "stepfunctions",
                "send_task_success",
                "resuming the OCR wait",
                taskToken=token,
                output="{}",
            )
        except ClientError as e:
            if error_code(e) in CLOSED_TOKEN:
                log.info("the waiting step has gone on", job_id=job_id, code=error_code(e))
                return False
            raise
        return True

    def wait(self, job_id: str, token: str) -> bool:
        item = self._record(job_id, "task_token = :token", {":token": {"S": token}})
        return "ended_at" in item and self._resume(job_id, token)

    def ended(self, job_id: str) -> bool:
        item = self._record(job_id, "ended_at = :now", {":now": {"N": str(int(time.time()))}})
        token = item.get("task_token", {}).get("S")
        return token is not None and self._resume(job_id, token)
