from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # the records it names are loaded by the adapters and the pipeline that use them
    from semfs.domain.mentions import FileEntity
    from semfs.domain.results import EntityInfo
    from semfs.domain.vocabulary import EntityKind


@dataclass(frozen=True)
class FileMention:
    """One file naming an entity: how often, how, and where first."""

    file_id: str
    label: str
    mentions: int
    location: str


class EntityRepository(Protocol):
    """The entities named in a tenant's files (``domain/mentions.py``), kept for three reads: the files
    of an entity, the entities of a file, and a tenant's entities by kind. Bounded per file (what a file
    names), never a scan of the tenant's files."""

    def replace_file(self, tenant_id: str, file_id: str, entities: Sequence[FileEntity]) -> None:
        """Make ``entities`` the file's entities: those it no longer names lose it, new ones gain it, each
        entity's file count moving once (idempotent: a retried stage counts nothing twice)."""
        ...

    def of_file(self, tenant_id: str, file_id: str) -> list[FileEntity]:
        """The file's entities, most mentioned first."""
        ...

    def files(self, tenant_id: str, entity_id: str, limit: int = 500) -> list[FileMention]:
        """The files naming the entity, most mentions first (then by file id); at most ``limit``."""
        ...

    def get(self, tenant_id: str, entity_id: str) -> EntityInfo | None:
        """The entity, or ``None`` when no file of the tenant names it."""
        ...

    def entities(self, tenant_id: str, kind: EntityKind | None = None, limit: int = 100) -> list[EntityInfo]:
        """The tenant's entities (of one kind, or all), named in the most files first, then by label."""
        ...

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's entities; how many rows or items went. Idempotent."""
        ...
