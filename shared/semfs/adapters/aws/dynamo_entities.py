"""The entities files name, three items per (entity, file), in the item table (``item_table.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from semfs.domain.mentions import FileEntity
from semfs.domain.results import EntityInfo
from semfs.domain.vocabulary import EntityKind
from semfs.ports.entity_repository import FileMention

from .clients import paginate, put_items
from .item_table import ItemTable
from .item_table import string_value as _s


class DynamoEntityRepository(ItemTable):
    """EntityRepository on DynamoDB (see module docstring): an entity's ``files`` count moves in the
    transaction that creates or deletes its (entity, file) item under a condition, so a retried stage
    counts nothing twice; the (file, entity) item is written beside it."""

    def replace_file(self, tenant_id: str, file_id: str, entities: Sequence[FileEntity]) -> None:
        """What changed, and only that: an entity found again as it was writes nothing (a re-enriched file
        costs its changes); a new one is counted in a transaction of two (its (entity, file) item under a
        condition, and the count), its (file, entity) item batched after it; a changed one is batched with
        its count's attributes updated (issue 54.5: one transaction of three per entity before)."""
        t = tenant_id
        held = {i["sk"]["S"]: i for i in self._query(f"FN#{t}#{file_id}")}
        wanted = {e.entity_id: e for e in entities}
        for gone in held.keys() - wanted.keys():
            delete = {
                "Delete": {
                    "TableName": self._table,
                    "Key": {"pk": _s(f"NF#{t}#{gone}"), "sk": _s(file_id)},
                    "ConditionExpression": "attribute_exists(pk)",
                }
            }
            mine = {
                "Delete": {
                    "TableName": self._table,
                    "Key": {"pk": _s(f"FN#{t}#{file_id}"), "sk": _s(gone)},
                }
            }
            counter = {
                "TableName": self._table,
                "Key": {"pk": _s(f"N#{t}"), "sk": _s(gone)},
                "UpdateExpression": "",
            }
            self._counted(delete, counter, "files", -1, [mine])
        batched: list[dict[str, Any]] = []
        for e in wanted.values():
            data = _entity_data(e)
            of_file = {"pk": _s(f"FN#{t}#{file_id}"), "sk": _s(e.entity_id), **data}
            if held.get(e.entity_id) == of_file:
                continue  # found again as it was
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
            if e.entity_id in held:  # counted before: the mention's figures moved
                batched += [member, of_file]
                self._call("update_item", **counter)
            else:  # (file, entity) after the count: a stage stopped between them writes it on its retry
                self._count_once(member, counter, "files")
                batched.append(of_file)
        put_items(self._call, self._table, batched)

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
