"""``DynamoFileRepository``: file records in DynamoDB with conditional writes.

One item per file version: ``file_id`` is the key, the full record is a JSON attribute, and the
attributes the pipeline and API look up by are projected into global secondary indexes
(by tenant, lineage, content hash, name + thread, and the status of files in flight). Every write after the
create is a put conditional on the ``revision`` it was read at, so a concurrent writer's fields are
never lost to a whole-item overwrite (the loser gets ``Conflict`` and re-applies its change).

Each tenant also has one counts item (``file_id = ~counts#<tenant>``; no record id starts with ``~``, and
it carries none of the indexes' keys, so no index lists it): one number per (status, outcome), moved by
every create and every save that changes a record's status or outcome (the put returns the item it
replaced). ``counts(tenant)`` — the status page, polled — reads that one item instead of every record of
the tenant. A table from before the counts item is counted in full once, on the first call; a write that
races that first count, or a function stopped between a put and its count, can leave a number off by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from semfs.config import Settings
from semfs.deadlines import stop_if_late
from semfs.domain.access import TENANT, readers_of
from semfs.domain.errors import Conflict, NotFound, RetryableError
from semfs.domain.models import FileRecord
from semfs.domain.outcomes import TERMINAL_STATUSES, Status
from semfs.domain.scope import After, AnyOf, Not, RecordClause, Term, matches
from semfs.observability import get_logger
from semfs.ports.repository import RecordQuery

from .clients import call, client, delete_keys, error_code, is_retryable, paginate, retryable
from .item_table import ERASE_PAGE

log = get_logger(__name__)
SEP = "#"
COUNTS = "~counts#"  # the file_id of a tenant's counts item (record ids are "f_…")
COUNTED = "counted"  # set on the counts item once it holds every record (the first full count)
GSI_TENANT, GSI_LINEAGE, GSI_SHA, GSI_NAME, GSI_STATUS, GSI_CREATED = (
    "by_tenant",
    "by_lineage",
    "by_sha",
    "by_name",
    "by_status",  # sparse: only records in flight carry its key (tens, not every file of every tenant)
    "by_tenant_created",
)


def _item(r: FileRecord) -> dict[str, Any]:
    item: dict[str, Any] = {
        "file_id": {"S": r.file_id},
        "tenant_id": {"S": r.tenant_id},
        "lineage_key": {"S": f"{r.tenant_id}{SEP}{r.lineage_id}"},
        "version": {"N": str(r.version)},
        "sha_key": {"S": f"{r.tenant_id}{SEP}{r.sha256}"},
        "state": {"S": r.status.value},  # what filters read (items written before it: "status", see _status)
        "created_at": {"S": r.created_at.isoformat()},
        "updated_at": {"S": r.updated_at.isoformat()},
        "is_latest": {"N": str(int(r.is_latest))},
        "deleted": {"N": str(int(r.deleted_at is not None))},
        "revision": {"N": str(r.revision)},
        "readers": {"SS": sorted(readers_of(r.readers))},  # who may read it: filtered inside each query
        "data": {"S": r.model_dump_json()},
    }
    if r.status not in TERMINAL_STATUSES:  # sparse: by_status holds the files in flight, not every file ever
        item["status"] = {"S": r.status.value}
    if r.version_key:  # sparse: only files that can have implicit versions are in by_name
        item["name_key"] = {"S": f"{r.tenant_id}{SEP}{r.version_key}"}
    return item


def _record(item: dict[str, Any]) -> FileRecord:
    return FileRecord.model_validate_json(item["data"]["S"])


def _count_name_of(status: str, outcome: str | None) -> str:
    """The counts item's attribute for one (status, outcome): ``n|indexed|OK``."""
    return f"n|{status}|{outcome or ''}"


def _count_name(r: FileRecord) -> str:
    return _count_name_of(r.status.value, r.outcome.value if r.outcome else None)


def _count_key(name: str) -> tuple[str, str | None]:
    _, status, outcome = name.split("|", 2)
    return status, outcome or None


def _tally(records: Iterator[FileRecord]) -> dict[tuple[str, str | None], int]:
    out: dict[tuple[str, str | None], int] = {}
    for r in records:
        key = (r.status.value, r.outcome.value if r.outcome else None)
        out[key] = out.get(key, 0) + 1
    return out


