"""The reconcile sweep finds and repairs each kind of injected drift, then finds none."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest

from semfs.bootstrap import Container
from semfs.domain.models import SearchRequest
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.maintenance.reconcile import reconcile
from semfs.pipeline.query.search import search
from semfs.ports import RecordQuery
from tests.builders import index_doc

pytestmark = pytest.mark.integration
T = "acme"


def test_reconcile_repairs_every_kind_of_drift(container: Container) -> None:
    lost_blob = ingest_bytes(container, T, b"# Lost\n\nThe stored bytes of this file vanish.", "lost.md").record
    unindexed = ingest_bytes(container, T, b"# Unindexed\n\nQuarterly parking permits for staff.", "permits.md").record
    # drift 1: the stored object of a record disappears
    container.blobs.delete(lost_blob.blob_key)
    # drift 2: an indexed record lost its index documents
    container.index.delete_file(T, unindexed.file_id)
    # drift 3: index documents of a file that has no record
    ghost = index_doc(
        "f_ghost",
        0,
        "ghost document about parking",
        tenant=T,
        title="ghost",
        embedding=container.embedder.embed_query("ghost"),
    )
    container.index.replace_file(T, "f_ghost", [ghost])
    # drift 4: an uploaded object whose event never arrived
    container.blobs.put("uploads/acme/inbox/late-arrival.md", b"# Late\n\nThis upload's event was lost.")

    report = reconcile(container)
    assert {k: v["found"] for k, v in report.items()} == {
        "objects_without_record": 1,
        "records_without_object": 1,
        "index_documents_without_record": 1,
        "indexed_records_missing_from_index": 1,
        "versions_not_revisions": 0,
        "enrichments_to_redo": 0,
        "failed_on_a_refused_key": 0,
        "registered_files_never_started": 0,
        "slots_of_closed_executions": 0,  # locally the job queue bounds the work: no gate
        "trash_past_its_days": 0,  # (tests/integration/test_trash.py)
    }
    assert all(v["fixed"] == v["found"] for v in report.values())
    assert reconcile(container) == {k: {"found": 0, "fixed": 0} for k in report}

    names = {
        r.filename
        for r in search(
            container, T, SearchRequest(query="parking permits upload event lost", mode="keyword", limit=20)
        ).results
    }
    assert "permits.md" in names and "late-arrival.md" in names and "ghost.txt" not in names
    assert container.repo.get(T, lost_blob.file_id).status.value == "deleted"


def test_dry_run_reports_without_repairing(container: Container) -> None:
    rec = ingest_bytes(container, T, b"# Note\n\nSome text to index here.", "note.md").record
    container.index.delete_file(T, rec.file_id)
    assert reconcile(container, repair=False)["indexed_records_missing_from_index"] == {"found": 1, "fixed": 0}
    assert reconcile(container, repair=False)["indexed_records_missing_from_index"]["found"] == 1


def test_a_sweep_taken_a_step_per_pass_finds_and_fixes_what_a_whole_sweep_does(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15: at 1M files a sweep cannot finish in one 900 s invocation. Here every pass takes one
    page of two (records beside the index's ids in their range, or objects) and the sweep goes to JSON
    and back between passes, as it does in the bucket between Lambda invocations."""
    from semfs.pipeline.maintenance import reconcile as sweep_module

    monkeypatch.setattr(sweep_module, "PAGE", 2)
    files = {
        tenant: [
            ingest_bytes(
                container, tenant, f"# Note {n}\n\nBicycle storage rules, part {n}.".encode(), f"n{n}.md"
            ).record
            for n in range(5)
        ]
        for tenant in ("acme", "globex")
    }
    lost = files["globex"][3]
    container.blobs.delete(lost.blob_key)  # a record without its object, in a later page
    unindexed = files["acme"][4]
    container.index.delete_file("acme", unindexed.file_id)
    for ghost_id in ("f_0000ghost", "f_8000ghost", "f_ffffghost"):  # orphans early, mid and past the last record
        ghost = index_doc(ghost_id, 0, "ghost", tenant="acme", embedding=container.embedder.embed_query("ghost"))
        container.index.replace_file("acme", ghost_id, [ghost])
    for n in range(3):  # uploads whose events were lost
        container.blobs.put(f"uploads/globex/late/{n}.md", f"# Late {n}\n\nArrived without an event.".encode())

    sweep = sweep_module.new_sweep(container)
    while sweep.phase != "done":
        sweep = sweep_module.reconcile_pass(container, sweep, deadline=0)  # one step, then out of time
        key = sweep_module.save_sweep(container, sweep)
        sweep = sweep_module.load_sweep(container, key)
        assert sweep.passes < 30
    assert sweep.passes >= 9  # 3 pages a tenant, 2 of objects, the slots
    assert {k: v["found"] for k, v in sweep.report().items() if v["found"]} == {
        "objects_without_record": 3,
        "records_without_object": 1,
        "index_documents_without_record": 3,
        "indexed_records_missing_from_index": 1,
    }
    assert all(v["fixed"] == v["found"] for v in sweep.report().values())
    assert container.index.file_ids("acme") == {r.file_id for r in files["acme"]}
    assert reconcile(container) == {k: {"found": 0, "fixed": 0} for k in sweep.report()}


