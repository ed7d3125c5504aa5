"""Entities beside the file records, as items of one DynamoDB table (pk, sk): threads, messages and
contacts (``DynamoMailRepository``), the tag vocabulary and aliases (``DynamoTagRepository``).

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

import random
import time
from collections.abc import Iterator, Sequence
from typing import Any

from semfs.config import Settings
from semfs.domain.entities import FileEntity
from semfs.domain.errors import PermanentError, RetryableError
from semfs.domain.models import SavedView
from semfs.domain.outcomes import Outcome
from semfs.domain.results import EntityInfo
from semfs.domain.vocabulary import EntityKind
from semfs.ports.entities import FileMention
from semfs.ports.mail import Contact, Person, Thread

from .clients import client, delete_keys, error_code, is_retryable, paginate, retryable

META = "#"


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


def _s(value: str) -> dict[str, str]:
    return {"S": value}


class _EntityTable:
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
        for it); items deleted."""
        conditions = [f"pk = :e{i}" for i in range(len(exact))] + [
            f"begins_with(pk, :p{i})" for i in range(len(prefixes))
        ]
        values = {f":e{i}": _s(v) for i, v in enumerate(exact)} | {f":p{i}": _s(v) for i, v in enumerate(prefixes)}
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "ProjectionExpression": "pk, sk",
            "FilterExpression": " OR ".join(conditions),
            "ExpressionAttributeValues": values,
        }
        keys = [{"pk": i["pk"], "sk": i["sk"]} for i in paginate(self._call, "scan", kwargs)]
        return delete_keys(self._call, self._table, keys)


class DynamoMailRepository(_EntityTable):
    """MailRepository on DynamoDB (see module docstring)."""

    def thread_of_message(self, tenant_id: str, message_id: str) -> str | None:
        item = self._get(f"M#{tenant_id}#{message_id}")
        return item["thread_id"]["S"] if item else None

    def thread_of_subject(self, tenant_id: str, subject_key: str) -> str | None:
        item = self._get(f"S#{tenant_id}#{subject_key}")
        return item["thread_id"]["S"] if item else None

    def add_message(
        self,
        tenant_id: str,
        thread_id: str,
        message_id: str,
        subject: str,
        subject_key: str | None,
        participants: Sequence[str],
    ) -> Thread:
        pk = f"T#{tenant_id}#{thread_id}"
        self._put({"pk": _s(pk), "sk": _s(META), "subject": _s(subject)}, if_absent=True)  # first subject wins
        items = [{"pk": _s(pk), "sk": _s(f"M#{message_id}")}, {"pk": _s(f"TL#{tenant_id}"), "sk": _s(thread_id)}]
        items += [{"pk": _s(pk), "sk": _s(f"P#{p}")} for p in sorted(set(participants))]
        items.append({"pk": _s(f"M#{tenant_id}#{message_id}"), "sk": _s(META), "thread_id": _s(thread_id)})
        if subject_key:
            items.append({"pk": _s(f"S#{tenant_id}#{subject_key}"), "sk": _s(META), "thread_id": _s(thread_id)})
        for i in range(0, len(items), 25):  # BatchWriteItem takes at most 25 puts
            pending: dict[str, Any] = {self._table: [{"PutRequest": {"Item": x}} for x in items[i : i + 25]]}
            while pending:
                pending = self._call("batch_write_item", RequestItems=pending).get("UnprocessedItems") or {}
        found = self.thread(tenant_id, thread_id)
        assert found is not None
        return found

    def add_contact_message(self, tenant_id: str, person: Person, message_id: str) -> Contact:
        key = {"pk": _s(f"C#{tenant_id}"), "sk": _s(person.contact_id)}
        sets = ["email = :e", "#n = " + (":n" if person.name else "if_not_exists(#n, :n)")]
        values: dict[str, Any] = {":e": _s(person.email), ":n": _s(person.name)}
        if person.organisation:
            sets.append("organisation = :o")
            values[":o"] = _s(person.organisation)
        update: dict[str, Any] = {
            "TableName": self._table,
            "Key": key,
            "UpdateExpression": "SET " + ", ".join(sets),
            "ExpressionAttributeNames": {"#n": "name"},
            "ExpressionAttributeValues": values,
        }
        member = {"pk": _s(f"CM#{tenant_id}#{person.contact_id}"), "sk": _s(message_id)}
        self._count_once(member, update, "messages")
        item = self._get(f"C#{tenant_id}", person.contact_id)
        assert item is not None
        return _contact(tenant_id, item)

    def upsert_contact(self, tenant_id: str, person: Person) -> Contact:
        sets = ["email = :e", "#n = " + (":n" if person.name else "if_not_exists(#n, :n)")]
        values: dict[str, Any] = {":e": _s(person.email), ":n": _s(person.name)}
        if person.organisation:
            sets.append("organisation = :o")
            values[":o"] = _s(person.organisation)
        item = self._call(
            "update_item",
            TableName=self._table,
            Key={"pk": _s(f"C#{tenant_id}"), "sk": _s(person.contact_id)},
            UpdateExpression="SET " + ", ".join(sets),
            ExpressionAttributeNames={"#n": "name"},
            ExpressionAttributeValues=values,
            ReturnValues="ALL_NEW",
        )["Attributes"]
        return _contact(tenant_id, item)

    def threads(self, tenant_id: str) -> list[Thread]:
        # a thread-list item per tenant keeps this a query, not a scan
        ids = [i["sk"]["S"] for i in self._query(f"TL#{tenant_id}")]
        return [t for i in ids if (t := self.thread(tenant_id, i)) is not None]

    def thread(self, tenant_id: str, thread_id: str) -> Thread | None:
        subject: str | None = None
        people: list[str] = []
        messages = 0
        for item in self._query(f"T#{tenant_id}#{thread_id}"):
            sk = item["sk"]["S"]
            if sk == META:
                subject = item["subject"]["S"]
            elif sk.startswith("M#"):
                messages += 1
            elif sk.startswith("P#"):
                people.append(sk[2:])
        if subject is None:
            return None
        return Thread(tenant_id, thread_id, subject, tuple(sorted(people)), messages)

    def contact(self, tenant_id: str, contact_id: str) -> Contact | None:
        item = self._get(f"C#{tenant_id}", contact_id)
        return _contact(tenant_id, item) if item else None

    def contacts(self, tenant_id: str) -> list[Contact]:
        return [_contact(tenant_id, item) for item in self._query(f"C#{tenant_id}")]

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's threads, messages and contacts; how many items went."""
        t = tenant_id
        return self._forget([f"TL#{t}", f"C#{t}"], [f"T#{t}#", f"M#{t}#", f"S#{t}#", f"CM#{t}#"])


