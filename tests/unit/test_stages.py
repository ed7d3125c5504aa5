"""Each stage on its own, and its unit of work: one read and one conditional write of the file's record.

The stages run one by one (as the Lambda handlers run them) on the local adapters with the hash
embedder; the repository is wrapped to count what each stage asks of it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from semfs.adapters.local.recording_events import RecordingEventPublisher
from semfs.bootstrap import Container
from semfs.domain.errors import PermanentError
from semfs.domain.models import FileRecord
from semfs.domain.outcomes import Outcome, Status
from semfs.pipeline.documents import load_document
from semfs.pipeline.intake.register import Provenance, register
from semfs.pipeline.stages import embed, enrich, extract, finalize, index
from semfs.pipeline.stages.state import PipelineState
from semfs.ports import FileRepository

pytestmark = pytest.mark.unit
T = "acme"
NOTE = b"# Parking\n\nPermits are renewed every January at the front desk."


class CountingRepository:
    """The real repository, with every call counted by method name."""

    def __init__(self, inner: FileRepository) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.inner, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return method(*args, **kwargs)

        return counted


@pytest.fixture
def counted(container: Container) -> tuple[Container, CountingRepository]:
    repo = CountingRepository(container.repo)
    return dataclasses.replace(container, repo=repo), repo  # type: ignore[arg-type]


def registered(c: Container, data: bytes = NOTE, name: str = "parking.md") -> PipelineState:
    reg = register(c, T, data, name, Provenance(tags=["facilities"]))
    return PipelineState(tenant_id=T, file_id=reg.record.file_id)


def run(
    stage: Callable[[PipelineState, Container], PipelineState],
    state: PipelineState,
    c: Container,
    repo: CountingRepository,
) -> tuple[PipelineState, dict[str, int]]:
    repo.calls.clear()
    out = stage(state, c)
    return out, dict(repo.calls)


ONE_READ_ONE_WRITE = {"get": 1, "save": 1}


def test_each_stage_reads_once_and_writes_once(counted: tuple[Container, CountingRepository]) -> None:
    c, repo = counted
    state = registered(c)
    per_stage: dict[str, dict[str, int]] = {}
    for name, stage in [
        ("extract", extract.run),
        ("enrich", enrich.run),
        ("embed", embed.run),
        ("index", index.run),
        ("finalize", finalize.run),
    ]:
        state, calls = run(stage, state, c, repo)
        per_stage[name] = calls
    print("repository calls per stage:", per_stage)
    # a first version settles its lineage in one transaction (no separate lineage read)
    assert per_stage == {
        "extract": ONE_READ_ONE_WRITE,
        "enrich": ONE_READ_ONE_WRITE,
        "embed": ONE_READ_ONE_WRITE,
        "index": {"get": 1, "set_latest": 1, "save": 1},
        "finalize": ONE_READ_ONE_WRITE,
    }
    record = c.repo.get(T, state.file_id)
    assert (record.status, record.outcome, record.revision) == (Status.INDEXED, Outcome.OK, 6)
    assert [t.stage for t in record.timings] == ["extract", "enrich", "embed", "index", "finalize"]


def test_a_new_version_settles_its_lineage_without_a_second_write(
    counted: tuple[Container, CountingRepository],
) -> None:
    c, repo = counted
    first = registered(c)
    for stage in (extract.run, enrich.run, embed.run, index.run, finalize.run):
        first = stage(first, c)
    second = register(
        c,
        T,
        NOTE + b"\n\nLost permits cost 10 EUR.",
        "parking.md",
        Provenance(previous_version_id=first.file_id),
    )
    state = PipelineState(tenant_id=T, file_id=second.record.file_id)
    for stage in (extract.run, enrich.run, embed.run):
        state = stage(state, c)
    state, calls = run(index.run, state, c, repo)
    assert calls == {"get": 1, "set_latest": 1, "save": 1}
    v1, v2 = c.repo.lineage(T, second.record.lineage_id)
    assert (v1.is_latest, v2.is_latest) == (False, True)


def test_extract_stores_the_document_and_names_the_next_status(container: Container) -> None:
    state = extract.run(registered(container), container)
    record = container.repo.get(T, state.file_id)
    assert (record.status, record.mime_type, state.needs_ocr) == (Status.ENRICHING, "text/markdown", False)
    assert "renewed every January" in load_document(container, record).text


def test_a_failing_stage_records_its_outcome_in_one_write(counted: tuple[Container, CountingRepository]) -> None:
    c, repo = counted
    state = registered(c, b"%PDF-1.7\n broken", "broken.pdf")
    repo.calls.clear()
    with pytest.raises(PermanentError):
        extract.run(state, c)
    assert dict(repo.calls) == ONE_READ_ONE_WRITE
    record = c.repo.get(T, state.file_id)
    assert record.outcome is Outcome.FAILED_PARSE and record.status is Status.RECEIVED and record.error


def test_enrich_titles_summarises_and_tags(container: Container) -> None:
    state = enrich.run(extract.run(registered(container), container), container)
    record = container.repo.get(T, state.file_id)
    assert record.status is Status.EMBEDDING
    assert record.title and record.summary and record.auto_tags
    assert record.tags == ["facilities"]  # manual tags are kept as given


def test_embed_stores_chunks_and_the_card_vector(container: Container) -> None:
    state = registered(container)
    for stage in (extract.run, enrich.run, embed.run):
        state = stage(state, container)
    record = container.repo.get(T, state.file_id)
    assert record.status is Status.INDEXING and record.chunk_count == 1
    assert (record.embedding_model, record.embedding_dim) == (container.embedder.model, container.embedder.dim)


def test_embed_stops_at_the_files_budget_and_keeps_what_it_embedded(container: Container) -> None:
    """Issue 47.7: Embed and Index ran outside the file's budget (a 6 MB file of short lines held a worker for
    minutes). Past the budget's deadline Embed keeps the chunks embedded so far (a first batch at least, and the
    card), and the file is OK_PARTIAL saying so; Index and Finalize then take only those."""
    lines = "\n\n".join(f"Section {i}. The parking rules of building {i} change on Monday." for i in range(3000))
    state = registered(container, lines.encode(), "rules.md")
    for stage in (extract.run, enrich.run):
        state = stage(state, container)
    state = state.model_copy(update={"deadline": 1.0})  # long past
    state = embed.run(state, container)
    record = container.repo.get(T, state.file_id)
    batch = container.settings.embedding.batch_size
    assert record.chunk_count == batch and state.partial
    assert state.partial_reason is not None and "within the file's time budget" in state.partial_reason
    for stage in (index.run, finalize.run):
        state = stage(state, container)
    record = container.repo.get(T, state.file_id)
    assert record.outcome is Outcome.OK_PARTIAL and "time budget" in (record.error or "")
    assert len([d for d in container.index.file_ids(T) if d == state.file_id]) == 1


def test_index_then_finalize_make_it_searchable_and_announce_it(
    container: Container, events: RecordingEventPublisher
) -> None:
    state = registered(container)
    for stage in (extract.run, enrich.run, embed.run, index.run):
        state = stage(state, container)
    assert container.index.file_ids(T) == {state.file_id}
    finalize.run(state, container)
    record: FileRecord = container.repo.get(T, state.file_id)
    assert (record.status, record.outcome) == (Status.INDEXED, Outcome.OK)
    assert [e[0] for e in events.events] == ["FileIndexed"]


def test_mark_failed_ends_the_file_with_the_recorded_outcome(container: Container) -> None:
    state = registered(container, b"%PDF-1.7\n broken", "broken.pdf")
    with pytest.raises(PermanentError):
        extract.run(state, container)
    out = finalize.mark_failed(state.model_copy(update={"error": {"Error": "PermanentError"}}), container)
    record = container.repo.get(T, state.file_id)
    assert (record.status, record.outcome, out.model_extra) == (
        Status.FAILED,
        Outcome.FAILED_PARSE,
        {"outcome": "FAILED_PARSE"},
    )
    assert container.index.file_ids(T) == set()


def test_a_card_is_indexed_only_when_it_says_more_than_the_title() -> None:
    """Every chunk already carries the title; a title-only card (an untitled or unenriched file) would
    be a second, shorter copy competing with them (SciFact semantic 0.663 with such cards, 0.668 without)."""
    import numpy as np

    from semfs.domain.models import Chunk, Location

    base = FileRecord(
        file_id="f", tenant_id="t", lineage_id="l", sha256="-", blob_key="-", filename="a.txt",
        normalised_name="a.txt", size_bytes=1, title="Vitamin D", mime_type="text/plain",
    )  # fmt: skip
    chunks = [Chunk(n=0, text="Vitamin D and bone density.", location=Location(paragraph=1), tokens=6)]
    vectors = np.ones((2, 3), dtype=np.float32)
    assert [d.kind for d in index.build_docs(base, chunks, vectors, "m", True)] == ["chunk"]
    enriched = base.model_copy(update={"summary": "A trial of vitamin D in older adults."})
    assert [d.kind for d in index.build_docs(enriched, chunks, vectors, "m", True)] == ["chunk", "card"]
    deck = base.model_copy(update={"mime_type": "application/pdf"})  # "PDF document" finds it by its kind
    assert [d.kind for d in index.build_docs(deck, chunks, vectors, "m", True)] == ["chunk", "card"]
