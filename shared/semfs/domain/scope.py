"""Filters as data: a search's scope and a record query, each the tenant and every filter as a list
of clauses, built once.

Each backend compiles these clauses into its own language with a small table of field names (SQL for
the local document store and record table, tantivy queries for the local keyword index, bool filter
clauses for OpenSearch, key and filter expressions for DynamoDB), so which filters exist and what
they mean is written here only. ``matches`` is the meaning itself, on one record in memory: DynamoDB
filters there what its attributes cannot, and the contract tests hold every compiler to it. The
tenant clause is always the first; a backend that drops it drops everything.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

from semfs.domain.access import readers_of
from semfs.domain.models import FileRecord, SearchFilters
from semfs.domain.vocabulary import SOURCE_TYPES

# what a search's scope filters on index documents
Field = Literal["tenant", "reader", "latest", "tag", "source_type", "contact", "thread", "mime", "created", "file_id"]
# what a record query filters on file records
RecordField = Literal[
    "tenant", "reader", "latest", "tag", "source_type", "contact", "thread", "mime", "created", "file_id",
    "status", "lineage", "source_key", "deleted", "outcome", "entity",
]  # fmt: skip

# The ``IndexDoc`` attribute each field filters: the column (SQLite) or document field (OpenSearch) of
# a backend that stores documents under their own names. tantivy has its own field names.
DOC_FIELDS: dict[str, str] = {
    "tenant": "tenant_id",
    "reader": "readers",
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

    field: Field | RecordField
    value: str | bool


@dataclass(frozen=True, slots=True)
class AnyOf:
    """``field`` equals one of ``values`` (for a list-valued field: holds one of them)."""

    field: Field | RecordField
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


@dataclass(frozen=True, slots=True)
class Between:
    """``field`` (ISO text: a timestamp) lies from ``low`` to ``high``, both included, either open."""

    field: RecordField
    low: str | None
    high: str | None


@dataclass(frozen=True, slots=True)
class After:
    """``field`` sorts after ``value``: a page's cursor."""

    field: RecordField
    value: str


@dataclass(frozen=True, slots=True)
class Not:
    """``field`` is not ``value`` (a missing value is not it either)."""

    term: Term


Clause = Term | AnyOf | DayRange
RecordClause = Term | AnyOf | Between | After | Not


def scope(tenant_id: str, filters: SearchFilters) -> list[Clause]:
    """The clauses every leg of a search must apply; the tenant first, then who the caller reads as."""
    clauses: list[Clause] = [Term("tenant", tenant_id)]
    if filters.readers is not None:
        clauses.append(AnyOf("reader", filters.readers))
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
    if filters.include_agent_files is False and not filters.source_type:
        clauses.append(AnyOf("source_type", tuple(s for s in SOURCE_TYPES if s != "agent_generated")))
    if filters.date_from or filters.date_to:
        clauses.append(DayRange("created", filters.date_from, filters.date_to))
    if filters.file_ids:
        clauses.append(AnyOf("file_id", tuple(filters.file_ids)))
    return clauses


# What each record field's clause reads on a ``FileRecord``: one value, or a tuple for a list-valued field.
RECORD_VALUES: dict[str, Callable[[FileRecord], object]] = {
    "tenant": lambda r: r.tenant_id,
    "reader": lambda r: readers_of(r.readers),
    "status": lambda r: r.status.value,
    "lineage": lambda r: r.lineage_id,
    "thread": lambda r: r.thread_id,
    "source_type": lambda r: r.source_type,
    "mime": lambda r: r.mime_type,
    "tag": lambda r: (*r.tags, *r.auto_tags),  # a person's tags and the enricher's alike
    "contact": lambda r: tuple(r.contact_ids),
    "entity": lambda r: tuple(r.entities),
    "source_key": lambda r: r.source_key,
    "latest": lambda r: r.is_latest,
    "deleted": lambda r: r.deleted_at is not None,
    "created": lambda r: r.created_at.isoformat(),
    "outcome": lambda r: r.outcome.value if r.outcome else None,
    "file_id": lambda r: r.file_id,
}


def record_scope(
    tenant_id: str,
    *,
    readers: Sequence[str] | None = None,
    statuses: Sequence[str] = (),
    terms: Sequence[tuple[RecordField, str | None]] = (),
    latest_only: bool = False,
    include_deleted: bool = False,
    created: tuple[datetime | None, datetime | None] = (None, None),
    exclude_duplicates: bool = False,
    after: str | None = None,
) -> list[RecordClause]:
    """The clauses of a record query; the tenant first, then who the caller reads as (``None``: every
    file). ``terms`` with no value are no filter."""
    clauses: list[RecordClause] = [Term("tenant", tenant_id)]
    if readers is not None:
        clauses.append(AnyOf("reader", tuple(readers)))
    if statuses:
        clauses.append(AnyOf("status", tuple(statuses)))
    clauses += [Term(field, value) for field, value in terms if value]
    if latest_only:
        clauses.append(Term("latest", True))
    if not include_deleted:
        clauses.append(Term("deleted", False))
    low, high = created
    if low or high:
        clauses.append(Between("created", low.isoformat() if low else None, high.isoformat() if high else None))
    if exclude_duplicates:
        clauses.append(Not(Term("outcome", "SKIPPED_DUPLICATE")))
    if after:
        clauses.append(After("file_id", after))
    return clauses


def matches(record: FileRecord, clauses: Sequence[RecordClause]) -> bool:
    """Whether ``record`` passes every clause: what the clauses mean, for compilers to agree with."""
    return all(_passes(RECORD_VALUES[c.term.field if isinstance(c, Not) else c.field](record), c) for c in clauses)


def _passes(value: object, c: RecordClause) -> bool:
    if isinstance(c, Not):
        return not _passes(value, c.term)
    if isinstance(c, Term):
        return c.value in value if isinstance(value, tuple) else value == c.value
    if isinstance(c, AnyOf):
        return not set(value).isdisjoint(c.values) if isinstance(value, tuple) else value in c.values
    text = str(value)
    if isinstance(c, After):
        return text > c.value
    return (c.low is None or text >= c.low) and (c.high is None or text <= c.high)
