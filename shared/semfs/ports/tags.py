from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class TagRepository(Protocol):
    """A tenant's tag vocabulary as the enricher sees it (tags by how many files use them) and the
    aliases merges leave behind. Bounded by the vocabulary, never by the number of files: enrichment
    asks it once per file instead of scanning every record of the tenant."""

    def record_uses(self, tenant_id: str, file_id: str, tags: Sequence[str]) -> None:
        """Count each tag once for ``file_id`` (idempotent per file and tag: a retried stage or a
        re-enrichment counts nothing twice)."""
        ...

    def top(self, tenant_id: str, limit: int) -> list[str]:
        """The most used tags, most used first (ties by name)."""
        ...

    def preferred(self, tenant_id: str, stems: Sequence[str]) -> dict[str, str]:
        """For each of ``stems`` (``domain.tags.stem_key``) that a tag of the vocabulary has, that tag; the most
        used when several share it (ties by name). Bounded by the stems asked, not the vocabulary's size."""
        ...

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's tag counts and aliases; how many rows or items went. Idempotent."""
        ...

    def aliases(self, tenant_id: str) -> dict[str, str]:
        """Merged-away tag → the tag it was merged into."""
        ...

    def set_alias(self, tenant_id: str, source: str, target: str) -> None:
        """Remember that ``source`` now means ``target``; aliases that pointed at ``source`` follow it,
        and ``target`` stops being an alias itself. Idempotent."""
        ...
