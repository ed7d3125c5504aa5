from __future__ import annotations

from typing import Protocol


class Admission(Protocol):
    """Bounds the files in flight: one slot per running ProcessFile execution, so a burst of uploads
    waits for a slot instead of running (and being throttled) all at once; and one tenant holds at
    most its share of the slots, so its burst cannot hold them all."""

    def admit(self, name: str, tenant_id: str) -> bool:
        """Take a slot for the execution ``name`` of ``tenant_id``: ``True`` if it holds one (already
        holding one counts), ``False`` if every slot is taken or the tenant holds its share of them."""
        ...

    def release(self, name: str, tenant_id: str | None = None) -> None:
        """Free the slot of the execution ``name`` (of ``tenant_id``; ``None``: whichever tenant holds it);
        idempotent (a name that holds none is a no-op)."""
        ...

    def holders(self) -> list[str]:
        """The executions that hold a slot now."""
        ...
