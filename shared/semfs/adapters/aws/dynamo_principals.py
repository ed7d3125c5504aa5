"""A tenant's users and groups, as items of the item table (``item_table.py``): ``U#{tenant}`` / name and
``G#{tenant}`` / name, each with the user or group as JSON. In AWS a person signs in through Cognito (the
JWT names the user and its ``cognito:groups``); these items say which mail addresses are whose."""

from __future__ import annotations

from semfs.domain.models import Group, User

from .item_table import ItemTable
from .item_table import string_value as _s


class DynamoPrincipalRepository(ItemTable):
    """PrincipalRepository on DynamoDB: one item per user or group; a tenant's are one query each."""

    def save_user(self, tenant_id: str, user: User) -> None:
        self._put({"pk": _s(f"U#{tenant_id}"), "sk": _s(user.name), "data": _s(user.model_dump_json())})

    def users(self, tenant_id: str) -> list[User]:
        users = [User.model_validate_json(i["data"]["S"]) for i in self._query(f"U#{tenant_id}")]
        return sorted(users, key=lambda u: (u.created_at, u.name))

    def delete_user(self, tenant_id: str, name: str) -> bool:
        return self._delete(f"U#{tenant_id}", name)

    def save_group(self, tenant_id: str, group: Group) -> None:
        self._put({"pk": _s(f"G#{tenant_id}"), "sk": _s(group.name), "data": _s(group.model_dump_json())})

    def groups(self, tenant_id: str) -> list[Group]:
        groups = [Group.model_validate_json(i["data"]["S"]) for i in self._query(f"G#{tenant_id}")]
        return sorted(groups, key=lambda g: g.name)

    def delete_group(self, tenant_id: str, name: str) -> bool:
        return self._delete(f"G#{tenant_id}", name)

    def _delete(self, pk: str, sk: str) -> bool:
        gone = self._call(
            "delete_item", TableName=self._table, Key={"pk": _s(pk), "sk": _s(sk)}, ReturnValues="ALL_OLD"
        )
        return bool(gone.get("Attributes"))

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's users and groups; how many items went."""
        return self._forget([f"U#{tenant_id}", f"G#{tenant_id}"], [])