def test_an_upload_deleted_through_the_api_is_not_drift(container: Container) -> None:
    """Deleting a file tombstones its record and erases the uploaded object: the sweep must not take
    the file for one whose event was lost (before, every sweep 'found' and re-registered it)."""
    from semfs.pipeline.catalogue.files import delete_file

    container.blobs.put("uploads/acme/memo.md", b"# Memo\n\nThe canteen closes early on Friday.")
    assert reconcile(container)["objects_without_record"] == {"found": 1, "fixed": 1}
    (record,) = container.repo.query(RecordQuery(tenant_id=T))
    delete_file(container, T, record.file_id)
    assert reconcile(container)["objects_without_record"] == {"found": 0, "fixed": 0}


def test_an_upload_refused_by_its_size_is_recorded_once(container: Container) -> None:
    from semfs.bootstrap import build_container

    small = build_container(
        container.settings.model_copy(update={"max_file_mb": 0.0005}),  # 500 bytes
        embedder=container.embedder,
        extractor=container.extractor,
    )
    small.blobs.put("uploads/acme/scan.tiff", b"\0" * 2000)
    assert reconcile(small)["objects_without_record"] == {"found": 1, "fixed": 1}
    (record,) = small.repo.query(RecordQuery(tenant_id=T, include_deleted=True))
    assert record.outcome is not None and record.outcome.value == "REJECTED_TOO_LARGE"
    assert reconcile(small)["objects_without_record"] == {"found": 0, "fixed": 0}  # before: 1, every sweep


def test_a_file_registered_but_never_queued_is_found_and_started(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a kill between registering an upload and queueing its execution left the record in
    ``received`` for good; a restart did not pick it up and reconcile reported no drift."""
    from semfs.pipeline.intake import ingest
    from semfs.pipeline.intake.register import Provenance, register

    reg = register(container, T, b"# Stranded\n\nRegistered, then the process died.", "stranded.md", Provenance())
    assert reg.record.status.value == "received"
    assert ingest.stranded(container) == []  # a file just registered is about to start: not stranded
    monkeypatch.setattr(ingest, "STRANDED_AFTER", timedelta(0))
    assert reconcile(container, repair=False)["registered_files_never_started"] == {"found": 1, "fixed": 0}
    assert reconcile(container)["registered_files_never_started"] == {"found": 1, "fixed": 1}
    assert container.repo.get(T, reg.record.file_id).status.value == "indexed"
    assert reconcile(container)["registered_files_never_started"] == {"found": 0, "fixed": 0}


def test_the_host_starts_files_a_crash_left_registered(
    settings: object, shared_extractor: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `semfs serve` runs on start and every minute: the file is queued and its workers finish it."""
    from semfs.bootstrap import build_container
    from semfs.pipeline.intake import ingest
    from semfs.pipeline.intake.register import Provenance, register
    from tests.waits import CEILING_S

    served = build_container(settings, extractor=shared_extractor, background_workers=1)  # type: ignore[arg-type]
    try:
        reg = register(served, T, b"# Stranded\n\nQueued after the restart.", "after-restart.md", Provenance())
        monkeypatch.setattr(ingest, "STRANDED_AFTER", timedelta(0))
        assert [r.file_id for r in ingest.restart_stranded(served)] == [reg.record.file_id]
        assert ingest.stranded(served) == []  # queued now: not started twice
        deadline = time.monotonic() + CEILING_S
        while served.repo.get(T, reg.record.file_id).status.value != "indexed" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert served.repo.get(T, reg.record.file_id).status.value == "indexed"
    finally:
        served.close()
