"""``DynamoAdmission``: the slots of files in flight, as one DynamoDB item holding a string set of the
executions that hold one. A conditional ``ADD`` takes a slot only while the set is smaller than the
bound, so concurrent starters never exceed it; ``DELETE`` frees one. Both are idempotent per name
(adding a name twice or removing it twice changes nothing), which a counter would not be: a retried
Finalize, a redelivered status-change event and the reconcile sweep may all free the same slot.

Each tenant also has an item of its own holding its executions, bounded by its share
(``SEMFS_TENANT_MAX_IN_FLIGHT``, four fifths of the slots unless set): a slot is taken in both items in
one transaction, so one tenant's burst of 1,000 files never holds every slot, and another tenant's file
starts as soon as a slot frees. The global set names each holder with its tenant (``name@tenant``), so a
slot can be freed knowing only its execution's name (the reconcile sweep).

The item stays small: 50 slots of ~50-character names are ~2.5 KB (DynamoDB's item limit is 400 KB,
so the bound tops out near 5,000).
"""

from __future__ import annotations

import hashlib
import random
import time
from typing import Any

from semfs.config import Settings
from semfs.domain.errors import RetryableError

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
        self._tenant_limit = settings.aws.tenant_slots

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

    def _bounded_add(self, key: dict[str, Any], member: str, limit: int) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self._table,
                "Key": key,
                "UpdateExpression": "ADD holders :one",
                "ConditionExpression": (
                    "attribute_not_exists(holders) OR size(holders) < :limit OR contains(holders, :me)"
                ),
                "ExpressionAttributeValues": {
                    ":one": {"SS": [member]},
                    ":me": {"S": member},
                    ":limit": {"N": str(limit)},
                },
            }
        }

    def _delete(self, key: dict[str, Any], members: list[str]) -> dict[str, Any]:
        return {
            "Update": {
                "TableName": self._table,
                "Key": key,
                "UpdateExpression": "DELETE holders :gone",
                "ExpressionAttributeValues": {":gone": {"SS": members}},
            }
        }

    def _transact(self, items: list[dict[str, Any]]) -> bool:
        """Both updates or neither; ``False`` when a condition refused (a bound is reached)."""
        from botocore.exceptions import ClientError

        for attempt in range(8):
            try:
                call(self._settings, "dynamodb", "transact_write_items", "the admission gate", TransactItems=items)
                return True
            except ClientError as e:
                if error_code(e) != "TransactionCanceledException":
                    raise
                reasons = [r.get("Code") for r in e.response.get("CancellationReasons", [])]
                if "ConditionalCheckFailed" in reasons:
                    return False
                time.sleep(random.uniform(0, 0.05 * 2**attempt))  # another starter touched an item
        raise RetryableError("the admission gate kept conflicting")

    def admit(self, name: str, tenant_id: str) -> bool:
        return self._transact(
            [
                self._bounded_add(_GATE, _entry(name, tenant_id), self._limit),
                self._bounded_add(_tenant_gate(tenant_id), name, self._tenant_limit),
            ]
        )

    def release(self, name: str, tenant_id: str | None = None) -> None:
        if tenant_id is None:  # (the reconcile sweep knows the name only)
            tenant_id = next((t for n, t in self._entries() if n == name and t is not None), None)
        if tenant_id is None:  # a slot taken before slots had tenants, or none at all
            self._update(UpdateExpression="DELETE holders :one", ExpressionAttributeValues={":one": {"SS": [name]}})
            return
        # the entry, and the bare name an older gate wrote
        self._transact(
            [self._delete(_GATE, [_entry(name, tenant_id), name]), self._delete(_tenant_gate(tenant_id), [name])]
        )

    def _entries(self) -> list[tuple[str, str | None]]:
        found = call(
            self._settings,
            "dynamodb",
            "get_item",
            "the admission gate",
            TableName=self._table,
            Key=_GATE,
            ConsistentRead=True,
        )
        members = found.get("Item", {}).get("holders", {}).get("SS", [])
        return [(m.partition("@")[0], m.partition("@")[2] or None) for m in members]

    def holders(self) -> list[str]:
        return sorted({name for name, _ in self._entries()})


_GATE = {"id": {"S": GATE_ID}}


def _entry(name: str, tenant_id: str) -> str:
    return f"{name}@{tenant_id}"  # (execution names are [A-Za-z0-9-_]: the first "@" ends the name)


def _tenant_gate(tenant_id: str) -> dict[str, Any]:
    return {"id": {"S": f"{GATE_ID}#{hashlib.sha256(tenant_id.encode()).hexdigest()[:24]}"}}