def _contact(tenant_id: str, item: dict[str, Any]) -> Contact:
    return Contact(
        tenant_id=tenant_id,
        contact_id=item["sk"]["S"],
        email=item.get("email", {}).get("S", ""),
        name=item.get("name", {}).get("S", ""),
        organisation=item.get("organisation", {}).get("S"),
        messages=int(item.get("messages", {}).get("N", "0")),
    )


class DynamoTagRepository(_EntityTable):
    """TagRepository on DynamoDB (see module docstring)."""

    def record_uses(self, tenant_id: str, file_id: str, tags: Sequence[str]) -> None:
        for tag in dict.fromkeys(tags):
            member = {"pk": _s(f"VU#{tenant_id}#{tag}"), "sk": _s(file_id)}
            counter = {"TableName": self._table, "Key": {"pk": _s(f"V#{tenant_id}"), "sk": _s(tag)}}
            self._count_once(member, {**counter, "UpdateExpression": ""}, "files")

    def top(self, tenant_id: str, limit: int) -> list[str]:
        counts = [(int(i.get("files", {}).get("N", "0")), i["sk"]["S"]) for i in self._query(f"V#{tenant_id}")]
        return [tag for _, tag in sorted(counts, key=lambda x: (-x[0], x[1]))[:limit]]

    def aliases(self, tenant_id: str) -> dict[str, str]:
        return {i["sk"]["S"]: i["target"]["S"] for i in self._query(f"A#{tenant_id}")}

    def set_alias(self, tenant_id: str, source: str, target: str) -> None:
        pk = f"A#{tenant_id}"
        for old, points_at in self.aliases(tenant_id).items():
            if points_at == source:
                self._put({"pk": _s(pk), "sk": _s(old), "target": _s(target)})
        self._call("delete_item", TableName=self._table, Key={"pk": _s(pk), "sk": _s(target)})
        self._put({"pk": _s(pk), "sk": _s(source), "target": _s(target)})

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's tag counts and aliases; how many items went."""
        return self._forget([f"V#{tenant_id}", f"A#{tenant_id}"], [f"VU#{tenant_id}#"])


class DynamoViewRepository(_EntityTable):
    """ViewRepository on DynamoDB: one item per view (see module docstring); a tenant's are one query."""

    def save(self, tenant_id: str, view: SavedView) -> None:
        self._put({"pk": _s(f"SV#{tenant_id}"), "sk": _s(view.name), "data": _s(view.model_dump_json())})

    def views(self, tenant_id: str) -> list[SavedView]:
        views = [SavedView.model_validate_json(i["data"]["S"]) for i in self._query(f"SV#{tenant_id}")]
        return sorted(views, key=lambda v: v.name)

    def delete(self, tenant_id: str, name: str) -> bool:
        key = {"pk": _s(f"SV#{tenant_id}"), "sk": _s(name)}
        gone = self._call("delete_item", TableName=self._table, Key=key, ReturnValues="ALL_OLD")
        return bool(gone.get("Attributes"))

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's saved views; how many items went."""
        return self._forget([f"SV#{tenant_id}"], [])


