"""Threads, their messages and participants, and contacts, as items of the item table (``item_table.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from semfs.ports.mail import Contact, Person, Thread

from .item_table import META, ItemTable
from .item_table import string_value as _s


class DynamoMailRepository(ItemTable):
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
        items = [
            {"pk": _s(pk), "sk": _s(f"M#{message_id}")},
            {"pk": _s(f"TL#{tenant_id}"), "sk": _s(thread_id)},
        ]
        items += [{"pk": _s(pk), "sk": _s(f"P#{p}")} for p in sorted(set(participants))]
        items.append(
            {
                "pk": _s(f"M#{tenant_id}#{message_id}"),
                "sk": _s(META),
                "thread_id": _s(thread_id),
            }
        )
        if subject_key:
            items.append(
                {
                    "pk": _s(f"S#{tenant_id}#{subject_key}"),
                    "sk": _s(META),
                    "thread_id": _s(thread_id),
                }
            )
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
