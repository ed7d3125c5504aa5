from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC

import pytest

from semfs.domain.errors import Conflict, NotFound, RetryableError
from semfs.domain.models import FileRecord, StageTiming, utcnow
from semfs.domain.outcomes import Outcome, Status
from semfs.pipeline.record_update import update
from semfs.ports import FileRepository, RecordQuery

pytestmark = pytest.mark.contract


def rec(file_id: str, tenant: str = "acme", **kw: object) -> FileRecord:
    values: dict[str, object] = {
        "file_id": file_id,
        "tenant_id": tenant,
        "lineage_id": "l_" + file_id,
        "sha256": "s" + file_id,
        "blob_key": "content/x",
        "filename": f"{file_id}.txt",
        "normalised_name": f"{file_id}.txt",
        "size_bytes": 3,
    }
    values.update(kw)
    return FileRecord.model_validate(values)


def test_create_is_conditional(repository: FileRepository) -> None:
    assert repository.create(rec("f1", title="first"))
    assert not repository.create(rec("f1", title="second"))
    assert repository.get("acme", "f1").title == "first"


def test_save_overwrites_and_requires_existing(repository: FileRepository) -> None:
    repository.create(rec("f1"))
    repository.save(repository.get("acme", "f1").evolve(status=Status.INDEXED, outcome=Outcome.OK))
    got = repository.get("acme", "f1")
    assert (got.status, got.outcome) == (Status.INDEXED, Outcome.OK)
    with pytest.raises(NotFound):
        repository.save(rec("missing"))


def test_another_tenants_record_is_not_found(repository: FileRepository) -> None:
    repository.create(rec("f1", tenant="acme"))
    with pytest.raises(NotFound):
        repository.get("globex", "f1")
    assert repository.query(RecordQuery(tenant_id="globex")) == []


def test_find_by_sha_excludes_deleted(repository: FileRepository) -> None:
    repository.create(rec("f1", sha256="same"))
    repository.create(rec("f2", sha256="same", deleted_at=utcnow()))
    assert [r.file_id for r in repository.find_by_sha256("acme", "same")] == ["f1"]
    assert repository.find_by_sha256("globex", "same") == []


def test_find_latest_matches_the_version_key_only(repository: FileRepository) -> None:
    key = "path:/home/ann/contracts/c.docx"
    repository.create(rec("v1", normalised_name="c.docx", lineage_id="L", version=1, version_key=key))
    repository.create(rec("v2", normalised_name="c.docx", lineage_id="L", version=2, version_key=key))
    repository.create(rec("elsewhere", normalised_name="c.docx", version_key="path:/tmp/c.docx"))
    repository.create(rec("no-key", normalised_name="c.docx"))
    repository.create(rec("skipped", version=3, version_key=key, status=Status.SKIPPED))
    found = repository.find_latest("acme", key)
    assert found is not None and found.file_id == "v2"  # the same name elsewhere, or without a key, is not it
    assert repository.find_latest("globex", key) is None
    assert repository.find_latest("acme", "path:/nowhere") is None


def test_registered_under_sees_every_record_of_a_key_deleted_and_skipped_too(repository: FileRepository) -> None:
    repository.create(rec("gone", version_key="s3:uploads/acme/a.md", deleted_at=utcnow(), status=Status.DELETED))
    repository.create(rec("big", version_key="s3:uploads/acme/b.bin", status=Status.SKIPPED))
    assert repository.registered_under("acme", "s3:uploads/acme/a.md")
    assert repository.registered_under("acme", "s3:uploads/acme/b.bin")
    assert not repository.registered_under("acme", "s3:uploads/acme/c.md")
    assert not repository.registered_under("globex", "s3:uploads/acme/a.md")  # the tenant is part of the key


def test_set_latest_never_lets_an_older_version_win(repository: FileRepository) -> None:
    repository.create(rec("v1", lineage_id="L", version=1, is_latest=True))
    repository.create(rec("v2", lineage_id="L", version=2, is_latest=False))
    after = repository.set_latest("acme", "L", "v2")
    assert [(r.file_id, r.is_latest, r.revision) for r in after] == [("v1", False, 2), ("v2", True, 2)]
    assert [r.is_latest for r in repository.lineage("acme", "L")] == [False, True]
    late = repository.set_latest("acme", "L", "v1")  # a late, older event changes nothing
    assert [(r.is_latest, r.revision) for r in late] == [(False, 2), (True, 2)]
    assert [r.is_latest for r in repository.lineage("acme", "L")] == [False, True]
    assert repository.set_latest("acme", "L", "nope") == []


