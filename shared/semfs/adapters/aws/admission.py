"""``DynamoAdmission``: the slots of files in flight, as one DynamoDB item holding a string set of the
executions that hold one. A conditional ``ADD`` takes a slot only while the set is smaller than the
bound, so concurrent starters never exceed it; ``DELETE`` frees one. Both are idempotent per name
(adding a name twice or removing it twice changes nothing), which a counter would not be: a retried
Finalize, a redelivered status-change event and the reconcile sweep may all free the same slot.

The item stays small: 50 slots of ~50-character names are ~2.5 KB (DynamoDB's item limit is 400 KB,
so the bound tops out near 5,000).
"""

from __future__ import annotations

from typing import Any

from semfs.config import Settings

from .clients import call, error_code

GATE_ID = "process-file"


def gate_table_definition(name: str) -> dict[str, Any]:
    """The gate table's key (template.yaml declares the same; a test compares them)."""
    return {
        "TableName": name,
        "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    }


class DynamoAdmission:
    def __init__(self, settings: Settings) -> None:
        assert settings.aws.gate_table
        self._settings = settings
        self._table = settings.aws.gate_table
        self._limit = settings.aws.max_in_flight

    def _update(self, **kwargs: Any) -> bool:
        from botocore.exceptions import ClientError

        key = {"id": {"S": GATE_ID}}
        try:
            call(
                self._settings,
                "dynamodb",
                "update_item",
                "the admission gate",
                TableName=self._table,
                Key=key,
                **kwargs,
            )
        except ClientError as e:
            if error_code(e) == "ConditionalCheckFailedException":
                return False
            raise
        return True

    def admit(self, name: str) -> bool:
        return self._update(
            UpdateExpression="ADD holders :one",
            ConditionExpression="attribute_not_exists(holders) OR size(holders) < :limit OR contains(holders, :name)",
            ExpressionAttributeValues={
                ":one": {"SS": [name]},
                ":name": {"S": name},
                ":limit": {"N": str(self._limit)},
            },
        )

    def release(self, name: str) -> None:
        self._update(UpdateExpression="DELETE holders :one", ExpressionAttributeValues={":one": {"SS": [name]}})

    def holders(self) -> list[str]:
        key = {"id": {"S": GATE_ID}}
        found = call(
            self._settings,
            "dynamodb",
            "get_item",
            "the admission gate",
            TableName=self._table,
            Key=key,
            ConsistentRead=True,
        )
        return sorted(found.get("Item", {}).get("holders", {}).get("SS", []))
