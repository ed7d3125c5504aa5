"""Index: replace this file's documents in the index (delete-then-upsert by file id), then settle
which version of the lineage is latest — in the records first, then in the index."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.pipeline.documents import build_docs, load_chunks, load_keyword_chunks, settle_index, settle_latest
from semfs.pipeline.stages.state import PipelineState
from semfs.pipeline.stages.unit_of_work import stage

if TYPE_CHECKING:
    from semfs.ports import Container


def run(state: PipelineState, c: Container) -> PipelineState:
    """Settle the lineage's latest version in the records, write this file's documents with that
    flag, and only when the lineage has other versions update their flags in the index too.
    (Re-running after a crash between the two writes converges: both steps are idempotent.)"""
    with stage("index", state, c) as work:
        record = work.record
        chunks, vectors = load_chunks(c, record)
        latest, lineage = settle_latest(c, record)
        work.rebase(next((v for v in lineage if v.file_id == record.file_id), record))
        is_latest = latest is not None and latest.file_id == record.file_id
        rest = load_keyword_chunks(c, record)
        docs = build_docs(record, chunks, vectors, record.embedding_model, is_latest=is_latest, keyword_chunks=rest)
        c.index.replace_file(record.tenant_id, record.file_id, docs)
        if record.version > 1 or not is_latest:
            settle_index(c, record.tenant_id, record.lineage_id, latest)
    return state
