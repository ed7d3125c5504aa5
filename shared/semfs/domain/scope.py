"""A search's scope as data: the tenant and every filter as a list of clauses, built once.

Each index backend compiles these clauses into its own language with a small table of field names
(SQL for the local document store, tantivy queries for the local keyword index, bool filter clauses
for OpenSearch), so which filters exist and what they mean is written here only. The tenant clause
is always the first; a backend that drops it drops everything.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Literal

from semfs.domain.models import SearchFilters

Field = Literal["tenant", "latest", "tag", "source_type", "contact", "thread", "mime", "created", "file_id"]

# The ``IndexDoc`` attribute each field filters: the column (SQLite) or document field (OpenSearch) of
# a backend that stores documents under their own names. tantivy has its own field names.
DOC_FIELDS: dict[str, str] = {
    "tenant": "tenant_id",
    "latest": "is_latest",
    "tag": "tags",
    "source_type": "source_type",
    "contact": "contact_ids",
    "thread": "thread_id",
    "mime": "mime_type",
    "created": "created_at",
    "file_id": "file_id",
}


@dataclass(frozen=True, slots=True)
class Term:
    """``field`` equals (or, for a list-valued field, contains) ``value``."""

    field: Field
    value: str | bool


@dataclass(frozen=True, slots=True)
class AnyOf:
    """``field`` equals one of ``values``."""

    field: Field
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DayRange:
    """``field`` (a timestamp) falls on a day from ``first`` to ``last``, both included, either open."""

    field: Field
    first: date | None
    last: date | None

    @property
    def end(self) -> date | None:
        """The exclusive upper bound: the day after ``last``."""
        return self.last + timedelta(days=1) if self.last else None


Clause = Term | AnyOf | DayRange


def scope(tenant_id: str, filters: SearchFilters) -> list[Clause]:
    """The clauses every leg of a search must apply; the tenant first."""
    clauses: list[Clause] = [Term("tenant", tenant_id)]
    if not filters.include_history:
        clauses.append(Term("latest", True))
    clauses += [Term("tag", t) for t in filters.tags]
    for field, value in (
        ("source_type", filters.source_type),
        ("contact", filters.contact_id),
        ("thread", filters.thread_id),
        ("mime", filters.mime_type),
    ):
        if value:
            clauses.append(Term(field, value))  # type: ignore[arg-type]
    if filters.date_from or filters.date_to:
        clauses.append(DayRange("created", filters.date_from, filters.date_to))
    if filters.file_ids:
        clauses.append(AnyOf("file_id", tuple(filters.file_ids)))
    return clauses