class DynamoEntityRepository(_EntityTable):
    """EntityRepository on DynamoDB (see module docstring): an entity's ``files`` count moves in the
    transaction that creates or deletes its (entity, file) item under a condition, so a retried stage
    counts nothing twice; the (file, entity) item is written beside it."""

    def replace_file(self, tenant_id: str, file_id: str, entities: Sequence[FileEntity]) -> None:
        t = tenant_id
        held = {i["sk"]["S"] for i in self._query(f"FN#{t}#{file_id}")}
        wanted = {e.entity_id: e for e in entities}
        for gone in held - wanted.keys():
            delete = {
                "Delete": {
                    "TableName": self._table,
                    "Key": {"pk": _s(f"NF#{t}#{gone}"), "sk": _s(file_id)},
                    "ConditionExpression": "attribute_exists(pk)",
                }
            }
            mine = {"Delete": {"TableName": self._table, "Key": {"pk": _s(f"FN#{t}#{file_id}"), "sk": _s(gone)}}}
            counter = {"TableName": self._table, "Key": {"pk": _s(f"N#{t}"), "sk": _s(gone)}, "UpdateExpression": ""}
            self._counted(delete, counter, "files", -1, [mine])
        for e in wanted.values():
            data = _entity_data(e)
            of_file = {"pk": _s(f"FN#{t}#{file_id}"), "sk": _s(e.entity_id), **data}
            member = {"pk": _s(f"NF#{t}#{e.entity_id}"), "sk": _s(file_id), **data}
            sets = ["#label = if_not_exists(#label, :label)", "#kind = :kind"]
            values: dict[str, Any] = {":label": _s(e.label), ":kind": _s(e.kind)}
            for name in ("detail", "contact_id"):
                if getattr(e, name):
                    sets.append(f"#{name} = :{name}")
                    values[f":{name}"] = _s(getattr(e, name))
            counter = {
                "TableName": self._table,
                "Key": {"pk": _s(f"N#{t}"), "sk": _s(e.entity_id)},
                "UpdateExpression": "SET " + ", ".join(sets),
                "ExpressionAttributeNames": {
                    f"#{n}": n for n in ("label", "kind", "detail", "contact_id") if f"#{n}" in " ".join(sets)
                },
                "ExpressionAttributeValues": values,
            }
            if e.entity_id in held:  # counted before: the mention's figures may have moved
                self._put(member)
                self._put(of_file)
                self._call("update_item", **counter)
            else:
                also = [{"Put": {"TableName": self._table, "Item": of_file}}]
                self._count_once(member, counter, "files", also=also)

    def of_file(self, tenant_id: str, file_id: str) -> list[FileEntity]:
        items = [_file_entity(i) for i in self._query(f"FN#{tenant_id}#{file_id}")]
        return sorted(items, key=lambda e: (-e.mentions, e.entity_id))

    def files(self, tenant_id: str, entity_id: str, limit: int = 500) -> list[FileMention]:
        found = [
            FileMention(
                file_id=i["sk"]["S"],
                label=i["label"]["S"],
                mentions=int(i["mentions"]["N"]),
                location=i["location"]["S"],
            )
            for i in self._query(f"NF#{tenant_id}#{entity_id}")
        ]
        return sorted(found, key=lambda m: (-m.mentions, m.file_id))[:limit]

    def get(self, tenant_id: str, entity_id: str) -> EntityInfo | None:
        item = self._get(f"N#{tenant_id}", entity_id)
        summary = _entity_info(item) if item else None
        return summary if summary and summary.files > 0 else None

    def entities(self, tenant_id: str, kind: EntityKind | None = None, limit: int = 100) -> list[EntityInfo]:
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "KeyConditionExpression": "pk = :pk" + (" AND begins_with(sk, :kind)" if kind else ""),
            "ExpressionAttributeValues": {":pk": _s(f"N#{tenant_id}")} | ({":kind": _s(f"{kind}:")} if kind else {}),
        }
        found = [s for s in map(_entity_info, paginate(self._call, "query", kwargs)) if s.files > 0]
        return sorted(found, key=lambda s: (-s.files, s.label))[:limit]

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's entities; how many items went."""
        return self._forget([f"N#{tenant_id}"], [f"NF#{tenant_id}#", f"FN#{tenant_id}#"])


def _entity_data(e: FileEntity) -> dict[str, Any]:
    data: dict[str, Any] = {
        "kind": _s(e.kind),
        "label": _s(e.label),
        "mentions": {"N": str(e.mentions)},
        "location": _s(e.location),
    }
    for name in ("detail", "contact_id"):
        if getattr(e, name):
            data[name] = _s(getattr(e, name))
    return data


def _file_entity(item: dict[str, Any]) -> FileEntity:
    return FileEntity(
        entity_id=item["sk"]["S"],
        kind=item["kind"]["S"],
        label=item["label"]["S"],
        mentions=int(item["mentions"]["N"]),
        location=item["location"]["S"],
        detail=item.get("detail", {}).get("S"),
        contact_id=item.get("contact_id", {}).get("S"),
    )


def _entity_info(item: dict[str, Any]) -> EntityInfo:
    return EntityInfo(
        entity_id=item["sk"]["S"],
        kind=item["kind"]["S"],
        label=item["label"]["S"],
        files=int(item.get("files", {}).get("N", "0")),
        detail=item.get("detail", {}).get("S"),
        contact_id=item.get("contact_id", {}).get("S"),
    )
