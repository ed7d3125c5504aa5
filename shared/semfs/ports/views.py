from __future__ import annotations

from typing import Protocol

from semfs.domain.models import SavedView


class ViewRepository(Protocol):
    """A tenant's saved views: a named listing (filters and a sort) everyone in the tenant can open."""

    def save(self, tenant_id: str, view: SavedView) -> None:
        """Store ``view`` under its name, replacing the tenant's view of that name."""
        ...

    def views(self, tenant_id: str) -> list[SavedView]:
        """The tenant's views, by name."""
        ...

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's saved views; how many went. Idempotent."""
        ...

    def delete(self, tenant_id: str, name: str) -> bool:
        """Remove the view of that name; whether there was one."""
        ...