def test_writes_are_conditional_on_the_revision_read(repository: FileRepository) -> None:
    repository.create(rec("f1"))
    first = repository.get("acme", "f1")
    assert first.revision == 1
    stored = repository.save(first.evolve(title="a"))
    assert stored.revision == 2 and repository.get("acme", "f1").revision == 2
    with pytest.raises(Conflict):  # a writer holding the old copy loses instead of overwriting
        repository.save(first.evolve(tags=["stale"]))
    assert repository.get("acme", "f1").title == "a" and repository.get("acme", "f1").tags == []


def test_concurrent_writers_both_land(repository: FileRepository, request: pytest.FixtureRequest) -> None:
    """A stage writing its fields and a tag edit on the same record, many times at once: nothing is lost.
    (On moto each request is made atomic, as DynamoDB makes it: see ``atomic_requests``.)"""
    if "dynamodb" in request.node.name:
        request.getfixturevalue("atomic_requests")
    repository.create(rec("f1"))

    def as_retried(change: Callable[[FileRecord], FileRecord]) -> None:
        """What a caller does with ``RetryableError`` (a stage's Retry, the local runner's): try again later.
        On a loaded machine a writer can lose all its attempts to the other three; its change then has not
        landed, and must land exactly once when it is tried again (the revision count below says so)."""
        for _ in range(50):
            try:
                update(repository, "acme", "f1", change)
                return
            except RetryableError:
                continue
        raise AssertionError("a writer never landed")

    def stage_writer(n: int) -> None:
        as_retried(lambda r: r.evolve(timings=[*r.timings, StageTiming(stage=f"s{n}", ms=1)]))

    def tag_writer(n: int) -> None:
        as_retried(lambda r: r.evolve(tags=[*r.tags, f"t{n}"]))

    with ThreadPoolExecutor(4) as pool:
        jobs = [pool.submit(stage_writer, n) for n in range(12)] + [pool.submit(tag_writer, n) for n in range(12)]
        for job in jobs:
            job.result()
    final = repository.get("acme", "f1")
    assert sorted(final.tags) == sorted(f"t{n}" for n in range(12))
    assert sorted(t.stage for t in final.timings) == sorted(f"s{n}" for n in range(12))
    assert final.revision == 25


def test_forgetting_a_tenant_erases_its_records_tombstones_and_counts_only(repository: FileRepository) -> None:
    for r in (rec("f_1"), rec("f_2", deleted_at=utcnow(), status=Status.DELETED), rec("f_3", tenant="globex")):
        repository.create(r)
    assert repository.counts("acme")
    assert repository.forget_tenant("acme") == 2
    assert repository.forget_tenant("acme") == 0
    assert repository.query(RecordQuery(tenant_id="acme", include_deleted=True)) == []
    assert repository.counts("acme") == {} and repository.tenants() == ["globex"]
    with pytest.raises(NotFound):
        repository.get("acme", "f_1")
    assert repository.get("globex", "f_3").file_id == "f_3"


def test_query_filters_and_paginates(repository: FileRepository) -> None:
    for i in range(7):
        mime = "application/pdf" if i == 6 else "text/plain"
        status = Status.INDEXED if i % 2 else Status.FAILED
        repository.create(rec(f"f{i}", status=status, tags=["x"] if i < 2 else [], mime_type=mime))
    page1 = repository.query(RecordQuery(tenant_id="acme", limit=3))
    page2 = repository.query(RecordQuery(tenant_id="acme", limit=3, after=page1[-1].file_id))
    assert [r.file_id for r in page1 + page2] == [f"f{i}" for i in range(6)]
    indexed = repository.query(RecordQuery(tenant_id="acme", statuses=[Status.INDEXED]))
    assert {r.file_id for r in indexed} == {"f1", "f3", "f5"}
    assert {r.file_id for r in repository.query(RecordQuery(tenant_id="acme", tag="x"))} == {"f0", "f1"}
    assert [r.file_id for r in repository.query(RecordQuery(tenant_id="acme", mime_type="application/pdf"))] == ["f6"]


def test_counts_and_unfinished(repository: FileRepository) -> None:
    repository.create(rec("a", status=Status.INDEXED, outcome=Outcome.OK))
    repository.create(rec("b", status=Status.EMBEDDING))
    repository.create(rec("c", tenant="globex", status=Status.SKIPPED, outcome=Outcome.SKIPPED_EMPTY))
    assert repository.counts("acme") == {("indexed", "OK"): 1, ("embedding", None): 1}
    assert sum(repository.counts().values()) == 3
    assert [r.file_id for r in repository.unfinished()] == ["b"]
    assert repository.tenants() == ["acme", "globex"]


