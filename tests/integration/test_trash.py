"""The trash (issue 31): a delete hides a file everywhere and keeps what it stored until it is purged,
after ``SEMFS_TRASH_DAYS`` or on demand; a restore brings it back as it was. Before, a delete erased at
once and nothing could be undone, so one wrong click (or a stale page's Delete…) lost a file."""

from __future__ import annotations

from datetime import timedelta

import pytest

from semfs import demo
from semfs.bootstrap import Container, build_container
from semfs.domain.errors import InvalidRequest
from semfs.domain.models import SearchRequest, utcnow
from semfs.domain.outcomes import Status
from semfs.pipeline.catalogue import trash
from semfs.pipeline.catalogue.files import delete_file
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance
from semfs.pipeline.maintenance.reconcile import reconcile
from semfs.pipeline.query.ask import context
from semfs.pipeline.query.search import search
from semfs.ports.repository import RecordQuery

pytestmark = pytest.mark.integration
T = "acme"
TERMS = b"# Payment terms\n\nInvoices are payable within thirty days of delivery to the warehouse."


def found(c: Container, query: str = "payable thirty days", tenant: str = T) -> list[str]:
    return [r.file_id for r in search(c, tenant, SearchRequest(query=query, mode="keyword")).results]


def live(c: Container, tenant: str = T) -> list[str]:
    return [r.file_id for r in c.repo.query(RecordQuery(tenant_id=tenant))]


def test_a_trashed_file_is_hidden_everywhere_and_restored_as_it_was(container: Container) -> None:
    record = ingest_bytes(container, T, TERMS, "terms.md").record
    before = search(container, T, SearchRequest(query="payable thirty days")).results
    # when
    (moved,) = delete_file(container, T, record.file_id)
    # then: out of search (every mode), lists and briefings; what it stored is all still there
    assert moved.status is Status.TRASHED and moved.summary == record.summary
    assert found(container) == [] and live(container) == []
    assert context(container, T, "payment terms", "when are invoices payable") == []
    assert [r.file_id for r in trash.in_trash(container, T)] == [record.file_id]
    assert container.blobs.exists(record.blob_key)
    assert list(container.blobs.list(f"derived/{T}/{record.file_id}/"))
    # when: restored
    (back,) = trash.restore(container, T, record.file_id)
    # then: found as before, with the same snippets, and out of the trash
    assert back.status is Status.INDEXED and back.deleted_at is None and back.is_latest
    after = search(container, T, SearchRequest(query="payable thirty days")).results
    assert [(r.file_id, r.snippets[0].text) for r in after] == [(r.file_id, r.snippets[0].text) for r in before]
    assert trash.in_trash(container, T) == []
    with pytest.raises(InvalidRequest, match="not in the trash"):
        trash.restore(container, T, record.file_id)


def test_restoring_the_latest_version_makes_it_latest_again(container: Container) -> None:
    same_place = Provenance(version_key="s3:uploads/acme/supply.docx")
    v1 = ingest_bytes(container, T, demo._contract(1), "supply.docx", same_place).record
    v2 = ingest_bytes(container, T, demo._contract(2), "supply.docx", same_place).record
    delete_file(container, T, v2.file_id)
    assert found(container, "supply agreement") == [v1.file_id] and container.repo.get(T, v1.file_id).is_latest
    trash.restore(container, T, v2.file_id)
    assert found(container, "supply agreement") == [v2.file_id]
    assert container.repo.get(T, v2.file_id).is_latest and not container.repo.get(T, v1.file_id).is_latest
    # a whole document, and back
    assert len(delete_file(container, T, v1.file_id, all_versions=True)) == 2
    assert found(container, "supply agreement") == []
    assert len(trash.restore(container, T, v1.file_id, all_versions=True)) == 2
    assert found(container, "supply agreement") == [v2.file_id]


def test_the_sweep_purges_what_stayed_past_the_trash_days_and_nothing_newer(container: Container) -> None:
    old = ingest_bytes(container, T, TERMS, "terms.md").record
    new = ingest_bytes(container, T, b"# Parking\n\nPermits are renewed every January.", "parking.md").record
    delete_file(container, T, old.file_id)
    delete_file(container, T, new.file_id)
    days = container.settings.trash_days
    container.repo.save(container.repo.get(T, old.file_id).evolve(deleted_at=utcnow() - timedelta(days=days + 1)))
    # when
    report = reconcile(container)
    # then: the old one is erased (a tombstone), the newer one still restorable
    assert report["trash_past_its_days"] == {"found": 1, "fixed": 1}
    tomb = container.repo.get(T, old.file_id)
    assert tomb.status is Status.DELETED and tomb.summary is None
    assert not container.blobs.exists(old.blob_key) and not list(container.blobs.list(f"derived/{T}/{old.file_id}/"))
    with pytest.raises(InvalidRequest, match="deleted for good"):
        trash.restore(container, T, old.file_id)
    assert [r.file_id for r in trash.in_trash(container, T)] == [new.file_id]
    assert reconcile(container)["trash_past_its_days"] == {"found": 0, "fixed": 0}


def test_emptying_the_trash_erases_it_and_only_the_callers(container: Container) -> None:
    mine = ingest_bytes(container, T, TERMS, "terms.md").record
    theirs = ingest_bytes(container, "globex", TERMS, "terms.md").record
    delete_file(container, T, mine.file_id)
    delete_file(container, "globex", theirs.file_id)
    assert [r.file_id for r in trash.empty_trash(container, T)] == [mine.file_id]
    assert container.repo.get(T, mine.file_id).status is Status.DELETED
    assert container.repo.get("globex", theirs.file_id).status is Status.TRASHED  # another tenant's trash stays
    assert trash.empty_trash(container, T) == []


def test_sending_a_trashed_file_again_restores_it_and_a_purged_one_is_stored_anew(container: Container) -> None:
    record = ingest_bytes(container, T, TERMS, "terms.md").record
    delete_file(container, T, record.file_id)
    # before: the same bytes under the same name answered "UNCHANGED" and the file never came back
    again = ingest_bytes(container, T, TERMS, "terms.md")
    assert again.restored and again.record.status is Status.INDEXED and found(container) == [record.file_id]
    delete_file(container, T, record.file_id, purge=True)
    assert found(container) == []
    anew = ingest_bytes(container, T, TERMS, "terms.md")
    assert anew.created and anew.record.file_id == record.file_id
    assert container.repo.get(T, record.file_id).status is Status.INDEXED and found(container) == [record.file_id]


def test_a_trash_of_zero_days_purges_on_delete(container: Container) -> None:
    c = build_container(
        container.settings.model_copy(update={"trash_days": 0}),
        embedder=container.embedder,
        extractor=container.extractor,
    )
    try:
        record = ingest_bytes(c, T, TERMS, "terms.md").record
        (gone,) = delete_file(c, T, record.file_id)
        assert gone.status is Status.DELETED and not c.blobs.exists(record.blob_key)
    finally:
        c.close()
