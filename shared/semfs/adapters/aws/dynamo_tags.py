"""The tag vocabulary (counted per file) and its aliases, as items of the item table (``item_table.py``)."""

from __future__ import annotations

from collections.abc import Sequence

from semfs.domain.tags import stem_key

from .item_table import ItemTable
from .item_table import string_value as _s


class DynamoTagRepository(ItemTable):
    """TagRepository on DynamoDB (see module docstring)."""

    def record_uses(self, tenant_id: str, file_id: str, tags: Sequence[str]) -> None:
        for tag in dict.fromkeys(tags):
            member = {"pk": _s(f"VU#{tenant_id}#{tag}"), "sk": _s(file_id)}
            counter = {"TableName": self._table, "Key": {"pk": _s(f"V#{tenant_id}"), "sk": _s(tag)}}
            self._count_once(member, {**counter, "UpdateExpression": ""}, "files")

    def top(self, tenant_id: str, limit: int) -> list[str]:
        counts = [(int(i.get("files", {}).get("N", "0")), i["sk"]["S"]) for i in self._query(f"V#{tenant_id}")]
        return [tag for _, tag in sorted(counts, key=lambda x: (-x[0], x[1]))[:limit]]

    def preferred(self, tenant_id: str, stems: Sequence[str]) -> dict[str, str]:
        """From the counters' partition (one query, as ``top``): the vocabulary's items carry no stem."""
        wanted, out = set(stems), {}
        for tag in self.top(tenant_id, 1_000_000):  # most used first: the first tag of a stem wins
            stem = stem_key(tag)
            if stem in wanted and stem not in out:
                out[stem] = tag
        return out

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