# record fields the item carries as attributes of its own (name, DynamoDB type): DynamoDB filters on
# these; the other fields live only in the record's JSON and are checked on each record read. A record's
# status is "state" (every item) and, while it is in flight, also "status", the key of the sparse by_status
# index; an item written before "state" existed has "status" alone, so a status filter reads either
_ATTRIBUTES = {
    "status": ("state", "S"),
    "latest": ("is_latest", "N"),
    "deleted": ("deleted", "N"),
    "created": ("created_at", "S"),
    "file_id": ("file_id", "S"),
    "reader": ("readers", "SS"),
}


def _readers_condition(c: AnyOf, name: str, v: str, values: dict[str, Any]) -> str:
    """Files shared with one of the caller's tokens: ``contains`` on the item's string set; an item written
    before access lists has none and is the whole tenant's (``domain/access.py``)."""
    keys = [f"{v}_{j}" for j in range(len(c.values))]
    values.update({k: {"S": x} for k, x in zip(keys, c.values, strict=True)})
    tests = [f"contains({name}, {k})" for k in keys]
    if TENANT in c.values:
        tests.append(f"attribute_not_exists({name})")
    if not tests:
        raise ValueError("a readers clause names at least one reader")
    return "(" + " OR ".join(tests) + ")"


@dataclass(frozen=True)
class CompiledQuery:
    """A record query for DynamoDB: the key condition on the tenant (and the cursor, where the index
    sorts by file id), a filter expression on item attributes, and the clauses left to ``matches``."""

    key: str
    filter: str | None
    names: dict[str, str]
    values: dict[str, Any]
    rest: list[RecordClause]


def _value(field: str, value: str | bool) -> dict[str, str]:
    return {"N": str(int(value))} if isinstance(value, bool) else {_ATTRIBUTES[field][1]: value}


def _status_condition(c: RecordClause, name: str, v: str, names: dict[str, str], values: dict[str, Any]) -> str:
    """A status clause on ``state``, or on ``status`` for an item written before ``state`` existed."""
    old = f"{name}o"
    names[old] = "status"
    clause = c.term if isinstance(c, Not) else c
    if isinstance(clause, Term):
        values[v] = {"S": clause.value}
        test = f"({name} = {v} OR (attribute_not_exists({name}) AND {old} = {v}))"
    elif isinstance(clause, AnyOf):
        keys = [f"{v}_{j}" for j in range(len(clause.values))]
        values.update({k: {"S": x} for k, x in zip(keys, clause.values, strict=True)})
        listed = ", ".join(keys)
        test = f"({name} IN ({listed}) OR (attribute_not_exists({name}) AND {old} IN ({listed})))"
    else:
        raise ValueError(f"a status clause compiles as equality or membership, not {type(clause).__name__}")
    return f"NOT {test}" if isinstance(c, Not) else test


def _status(item: dict[str, Any]) -> str:
    return str((item.get("state") or item["status"])["S"])


def compile_record_query(clauses: Sequence[RecordClause], *, cursor_in_key: bool) -> CompiledQuery:
    """Compile a record query's clauses; the first is the tenant, the partition key of both indexes."""
    tenant, *others = clauses
    if not (isinstance(tenant, Term) and tenant.field == "tenant"):
        raise ValueError("a record query starts with its tenant")
    key, conds, rest = "tenant_id = :t", [], []
    names: dict[str, str] = {}
    values: dict[str, Any] = {":t": {"S": tenant.value}}
    for i, c in enumerate(others):
        field = c.term.field if isinstance(c, Not) else c.field
        if field not in _ATTRIBUTES:
            rest.append(c)
            continue
        name, v = f"#a{i}", f":v{i}"
        names[name] = _ATTRIBUTES[field][0]  # by placeholder: "status" is a reserved word
        if field == "status":
            conds.append(_status_condition(c, name, v, names, values))
            continue
        if field == "reader" and isinstance(c, AnyOf):
            conds.append(_readers_condition(c, name, v, values))
            continue
        if isinstance(c, After) and cursor_in_key:
            key += f" AND {name} > {v}"
            values[v] = _value(field, c.value)
        elif isinstance(c, After):
            conds.append(f"{name} > {v}")
            values[v] = _value(field, c.value)
        elif isinstance(c, Term):
            conds.append(f"{name} = {v}")
            values[v] = _value(field, c.value)
        elif isinstance(c, Not):
            conds.append(f"{name} <> {v}")
            values[v] = _value(field, c.term.value)
        elif isinstance(c, AnyOf):
            keys = [f"{v}_{j}" for j in range(len(c.values))]
            conds.append(f"{name} IN ({', '.join(keys)})")
            values.update({k: _value(field, x) for k, x in zip(keys, c.values, strict=True)})
        else:
            for op, suffix, bound in ((">=", "lo", c.low), ("<=", "hi", c.high)):
                if bound is not None:
                    conds.append(f"{name} {op} {v}{suffix}")
                    values[v + suffix] = _value(field, bound)
    return CompiledQuery(key, " AND ".join(conds) or None, names, values, rest)


