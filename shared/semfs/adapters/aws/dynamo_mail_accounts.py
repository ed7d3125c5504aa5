"""Mail accounts and their folders' cursors, as items of the item table (``item_table.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from semfs.domain.mail_accounts import FolderCursor, MailAccount

from .clients import paginate
from .item_table import ItemTable
from .item_table import string_value as _s


class DynamoMailAccountRepository(ItemTable):
    """MailAccountRepository on DynamoDB: ``MA#{tenant}`` / ``{name}`` per account, ``MC#{tenant}#{name}`` /
    ``{folder}`` per cursor (each as JSON in ``data``)."""

    def save(self, tenant_id: str, account: MailAccount) -> None:
        self._put({"pk": _s(f"MA#{tenant_id}"), "sk": _s(account.name), "data": _s(account.model_dump_json())})

    def account(self, tenant_id: str, name: str) -> MailAccount | None:
        item = self._get(f"MA#{tenant_id}", name)
        return MailAccount.model_validate_json(item["data"]["S"]) if item else None

    def accounts(self, tenant_id: str) -> list[MailAccount]:
        found = [MailAccount.model_validate_json(i["data"]["S"]) for i in self._query(f"MA#{tenant_id}")]
        return sorted(found, key=lambda a: a.name)

    def all_accounts(self) -> Iterator[tuple[str, MailAccount]]:
        kwargs: dict[str, Any] = {
            "TableName": self._table,
            "FilterExpression": "begins_with(pk, :p)",
            "ExpressionAttributeValues": {":p": _s("MA#")},
        }
        for item in paginate(self._call, "scan", kwargs):
            yield item["pk"]["S"].removeprefix("MA#"), MailAccount.model_validate_json(item["data"]["S"])

    def delete(self, tenant_id: str, name: str) -> bool:
        # the account's cursors are one partition: a query finds them (a tenant's erasure is the scan's job)
        cursors = [{"pk": i["pk"], "sk": i["sk"]} for i in self._query(f"MC#{tenant_id}#{name}")]
        for key in cursors:
            self._call("delete_item", TableName=self._table, Key=key)
        key = {"pk": _s(f"MA#{tenant_id}"), "sk": _s(name)}
        gone = self._call("delete_item", TableName=self._table, Key=key, ReturnValues="ALL_OLD")
        return bool(gone.get("Attributes"))

    def cursor(self, tenant_id: str, name: str, folder: str) -> FolderCursor | None:
        item = self._get(f"MC#{tenant_id}#{name}", folder)
        return FolderCursor.model_validate_json(item["data"]["S"]) if item else None

    def save_cursor(self, tenant_id: str, name: str, cursor: FolderCursor) -> None:
        self._put({"pk": _s(f"MC#{tenant_id}#{name}"), "sk": _s(cursor.folder), "data": _s(cursor.model_dump_json())})

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's accounts and cursors; how many items went."""
        return self._forget([f"MA#{tenant_id}"], [f"MC#{tenant_id}#"])