def test_counts_follow_every_change_of_status_or_outcome(repository: FileRepository) -> None:
    """The status page reads these on every poll: in DynamoDB one counts item per tenant, moved by each
    write (before, every record of the tenant was read for each call; at 1M files, minutes and a
    timed-out API)."""
    for n in range(4):
        repository.create(rec(f"f{n}", status=Status.RECEIVED))
    update(repository, "acme", "f0", lambda r: r.evolve(status=Status.EXTRACTING))
    for n in (1, 2):
        update(repository, "acme", f"f{n}", lambda r: r.evolve(status=Status.INDEXED, outcome=Outcome.OK))
    update(repository, "acme", "f2", lambda r: r.evolve(tags=["x"]))  # no status change: no count moves
    update(repository, "acme", "f3", lambda r: r.evolve(status=Status.DELETED, deleted_at=utcnow()))
    assert repository.counts("acme") == {("extracting", None): 1, ("indexed", "OK"): 2, ("deleted", None): 1}
    assert repository.counts("globex") == {}
    assert repository.tenants() == ["acme"]  # a counts item is not a tenant's record ...
    with pytest.raises(NotFound):
        repository.get("acme", "~counts#acme")  # ... nor a file
    assert [r.file_id for r in repository.query(RecordQuery(tenant_id="acme", include_deleted=True))] == [
        "f0",
        "f1",
        "f2",
        "f3",
    ]


def test_the_status_index_holds_only_files_in_flight_and_older_items_still_filter(aws_settings: object) -> None:
    """Issue 28: by_status was keyed on the status of every record, so every file ever indexed sat under one
    key ("indexed") and every write of one went to it; by_model was keyed on the embedding model and read by
    nothing. Now only a record in flight carries the index's key, and items written before that (the status
    under "status" alone) are still found by a status filter."""
    import boto3

    from semfs.adapters.aws.dynamodb import DynamoFileRepository, _item, table_definition
    from semfs.config import Settings

    assert isinstance(aws_settings, Settings)
    assert {g["IndexName"] for g in table_definition("t")["GlobalSecondaryIndexes"]} == {
        "by_tenant",
        "by_lineage",
        "by_sha",
        "by_name",
        "by_status",
        "by_tenant_created",
    }
    ddb = boto3.client("dynamodb", region_name="eu-west-1")
    repo = DynamoFileRepository(aws_settings)
    repo.create(rec("f_1", status=Status.INDEXED, outcome=Outcome.OK))
    repo.create(rec("f_2", status=Status.RECEIVED))
    repo.create(rec("f_3", status=Status.FAILED, outcome=Outcome.FAILED_PARSE))
    in_index = ddb.scan(TableName="semfs-files", IndexName="by_status")["Items"]
    assert [i["file_id"]["S"] for i in in_index] == ["f_2"]
    update(repo, "acme", "f_2", lambda r: r.evolve(status=Status.INDEXED, outcome=Outcome.OK))
    assert ddb.scan(TableName="semfs-files", IndexName="by_status")["Items"] == []  # it left when it finished
    # an item as an earlier version wrote it: the status under "status", no "state"
    legacy = _item(rec("f_4", status=Status.INDEXED, outcome=Outcome.OK))
    legacy["status"] = legacy.pop("state")
    ddb.put_item(TableName="semfs-files", Item=legacy)
    assert {r.file_id for r in repo.query(RecordQuery(tenant_id="acme", statuses=[Status.INDEXED]))} == {
        "f_1",
        "f_2",
        "f_4",
    }
    both = repo.query(RecordQuery(tenant_id="acme", statuses=[Status.FAILED, Status.INDEXED]))
    assert {r.file_id for r in both} == {"f_1", "f_2", "f_3", "f_4"}
    assert [r.file_id for r in repo.query(RecordQuery(tenant_id="acme", statuses=[Status.FAILED]))] == ["f_3"]
    repo.create(rec("f_5", status=Status.EMBEDDING))
    assert [r.file_id for r in repo.unfinished()] == ["f_5"]