class DynamoFileRepository:
    """FileRepository on one DynamoDB table (see module docstring)."""

    def __init__(self, settings: Settings) -> None:
        assert settings.aws.table
        self._settings = settings
        self._table = settings.aws.table

    @property
    def _ddb(self) -> Any:
        return client(self._settings, "dynamodb")

    def _call(self, op: str, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return getattr(self._ddb, op)(TableName=self._table, **kwargs)
        except ClientError as e:
            if error_code(e) == "ConditionalCheckFailedException":
                raise Conflict(f"{op}: condition failed") from e
            if is_retryable(e):
                raise retryable(e, f"dynamodb {op}") from e
            raise
        except BotoCoreError as e:
            raise retryable(e, f"dynamodb {op}") from e

    def _query(
        self,
        index: str | None,
        key_cond: str,
        values: dict[str, Any],
        *,
        forward: bool = True,
        filter_expr: str | None = None,
        names: dict[str, str] | None = None,
        start: dict[str, Any] | None = None,
    ) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "KeyConditionExpression": key_cond,
            "ExpressionAttributeValues": values,
            "ScanIndexForward": forward,
        }
        if index:
            kwargs["IndexName"] = index
        if filter_expr:
            kwargs["FilterExpression"] = filter_expr
        if names:
            kwargs["ExpressionAttributeNames"] = names
        if start:
            kwargs["ExclusiveStartKey"] = start
        yield from paginate(self._call, "query", kwargs)

    def create(self, record: FileRecord) -> bool:
        first = record.model_copy(update={"revision": 1})
        try:
            self._call("put_item", Item=_item(first), ConditionExpression="attribute_not_exists(file_id)")
        except Conflict:
            return False
        self._count(record.tenant_id, None, _count_name(first))
        return True

    def _count(self, tenant_id: str, was: str | None, now: str | None) -> None:
        """Move one record from ``was`` to ``now`` in the tenant's counts item. The record is written
        already: a count that cannot be moved (the item throttled past the SDK's retries) is logged and
        left off by one, never a failed stage that would be retried around a write that happened."""
        from botocore.exceptions import ClientError

        if was == now:
            return
        moves = [(n, d) for n, d in ((was, -1), (now, 1)) if n is not None]
        try:
            self._call(
                "update_item",
                Key={"file_id": {"S": f"{COUNTS}{tenant_id}"}},
                UpdateExpression="ADD " + ", ".join(f"#n{i} :d{i}" for i in range(len(moves))),
                ExpressionAttributeNames={f"#n{i}": n for i, (n, _) in enumerate(moves)},
                ExpressionAttributeValues={f":d{i}": {"N": str(d)} for i, (_, d) in enumerate(moves)},
            )
        except (RetryableError, ClientError) as e:
            log.warning("status counts not moved", tenant_id=tenant_id, error=type(e).__name__)

    def save(self, record: FileRecord) -> FileRecord:
        stored = record.model_copy(update={"revision": record.revision + 1})
        condition, values = _at_revision(record.revision)
        try:
            replaced = self._call(
                "put_item",
                Item=_item(stored),
                ConditionExpression=f"attribute_exists(file_id) AND ({condition})",
                ExpressionAttributeValues=values,
                ReturnValues="ALL_OLD",
            ).get("Attributes")
        except Conflict as e:
            exists = self._call("get_item", Key={"file_id": {"S": record.file_id}}, ConsistentRead=True).get("Item")
            if exists is None:
                raise NotFound(f"no record {record.file_id}") from e
            raise Conflict(f"record {record.file_id} changed since revision {record.revision}") from e
        if replaced:
            self._count(record.tenant_id, _count_name(_record(replaced)), _count_name(stored))
        return stored

    def get(self, tenant_id: str, file_id: str) -> FileRecord:
        item = self._call("get_item", Key={"file_id": {"S": file_id}}, ConsistentRead=True).get("Item")
        if item is None or item.get("tenant_id", {}).get("S") != tenant_id:  # a counts item has no tenant_id
            raise NotFound(f"no file {file_id}")
        return _record(item)

    def find_by_sha256(self, tenant_id: str, sha256: str) -> list[FileRecord]:
        items = self._query(GSI_SHA, "sha_key = :k", {":k": {"S": f"{tenant_id}{SEP}{sha256}"}})
        return [_record(i) for i in items if i["deleted"]["N"] == "0"]

    def find_latest(self, tenant_id: str, version_key: str) -> FileRecord | None:
        key = f"{tenant_id}{SEP}{version_key}"
        for item in self._query(GSI_NAME, "name_key = :k", {":k": {"S": key}}, forward=False):
            if item["deleted"]["N"] == "0" and _status(item) != Status.SKIPPED.value:
                return _record(item)
        return None

    def registered_under(self, tenant_id: str, version_key: str) -> bool:
        found = self._call(
            "query",
            IndexName=GSI_NAME,
            KeyConditionExpression="name_key = :k",
            ExpressionAttributeValues={":k": {"S": f"{tenant_id}{SEP}{version_key}"}},
            ProjectionExpression="file_id",
            Limit=1,
        )
        return bool(found.get("Items"))

    def lineage(self, tenant_id: str, lineage_id: str) -> list[FileRecord]:
        items = self._query(GSI_LINEAGE, "lineage_key = :k", {":k": {"S": f"{tenant_id}{SEP}{lineage_id}"}})
        # the GSI is eventually consistent: re-read each item strongly before deciding anything
        return [self.get(tenant_id, i["file_id"]["S"]) for i in items]

    def set_latest(self, tenant_id: str, lineage_id: str, file_id: str) -> list[FileRecord]:
        versions = self.lineage(tenant_id, lineage_id)
        target = next((v for v in versions if v.file_id == file_id), None)
        if target is None or target.deleted_at is not None:
            return []
        if any(v.version > target.version and v.is_latest and v.deleted_at is None for v in versions):
            return versions
        updates, after = [], []
        for old in versions:
            want = old.file_id == file_id
            v = old
            if old.is_latest != want:
                condition, values = _at_revision(old.revision)
                new = old.evolve(is_latest=want, revision=old.revision + 1)
                updates.append(
                    {
                        "Put": {
                            "TableName": self._table,
                            "Item": _item(new),
                            "ConditionExpression": condition,
                            "ExpressionAttributeValues": values,
                        }
                    }
                )
                v = new
            after.append(v)
        if not updates:
            return after
        from botocore.exceptions import ClientError

        try:  # at most 100 items per transaction: lineages are far shorter
            self._ddb.transact_write_items(TransactItems=updates)
        except ClientError as e:  # a concurrent writer changed the lineage: the caller retries
            if error_code(e) == "TransactionCanceledException":
                raise Conflict("set_latest lost a race") from e
            if is_retryable(e):
                raise retryable(e, "set_latest") from e
            raise
        return after

    def query(self, q: RecordQuery) -> list[FileRecord]:
        # newest/oldest come from the index by creation time, a page at a time; "id" from by_tenant
        by_time = q.order in ("newest", "oldest")
        compiled = compile_record_query(q.clauses(), cursor_in_key=not by_time)  # that index sorts by time
        out: list[FileRecord] = []
        items = self._query(
            GSI_CREATED if by_time else GSI_TENANT,
            compiled.key,
            compiled.values,
            forward=q.order != "newest",
            filter_expr=compiled.filter,
            names=compiled.names or None,
        )
        for item in items:
            r = _record(item)
            if not matches(r, compiled.rest):
                continue
            out.append(r)
            if (q.order == "id" and len(out) >= q.limit) or (by_time and len(out) >= q.offset + q.limit):
                break
        if q.order == "id":
            return out
        if by_time:
            return out[q.offset : q.offset + q.limit]
        # no index orders by name or size: those sort the tenant's matches here, every one of them read
        order_by: dict[str, Callable[[FileRecord], tuple[Any, str]]] = {
            "name": lambda r: (r.filename.casefold(), r.file_id),
            "size": lambda r: (-r.size_bytes, r.file_id),
        }
        return sorted(out, key=order_by[q.order])[q.offset : q.offset + q.limit]

    def _scan(self, projection: str, names: dict[str, str] | None = None) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {"ProjectionExpression": projection}
        if names:
            kwargs["ExpressionAttributeNames"] = names
        yield from paginate(self._call, "scan", kwargs)

    def counts(self, tenant_id: str | None = None) -> dict[tuple[str, str | None], int]:
        if tenant_id is None:  # every tenant (maintenance only): the records themselves
            return _tally(_record(i) for i in self._scan("#d", {"#d": "data"}) if "data" in i)
        key = {"file_id": {"S": f"{COUNTS}{tenant_id}"}}
        item = self._call("get_item", Key=key, ConsistentRead=True).get("Item", {})
        if COUNTED in item:
            return {_count_key(n): int(v["N"]) for n, v in item.items() if n.startswith("n|") and v["N"] != "0"}
        # the first call on a table from before the counts item: count the tenant's records once
        found = _tally(_record(i) for i in self._query(GSI_TENANT, "tenant_id = :t", {":t": {"S": tenant_id}}))
        # every number the item has or the count found is set: one moved before this count starts from 0
        numbers = {n: 0 for n in item if n.startswith("n|")} | {_count_name_of(*k): v for k, v in found.items()}
        if not numbers:  # no records yet (DynamoDB refuses an empty ExpressionAttributeNames)
            return {}
        names = {f"#n{i}": n for i, n in enumerate(numbers)}
        self._call(
            "update_item",
            Key=key,
            UpdateExpression="SET " + ", ".join([*(f"#n{i} = :v{i}" for i in range(len(numbers))), f"{COUNTED} = :t"]),
            ExpressionAttributeNames=names,
            ExpressionAttributeValues={f":v{i}": {"N": str(v)} for i, v in enumerate(numbers.values())}
            | {":t": {"BOOL": True}},
        )
        return found

    def tenants(self) -> list[str]:
        return sorted({i["tenant_id"]["S"] for i in self._scan("tenant_id") if "tenant_id" in i})

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's records (tombstones too) and its counts item; how many records went."""

        def batch(op: str, **kwargs: Any) -> Any:  # BatchWriteItem names its table inside the request
            return call(self._settings, "dynamodb", op, f"dynamodb {op}", **kwargs)

        gone, keys = 0, []
        for item in self._query(GSI_TENANT, "tenant_id = :t", {":t": {"S": tenant_id}}):
            keys.append({"file_id": item["file_id"]})
            if len(keys) == ERASE_PAGE:  # a page gone, then a look at the pass's deadline
                gone += delete_keys(batch, self._table, keys)
                keys = []
                stop_if_late(gone)
        gone += delete_keys(batch, self._table, keys)
        delete_keys(batch, self._table, [{"file_id": {"S": f"{COUNTS}{tenant_id}"}}])  # the counts go last
        return gone

    def unfinished(self) -> list[FileRecord]:
        found: list[FileRecord] = []
        for status in Status:
            if status in TERMINAL_STATUSES:
                continue
            found += [
                _record(i)
                for i in self._query(GSI_STATUS, "#st = :s", {":s": {"S": status.value}}, names={"#st": "status"})
            ]
        return sorted(found, key=lambda r: r.created_at)


