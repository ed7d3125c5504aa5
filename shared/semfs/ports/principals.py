from __future__ import annotations

from typing import Protocol

from semfs.domain.models import Group, User


class PrincipalRepository(Protocol):
    """A tenant's users and groups (``domain/access.py``). A user's groups are listed on the user: one
    place says who is in a group."""

    def save_user(self, tenant_id: str, user: User) -> None:
        """Store ``user`` under its name, replacing the tenant's user of that name."""
        ...

    def users(self, tenant_id: str) -> list[User]:
        """The tenant's users, oldest first (the first admin is the tenant's default user)."""
        ...

    def delete_user(self, tenant_id: str, name: str) -> bool:
        """Remove the user of that name; whether there was one."""
        ...

    def save_group(self, tenant_id: str, group: Group) -> None:
        """Store ``group`` under its name, replacing the tenant's group of that name."""
        ...

    def groups(self, tenant_id: str) -> list[Group]:
        """The tenant's groups, by name."""
        ...

    def delete_group(self, tenant_id: str, name: str) -> bool:
        """Remove the group of that name; whether there was one (its members keep the name until edited)."""
        ...

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's users and groups; how many went. Idempotent."""
        ...