def test_counts_of_a_table_from_before_the_counts_item(aws_settings: object) -> None:
    """An upgraded deployment has records and no counts item: the first call counts them once."""
    import boto3

    from semfs.adapters.aws.dynamodb import DynamoFileRepository, table_definition
    from semfs.config import Settings

    assert isinstance(aws_settings, Settings)
    ddb = boto3.client("dynamodb", region_name="eu-west-1")
    ddb.create_table(**table_definition("semfs-upgraded"))
    repo = DynamoFileRepository(aws_settings.model_copy(update={"table": "semfs-upgraded"}))
    repo.create(rec("a", status=Status.INDEXED, outcome=Outcome.OK))
    repo.create(rec("b", status=Status.FAILED, outcome=Outcome.FAILED_PARSE))
    ddb.delete_item(TableName="semfs-upgraded", Key={"file_id": {"S": "~counts#acme"}})  # as before this version
    repo.create(rec("c", status=Status.RECEIVED))  # a write before the first count: a partial item
    assert repo.counts("acme") == {("indexed", "OK"): 1, ("failed", "FAILED_PARSE"): 1, ("received", None): 1}
    update(repo, "acme", "c", lambda r: r.evolve(status=Status.EXTRACTING))
    calls: list[str] = []
    real = repo._call
    repo._call = lambda op, **kw: calls.append(op) or real(op, **kw)  # type: ignore[method-assign]
    assert repo.counts("acme") == {("indexed", "OK"): 1, ("failed", "FAILED_PARSE"): 1, ("extracting", None): 1}
    assert calls == ["get_item"]  # one item read, whatever the number of records


def test_newest_and_oldest_pages(repository: FileRepository, request: pytest.FixtureRequest) -> None:
    from datetime import timedelta

    start = utcnow()
    for n in range(7):
        repository.create(rec(f"f{n}", created_at=start + timedelta(minutes=n), tags=["x"] if n % 2 else []))
    newest = repository.query(RecordQuery(tenant_id="acme", order="newest", limit=3, offset=2))
    assert [r.file_id for r in newest] == ["f4", "f3", "f2"]
    oldest = repository.query(RecordQuery(tenant_id="acme", order="oldest", limit=2, offset=1))
    assert [r.file_id for r in oldest] == ["f1", "f2"]
    tagged = repository.query(RecordQuery(tenant_id="acme", order="newest", tag="x", limit=2, offset=1))
    assert [r.file_id for r in tagged] == ["f3", "f1"]
    if "dynamodb" in request.node.callspec.id:  # the Documents view's default order reads its page, not the tenant
        indexes: list[str] = []
        real = repository._call  # type: ignore[attr-defined]
        repository._call = lambda op, **kw: indexes.append(kw.get("IndexName", "")) or real(op, **kw)  # type: ignore[attr-defined]
        repository.query(RecordQuery(tenant_id="acme", order="newest", limit=3))
        assert indexes == ["by_tenant_created"]


def test_a_throttled_count_never_fails_the_write_it_follows(aws_settings: object) -> None:
    """The record is written before its count moves: failing the stage then would retry around a write
    that happened. The count is left off by one, and logged."""
    import boto3

    from semfs.adapters.aws.dynamodb import DynamoFileRepository, table_definition
    from semfs.config import Settings
    from semfs.domain.errors import RetryableError

    assert isinstance(aws_settings, Settings)
    boto3.client("dynamodb", region_name="eu-west-1").create_table(**table_definition("semfs-hot"))
    repo = DynamoFileRepository(aws_settings.model_copy(update={"table": "semfs-hot"}))
    real = repo._call

    def throttled(op: str, **kw: object) -> object:
        if op == "update_item":
            raise RetryableError("dynamodb update_item: ThrottlingException")
        return real(op, **kw)

    repo._call = throttled  # type: ignore[method-assign]
    assert repo.create(rec("a", status=Status.RECEIVED))
    saved = update(repo, "acme", "a", lambda r: r.evolve(status=Status.EXTRACTING))
    assert repo.get("acme", "a").status is Status.EXTRACTING and saved.revision == 2


# One record per interesting value of every filter field, and a table of queries with the ids each
# must return. Every repository answers the table, and ``domain.scope.matches`` (what a clause means)
# agrees with it: the compilers (SQL; DynamoDB key, filter and the rest) are held to one meaning.
def _filter_corpus() -> list[FileRecord]:
    from datetime import datetime, timedelta

    day = datetime(2026, 3, 1, tzinfo=UTC)
    return [
        rec("a", status=Status.INDEXED, outcome=Outcome.OK, tags=["red"], thread_id="t1", created_at=day),
        rec(
            "b",
            status=Status.FAILED,
            outcome=Outcome.FAILED_PARSE,
            auto_tags=["red"],
            owner="ann",
            readers=["u:ann"],
            created_at=day + timedelta(1),
        ),
        rec(
            "c",
            status=Status.INDEXED,
            outcome=Outcome.SKIPPED_DUPLICATE,
            mime_type="application/pdf",
            owner="bob",
            readers=["u:bob", "g:hr"],
            created_at=day + timedelta(2),
        ),
        rec(
            "d",
            status=Status.EMBEDDING,
            contact_ids=["k1", "k2"],
            source_type="email_attachment",
            source_key="m/1",
            readers=["tenant"],
            created_at=day + timedelta(3),
        ),
        rec("e", lineage_id="L", version=1, is_latest=False, created_at=day + timedelta(4)),
        rec("f", lineage_id="L", version=2, deleted_at=day, status=Status.DELETED, created_at=day + timedelta(5)),
        rec("g", tenant="globex", tags=["red"], thread_id="t1", contact_ids=["k1"], created_at=day),
    ]


