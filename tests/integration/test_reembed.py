"""Switching the embedding model on a populated store while searches run: none fails, every moment
has one model's vectors, an interrupted run resumes, and at the end every chunk is on the new model."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.bootstrap import Container, build_container
from semfs.domain.models import SearchRequest
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.maintenance.reembed import progress, reembed
from semfs.pipeline.query.search import search
from semfs.ports import RecordQuery
from tests.conftest import make_settings
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration
T = "acme"
TOPICS = [
    "invoices and payment terms",
    "bicycle frames and forks",
    "warehouse stock levels",
    "holiday and leave",
    "security incidents",
    "board meeting minutes",
    "shipping rates",
    "quality certificates",
]


def populate(tmp_path: Path, shared_extractor: object, n: int = 16) -> Container:
    c = build_container(make_settings(tmp_path), embedder=HashEmbedder(384, "hash-384"), extractor=shared_extractor)  # type: ignore[arg-type]
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        ingest_bytes(c, T, f"# Note {i} on {topic}\n\nThis note {i} covers {topic} in detail.".encode(), f"note-{i}.md")
    return c


def models_with_vectors(db: Path) -> set[str]:
    with sqlite3.connect(db) as conn:
        return {r[0] for r in conn.execute("SELECT DISTINCT embedding_model FROM docs WHERE embedding IS NOT NULL")}


@pytest.mark.parametrize(
    "new_model",
    [HashEmbedder(128, "hash-128"), HashEmbedder(384, "hash-384-v2")],
    ids=["different-dimension", "same-dimension"],
)
def test_model_switch_with_searches_running(tmp_path: Path, shared_extractor: object, new_model: HashEmbedder) -> None:
    old = populate(tmp_path, shared_extractor)
    db = old.settings.index_db
    new = build_container(old.settings, embedder=new_model, extractor=shared_extractor)  # type: ignore[arg-type]
    searcher = build_container(old.settings, embedder=new_model, extractor=shared_extractor)  # type: ignore[arg-type]
    failures: list[BaseException] = []
    seen_models: list[set[str]] = []
    empty = 0
    stop = threading.Event()

    def keep_searching() -> None:
        nonlocal empty
        while not stop.is_set():
            try:
                found = search(searcher, T, SearchRequest(query="payment terms for invoices", mode="semantic"))
                empty += not found.results
                seen_models.append(models_with_vectors(db))
            except BaseException as e:  # any failure is what this test counts
                failures.append(e)

    thread = threading.Thread(target=keep_searching)
    thread.start()
    try:
        first = reembed(new, limit=8)  # interrupted half way
        assert (first["done"], first["remaining"], first["switched"]) == (8, None, False)  # the walk goes on
        assert new.index.active_model() == "hash-384"
        assert progress(new) is not None and progress(new)["done"] == 8  # type: ignore[index]
        second = reembed(new)  # the rerun continues where the first stopped
        assert (second["done"], second["remaining"], second["switched"]) == (8, 0, True)
    finally:
        stop.set()
        thread.join(timeout=CEILING_S)
    assert failures == []
    assert seen_models and all(len(m) == 1 for m in seen_models)  # one model's vectors at every moment
    assert models_with_vectors(db) == {new_model.model}
    assert new.index.active_model() == new_model.model
    records = [
        new.repo.get(T, h)
        for h in {r.file_id for r in search(new, T, SearchRequest(query="note", mode="keyword", limit=100)).results}
    ]
    assert len(records) == 16 and {r.embedding_model for r in records} == {new_model.model}
    assert search(new, T, SearchRequest(query="bicycle frames forks", mode="semantic")).results
    assert empty <= 2  # only a search racing the switch itself may come back without vector hits


def test_files_ingested_during_a_switch_wait_for_it(tmp_path: Path, shared_extractor: object) -> None:
    old = populate(tmp_path, shared_extractor, n=4)
    new = build_container(old.settings, embedder=HashEmbedder(128, "hash-128"), extractor=shared_extractor)  # type: ignore[arg-type]
    reembed(new, limit=2)
    late = ingest_bytes(new, T, b"# Late\n\nA note about carbon forks arriving mid-switch.", "late.md").record
    assert models_with_vectors(old.settings.index_db) == {"hash-384"}  # still one model searchable
    assert reembed(new)["switched"]
    hits = search(new, T, SearchRequest(query="carbon forks arriving", mode="semantic"))
    assert late.file_id in {h.file_id for h in hits.results}


def test_on_demand_reembed_of_one_file_or_tag(tmp_path: Path, shared_extractor: object) -> None:
    c = populate(tmp_path, shared_extractor, n=3)
    target = c.repo.query(RecordQuery(tenant_id=T))[0]
    result = reembed(c, file_ids=[target.file_id])
    assert (result["done"], result["switched"]) == (1, False)
    assert reembed(c, tag="no-such-tag")["total"] == 0


def test_new_files_only_mode(tmp_path: Path, shared_extractor: object) -> None:
    old = populate(tmp_path, shared_extractor, n=8)
    settings = old.settings.model_copy(update={"reembed_new_files_only": True})
    new = build_container(settings, embedder=HashEmbedder(128, "hash-128"), extractor=shared_extractor)  # type: ignore[arg-type]
    fresh = ingest_bytes(new, T, b"# Fresh\n\nA note about cormorants nesting on the roof.", "fresh.md").record
    assert fresh.embedding_model == "hash-128"
    result = reembed(new)  # the archive is left on its model
    assert (result["mode"], result["done"], result["switched"]) == ("new_files_only", 0, False)
    assert new.index.active_model() == "hash-384"
    # each vector leg searches one model: the archive by the old model, the new file by the new one
    old_hit = search(new, T, SearchRequest(query="bicycle frames and forks", mode="semantic", limit=3)).results
    new_hit = search(new, T, SearchRequest(query="cormorants nesting roof", mode="semantic", limit=3)).results
    assert old_hit and "bicycle" in (old_hit[0].title or "")
    assert fresh.file_id in {h.file_id for h in new_hit}  # its leg ranks it first; RRF ties it with the old leg's top
    hybrid = search(new, T, SearchRequest(query="cormorants nesting roof", limit=3)).results
    assert hybrid[0].file_id == fresh.file_id
    assert models_with_vectors(settings.index_db) == {"hash-384"}  # the searchable set itself stays one model
    # a later full re-embed (mode off) still switches everything, the new file included
    full = build_container(old.settings, embedder=HashEmbedder(128, "hash-128"), extractor=shared_extractor)  # type: ignore[arg-type]
    assert reembed(full)["switched"]
    assert models_with_vectors(settings.index_db) == {"hash-128"}


@pytest.mark.model
def test_a_store_migrates_to_the_multilingual_model_by_reembedding(tmp_path: Path, shared_extractor: object) -> None:
    """SEMFS_EMBEDDING_MODEL names the second local model: reembed moves the store to it, and queries
    are then embedded by it (its own query prefix) — a German question finds the English note."""
    old = populate(tmp_path, shared_extractor, n=8)
    settings = old.settings.model_copy(update={"embedder": "onnx", "embedding_model": "multilingual-e5-small-q4"})
    new = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    assert reembed(new)["switched"]
    assert models_with_vectors(settings.index_db) == {"multilingual-e5-small-q4"}
    hits = search(new, T, SearchRequest(query="Zahlungsbedingungen für Rechnungen", mode="semantic", limit=1)).results
    assert hits[0].title and "invoices" in hits[0].title


def test_records_a_switch_ran_out_of_time_for_follow_it_in_the_next_pass_unembedded(
    tmp_path: Path, shared_extractor: object
) -> None:
    """At 1M files the records cannot all follow the switch inside the pass that switched. They follow
    in the next passes, from their staged vectors: before, that pass re-embedded every one of them
    (paying the embedding API a second time for the whole archive)."""
    old = populate(tmp_path, shared_extractor, n=3)
    calls: list[int] = []

    class Counting(HashEmbedder):
        def embed_documents(self, texts: list[str]) -> object:  # type: ignore[override]
            calls.append(len(texts))
            return super().embed_documents(texts)

    new = build_container(old.settings, embedder=Counting(384, "hash-384-v2"), extractor=shared_extractor)  # type: ignore[arg-type]
    passes = [reembed(new, deadline=0)]  # out of time after each file
    while not passes[-1]["switched"]:
        passes.append(reembed(new, deadline=0))
        assert len(passes) <= 5  # a file a pass, a page of the walk that finds nothing left, the switch
    assert passes[-1]["following"] and new.index.active_model() == "hash-384-v2"
    staged_calls = len(calls)
    records = new.repo.query(RecordQuery(tenant_id=T))
    assert {r.embedding_model for r in records} == {"hash-384"}  # none followed yet
    after = reembed(new)
    assert (after["done"], after["following"]) == (3, False)
    assert len(calls) == staged_calls  # followed from the staged vectors, nothing embedded again
    assert {r.embedding_model for r in new.repo.query(RecordQuery(tenant_id=T))} == {"hash-384-v2"}
    assert reembed(new)["total"] == 0


def test_each_pass_goes_on_from_where_the_walk_stopped(
    tmp_path: Path, shared_extractor: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15: a pass reads a page of records from the walk's place, never the whole archive again
    (before, every pass listed every indexed record into memory to find what was left: at 1M files,
    gigabytes and minutes of each 900 s pass)."""
    from semfs.pipeline.maintenance import reembed as module

    monkeypatch.setattr(module, "PAGE", 2)
    old = populate(tmp_path, shared_extractor, n=6)
    new = build_container(old.settings, embedder=HashEmbedder(128, "hash-128"), extractor=shared_extractor)  # type: ignore[arg-type]
    pages_read: list[int] = []
    real_query = new.repo.query
    monkeypatch.setattr(new.repo, "query", lambda q: pages_read.append(1) or real_query(q))
    per_pass = []
    result: dict[str, object] = {"switched": False}
    while not result["switched"]:
        before = len(pages_read)
        result = reembed(new, deadline=0)
        per_pass.append(len(pages_read) - before)
        assert len(per_pass) <= 12
    assert max(per_pass) == 1  # one page a pass: a file of it, or all of it when nothing is left to do
    assert new.index.active_model() == "hash-128"
