"""The reconcile sweep finds and repairs each kind of injected drift, then finds none."""

from __future__ import annotations

import pytest

from semfs.bootstrap import Container
from semfs.domain.models import SearchRequest
from semfs.pipeline.ingest import ingest_bytes
from semfs.pipeline.reconcile import reconcile
from semfs.pipeline.search import search
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
        "slots_of_closed_executions": 0,  # locally the job queue bounds the work: no gate
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