_DAY = "2026-03-0{}T00:00:00+00:00"
FILTER_TABLE: list[tuple[str, dict[str, object], str]] = [
    ("tenant only: the deleted one left out", {}, "abcde"),
    ("deleted included", {"include_deleted": True}, "abcdef"),
    ("one status", {"statuses": [Status.INDEXED]}, "ac"),
    ("statuses any of", {"statuses": [Status.FAILED, Status.EMBEDDING]}, "bd"),
    ("a person's tag or the enricher's", {"tag": "red"}, "ab"),
    ("a contact inside a list", {"contact_id": "k2"}, "d"),
    ("thread", {"thread_id": "t1"}, "a"),
    ("mime from the record's JSON", {"mime_type": "application/pdf"}, "c"),
    ("source type and key", {"source_type": "email_attachment", "source_key": "m/1"}, "d"),
    ("lineage, latest only", {"lineage_id": "L", "latest_only": True, "include_deleted": True}, "f"),
    ("lineage, every version", {"lineage_id": "L", "include_deleted": True}, "ef"),
    ("created from (included)", {"created_from": _DAY.format(3)}, "cde"),
    ("created to (included)", {"created_to": _DAY.format(2)}, "ab"),
    ("created between", {"created_from": _DAY.format(2), "created_to": _DAY.format(4)}, "bcd"),
    ("duplicates left out", {"exclude_duplicates": True}, "abde"),
    ("after a cursor", {"after": "b"}, "cde"),
    ("filters together", {"statuses": [Status.INDEXED, Status.FAILED], "tag": "red", "after": "a"}, "b"),
    ("no match", {"tag": "blue"}, ""),
    # who reads: a record without readers (from before access lists) is the whole tenant's
    ("a member sees the tenant's and their own", {"readers": ("tenant", "u:ann")}, "abde"),
    ("a group's member sees the group's", {"readers": ("tenant", "u:cy", "g:hr")}, "acde"),
    ("a member of no group sees the tenant's", {"readers": ("tenant", "u:cy")}, "ade"),
    ("only what was shared in person", {"readers": ("u:bob",)}, "c"),
    ("readers with other filters", {"readers": ("tenant", "u:ann"), "tag": "red"}, "ab"),
]


@pytest.mark.parametrize(("case", "filters", "expected"), FILTER_TABLE, ids=[c for c, _, _ in FILTER_TABLE])
def test_every_record_filter_means_the_same_in_every_repository(
    repository: FileRepository, case: str, filters: dict[str, object], expected: str
) -> None:
    from datetime import datetime

    from semfs.domain.scope import matches

    corpus = _filter_corpus()
    for r in corpus:
        assert repository.create(r)
    kw = {k: datetime.fromisoformat(v) if k.startswith("created_") else v for k, v in filters.items()}
    for order in ("id", "newest", "oldest", "name", "size"):
        q = RecordQuery(tenant_id="acme", order=order, **kw)  # type: ignore[arg-type]
        assert "".join(sorted(r.file_id for r in repository.query(q))) == expected, order
    oracle = "".join(r.file_id for r in corpus if matches(r, RecordQuery(tenant_id="acme", **kw).clauses()))  # type: ignore[arg-type]
    assert oracle == expected


def test_every_record_field_is_compiled_by_every_repository() -> None:
    import typing

    from semfs.adapters.aws.dynamodb import _ATTRIBUTES
    from semfs.adapters.local.sqlite_repository import _RECORD_LISTS, _RECORD_SQL
    from semfs.domain.scope import RECORD_VALUES, RecordField

    fields = set(typing.get_args(RecordField))
    assert set(RECORD_VALUES) == fields  # what each field means, on a record
    assert set(_RECORD_SQL) | set(_RECORD_LISTS) | {"reader"} == fields  # readers: a clause of their own
    assert set(_ATTRIBUTES) < fields  # DynamoDB filters the rest with RECORD_VALUES