def _at_revision(revision: int) -> tuple[str, dict[str, Any]]:
    """The condition "still at ``revision``"; items written before revisions existed count as 0."""
    values = {":rev": {"N": str(revision)}}
    if revision == 0:
        return "attribute_not_exists(revision) OR revision = :rev", values
    return "revision = :rev", values


def table_definition(name: str) -> dict[str, Any]:
    """The table's key schema and indexes (template.yaml declares the same; a test compares them)."""

    def gsi(index: str, pk: str, sk: str) -> dict[str, Any]:
        return {
            "IndexName": index,
            "Projection": {"ProjectionType": "ALL"},
            "KeySchema": [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}],
        }

    attrs = {
        "file_id": "S",
        "tenant_id": "S",
        "lineage_key": "S",
        "version": "N",
        "sha_key": "S",
        "name_key": "S",
        "status": "S",
        "created_at": "S",
    }
    return {
        "TableName": name,
        "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "file_id", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": t} for a, t in attrs.items()],
        "GlobalSecondaryIndexes": [
            gsi(GSI_TENANT, "tenant_id", "file_id"),
            gsi(GSI_LINEAGE, "lineage_key", "version"),
            gsi(GSI_SHA, "sha_key", "created_at"),
            gsi(GSI_NAME, "name_key", "version"),
            gsi(GSI_STATUS, "status", "created_at"),
            gsi(GSI_CREATED, "tenant_id", "created_at"),
        ],
    }
