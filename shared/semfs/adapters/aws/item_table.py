"""The item table: what sits beside the file records, as items of one DynamoDB table (pk, sk), and
``ItemTable``, what its repositories share. Each repository is a module of its own: threads, messages
and contacts (``dynamo_mail``), the tag vocabulary and aliases (``dynamo_tags``), saved views
(``dynamo_views``), the entities files name (``dynamo_entities``), users and groups
(``dynamo_principals``), mail accounts (``dynamo_mail_accounts``). The template calls the table
``EntityTable`` (``SEMFS_ENTITY_TABLE``), a name kept because renaming a DynamoDB resource replaces it.

| item | pk | sk |
|---|---|---|
| thread | ``T#{tenant}#{thread}`` | ``#`` (subject) |
| the tenant's threads | ``TL#{tenant}`` | ``{thread}`` |
| a message of a thread / a participant | ``T#{tenant}#{thread}`` | ``M#{message}`` / ``P#{address}`` |
| message → thread | ``M#{tenant}#{message}`` | ``#`` |
| subject among the same people → thread | ``S#{tenant}#{key}`` | ``#`` |
| contact | ``C#{tenant}`` | ``{contact}`` (``messages`` counter) |
| a message a contact is on | ``CM#{tenant}#{contact}`` | ``{message}`` |
| tag (``files`` counter) | ``V#{tenant}`` | ``{tag}`` |
| a file a tag is on | ``VU#{tenant}#{tag}`` | ``{file}`` |
| alias | ``A#{tenant}`` | ``{source}`` (``target``) |
| saved view (``DynamoViewRepository``) | ``SV#{tenant}`` | ``{name}`` (``data``: the view as JSON) |
| mail account (``DynamoMailAccountRepository``) | ``MA#{tenant}`` | ``{account}`` |
| a folder's cursor | ``MC#{tenant}#{account}`` | ``{folder}`` |
| user / group (``DynamoPrincipalRepository``) | ``U#{tenant}`` / ``G#{tenant}`` | ``{name}`` (``data``: as JSON) |
| entity named in files (``DynamoEntityRepository``; ``files`` counter) | ``N#{tenant}`` | ``{kind}:{key}`` |
| a file naming an entity | ``NF#{tenant}#{entity}`` | ``{file}`` |
| an entity a file names | ``FN#{tenant}#{file}`` | ``{entity}`` |

The three entity items serve the three reads: the files of an entity (one query of ``NF#``), the
entities of a file (``FN#``), a tenant's entities by kind (``N#`` with ``begins_with(sk, "{kind}:")``).

Nothing is read-modified-written: membership items are plain idempotent puts, and a contact's counter
(and a tag's) moves only in the same transaction that creates its (contact, message) — or (tag, file) —
item under ``attribute_not_exists``, so a redelivery or a retry is counted once and concurrent writers
both land.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator, Sequence
from typing import Any

from semfs.config import Settings
from semfs.deadlines import resume_cursor, stop_if_late
from semfs.domain.errors import PermanentError, RetryableError
from semfs.domain.outcomes import Outcome

from .clients import client, delete_keys, error_code, is_retryable, paginate, retryable

META = "#"
ERASE_PAGE = 1_000  # items a tenant's erasure reads between two looks at its pass's deadline


def entity_table_definition(name: str) -> dict[str, Any]:
    """The table's keys (template.yaml declares the same; a test compares them)."""
    return {
        "TableName": name,
        "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
    }


def string_value(value: str) -> dict[str, str]:
    """A DynamoDB string attribute."""
    return {"S": value}


_s = string_value


