from __future__ import annotations

from typing import Protocol


class Admission(Protocol):
    """Bounds the files in flight: one slot per running ProcessFile execution, so a burst of uploads
    waits for a slot instead of running (and being throttled) all at once."""

    def admit(self, name: str) -> bool:
        """Take a slot for the execution ``name``: ``True`` if it holds one (already holding one counts),
        ``False`` if every slot is taken."""
        ...

    def release(self, name: str) -> None:
        """Free the slot of the execution ``name``; idempotent (a name that holds none is a no-op)."""
        ...

    def holders(self) -> list[str]:
        """The executions that hold a slot now."""
        ...
