from __future__ import annotations

import pytest

from semfs.domain.errors import NotFound
from semfs.domain.models import FileRecord, utcnow
from semfs.domain.outcomes import Outcome, Status
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


def test_find_latest_matches_name_and_thread(repository: FileRepository) -> None:
    repository.create(rec("v1", normalised_name="c.docx", lineage_id="L", version=1, thread_id="t1"))
    repository.create(rec("v2", normalised_name="c.docx", lineage_id="L", version=2, thread_id="t1"))
    repository.create(rec("other", normalised_name="c.docx", thread_id=None))
    found = repository.find_latest("acme", "c.docx", "t1")
    assert found is not None and found.file_id == "v2"
    none_thread = repository.find_latest("acme", "c.docx", None)
    assert none_thread is not None and none_thread.file_id == "other"
    assert repository.find_latest("acme", "c.docx", "t2") is None


def test_set_latest_never_lets_an_older_version_win(repository: FileRepository) -> None:
    repository.create(rec("v1", lineage_id="L", version=1, is_latest=True))
    repository.create(rec("v2", lineage_id="L", version=2, is_latest=False))
    assert repository.set_latest("acme", "L", "v2")
    assert [r.is_latest for r in repository.lineage("acme", "L")] == [False, True]
    assert not repository.set_latest("acme", "L", "v1")  # a late, older event
    assert [r.is_latest for r in repository.lineage("acme", "L")] == [False, True]


def test_query_filters_and_paginates(repository: FileRepository) -> None:
    for i in range(7):
        repository.create(rec(f"f{i}", status=Status.INDEXED if i % 2 else Status.FAILED, tags=["x"] if i < 2 else []))
    page1 = repository.query(RecordQuery(tenant_id="acme", limit=3))
    page2 = repository.query(RecordQuery(tenant_id="acme", limit=3, after=page1[-1].file_id))
    assert [r.file_id for r in page1 + page2] == [f"f{i}" for i in range(6)]
    indexed = repository.query(RecordQuery(tenant_id="acme", statuses=[Status.INDEXED]))
    assert {r.file_id for r in indexed} == {"f1", "f3", "f5"}
    assert {r.file_id for r in repository.query(RecordQuery(tenant_id="acme", tag="x"))} == {"f0", "f1"}


def test_counts_and_unfinished(repository: FileRepository) -> None:
    repository.create(rec("a", status=Status.INDEXED, outcome=Outcome.OK))
    repository.create(rec("b", status=Status.EMBEDDING))
    repository.create(rec("c", tenant="globex", status=Status.SKIPPED, outcome=Outcome.SKIPPED_EMPTY))
    assert repository.counts("acme") == {("indexed", "OK"): 1, ("embedding", None): 1}
    assert sum(repository.counts().values()) == 3
    assert [r.file_id for r in repository.unfinished()] == ["b"]
    assert repository.tenants() == ["acme", "globex"]