class ItemTable:
    """What both entity repositories share: the table, translated errors, paged queries, and the
    counted membership write."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    @property
    def _table(self) -> str:
        if not self._settings.aws.entity_table:
            raise PermanentError("SEMFS_ENTITY_TABLE is not set", outcome=Outcome.FAILED_INTERNAL)
        return self._settings.aws.entity_table

    def _call(self, op: str, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        ddb = client(self._settings, "dynamodb")
        try:
            return getattr(ddb, op)(**kwargs)
        except ClientError as e:
            if is_retryable(e):
                raise retryable(e, f"dynamodb {op}") from e
            raise
        except BotoCoreError as e:
            raise retryable(e, f"dynamodb {op}") from e

    def _get(self, pk: str, sk: str = META) -> dict[str, Any] | None:
        item: dict[str, Any] | None = self._call(
            "get_item", TableName=self._table, Key={"pk": _s(pk), "sk": _s(sk)}, ConsistentRead=True
        ).get("Item")
        return item

    def _query(self, pk: str) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk",
            "ExpressionAttributeValues": {":pk": _s(pk)},
            "ConsistentRead": True,
        }
        yield from paginate(self._call, "query", kwargs)

    def _put(self, item: dict[str, Any], *, if_absent: bool = False) -> None:
        from botocore.exceptions import ClientError

        kwargs: dict[str, Any] = {"TableName": self._table, "Item": item}
        if if_absent:
            kwargs["ConditionExpression"] = "attribute_not_exists(pk)"
        try:
            self._call("put_item", **kwargs)
        except ClientError as e:
            if error_code(e) != "ConditionalCheckFailedException":
                raise

    def _count_once(
        self, member: dict[str, Any], update: dict[str, Any], counter: str, *, also: Sequence[dict[str, Any]] = ()
    ) -> None:
        """Create ``member`` (a (thing, message/file) item) and run ``update`` with ``ADD counter 1`` in one
        transaction (with the ``also`` writes); if ``member`` existed, only ``update`` runs. Retries
        transaction conflicts."""
        put = {"Put": {"TableName": self._table, "Item": member, "ConditionExpression": "attribute_not_exists(pk)"}}
        self._counted(put, update, counter, 1, also)

    def _counted(
        self, write: dict[str, Any], update: dict[str, Any], counter: str, by: int, also: Sequence[dict[str, Any]]
    ) -> None:
        from botocore.exceptions import ClientError

        add = {
            **update,
            "UpdateExpression": f"{update['UpdateExpression']} ADD {counter} :one".strip(),
            "ExpressionAttributeValues": {**update.get("ExpressionAttributeValues", {}), ":one": {"N": str(by)}},
        }
        for attempt in range(8):
            try:
                self._call("transact_write_items", TransactItems=[write, {"Update": add}, *also])
                return
            except ClientError as e:
                if error_code(e) != "TransactionCanceledException":
                    raise
                reasons = [r.get("Code") for r in e.response.get("CancellationReasons", [])]
                if reasons and reasons[0] == "ConditionalCheckFailed":
                    if update.get("UpdateExpression"):
                        self._call("update_item", **update)  # counted before: only the other attributes
                    for other in also:  # and the plain writes beside it, which need no count
                        if "Put" in other:
                            self._call("put_item", **other["Put"])
                        else:
                            self._call("delete_item", **other["Delete"])
                    return
                # TransactionConflict: another writer touched the same item at the same moment
                time.sleep(random.uniform(0, 0.05 * 2**attempt))
        raise RetryableError("a counted write kept conflicting")

    def _forget(self, exact: Sequence[str], prefixes: Sequence[str]) -> int:
        """Delete every item whose pk is one of ``exact`` or starts with one of ``prefixes`` (a tenant's
        erasure: an administrator's rare operation, so one scan of the table rather than an index kept
        for it); items deleted. A page at a time (``ERASE_PAGE`` items read), its matches deleted before the
        next is read, and stopping between pages at a pass's deadline (``deadlines.stop_if_late``): what
        went stays gone, and the next pass's scan finds only what is left."""
        conditions = [f"pk = :e{i}" for i in range(len(exact))] + [
            f"begins_with(pk, :p{i})" for i in range(len(prefixes))
        ]
        values = {f":e{i}": _s(v) for i, v in enumerate(exact)} | {f":p{i}": _s(v) for i, v in enumerate(prefixes)}
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "ProjectionExpression": "pk, sk",
            "FilterExpression": " OR ".join(conditions),
            "ExpressionAttributeValues": values,
            "Limit": ERASE_PAGE,
        }
        if (cursor := resume_cursor()) is not None:  # a scan an earlier pass stopped: on from there
            kwargs["ExclusiveStartKey"] = json.loads(cursor)
        gone = 0
        while True:
            page = self._call("scan", **kwargs)
            keys = [{"pk": i["pk"], "sk": i["sk"]} for i in page.get("Items", [])]
            gone += delete_keys(self._call, self._table, keys)
            if "LastEvaluatedKey" not in page:
                return gone
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
            stop_if_late(gone, json.dumps(page["LastEvaluatedKey"]))
