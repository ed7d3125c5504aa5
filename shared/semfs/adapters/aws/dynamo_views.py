"""Saved views, as items of the item table (``item_table.py``)."""

from __future__ import annotations

from semfs.domain.models import SavedView

from .item_table import ItemTable
from .item_table import string_value as _s


class DynamoViewRepository(ItemTable):
    """ViewRepository on DynamoDB: one item per view (see module docstring); a tenant's are one query."""

    def save(self, tenant_id: str, view: SavedView) -> None:
        self._put(
            {
                "pk": _s(f"SV#{tenant_id}"),
                "sk": _s(view.name),
                "data": _s(view.model_dump_json()),
            }
        )

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
