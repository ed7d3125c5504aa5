"""The whole local pipeline: register → the executed ASL → index → search."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from semfs import demo
from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.adapters.local.recording_events import RecordingEventPublisher
from semfs.bootstrap import Container, build_container
from semfs.domain.errors import EmbeddingUnavailable, EnrichmentFailed
from semfs.domain.models import Enrichment, SearchFilters, SearchRequest
from semfs.domain.outcomes import Outcome, Status
from semfs.pipeline.catalogue.files import delete_file, set_tags
from semfs.pipeline.documents import load_document
from semfs.pipeline.intake.ingest import ingest_bytes, resume
from semfs.pipeline.intake.register import Provenance
from semfs.pipeline.maintenance.reindex import reindex
from semfs.pipeline.query.search import search
from semfs.ports.enricher import EnrichInput
from tests.conftest import make_settings

pytestmark = pytest.mark.integration
T = "acme"
TERMS = b"# Payment terms\n\nInvoices are payable within thirty days of receipt.\n\nLate payments accrue interest."


def found(c: Container, query: str, tenant: str = T, **kw: object) -> list[str]:
    return [r.filename for r in search(c, tenant, SearchRequest(query=query, **kw)).results]  # type: ignore[arg-type]


def test_ingest_runs_every_stage_and_is_searchable(container: Container, events: RecordingEventPublisher) -> None:
    reg = ingest_bytes(
        container,
        T,
        TERMS,
        "terms.md",
        Provenance(thread_subject="Q3 Financials", contacts=["Acme Corp"], tags=["Legal"]),
    )
    r = reg.record
    assert (r.status, r.outcome, r.error) == (Status.INDEXED, Outcome.OK, None)
    assert r.title == "Payment terms" and r.summary and r.chunk_count >= 1
    assert (r.tags, r.tag_labels) == (["legal"], {"legal": "Legal"})  # a slug, the typed label for display
    assert r.auto_tags[:2] == ["q3-financials", "acme-corp"]
    assert {t.stage for t in r.timings} == {"extract", "enrich", "embed", "index", "finalize"}
    assert r.embedding_model == "hash-384" and r.is_latest
    assert events.events[-1][0] == "FileIndexed"
    assert "Late payments" not in str(events.events)  # events carry ids, never text
    for mode in ("hybrid", "keyword", "semantic"):
        assert found(container, "payable thirty days", mode=mode) == ["terms.md"]
    assert found(container, "payable thirty days", tenant="globex") == []


def test_reingesting_the_same_file_is_a_no_op(container: Container) -> None:
    first = ingest_bytes(container, T, TERMS, "terms.md")
    again = ingest_bytes(container, T, TERMS, "terms.md")
    assert first.created and not again.created
    assert again.record.file_id == first.record.file_id
    assert sum(container.repo.counts(T).values()) == 1


def test_identical_bytes_under_another_name_are_a_duplicate(container: Container) -> None:
    first = ingest_bytes(container, T, TERMS, "terms.md").record
    dup = ingest_bytes(container, T, TERMS, "copy of terms.md").record
    assert dup.outcome is Outcome.SKIPPED_DUPLICATE and dup.status is Status.SKIPPED
    assert dup.duplicate_of == first.file_id and first.file_id in (dup.error or "")
    assert found(container, "payable") == ["terms.md"]
    # another tenant's identical bytes are not a duplicate
    assert ingest_bytes(container, "globex", TERMS, "terms.md").record.outcome is Outcome.OK


def test_version_chain_by_name_and_thread(container: Container) -> None:
    prov = Provenance(thread_subject="Supply deal")
    v1 = ingest_bytes(container, T, demo._contract(1), "supply-agreement.docx", prov).record
    v2 = ingest_bytes(container, T, demo._contract(2), "supply-agreement.docx", prov).record
    v3 = ingest_bytes(container, T, demo._contract(3), "Supply-Agreement.docx", prov).record
    assert [v.version for v in (v1, v2, v3)] == [1, 2, 3]
    assert v1.lineage_id == v2.lineage_id == v3.lineage_id
    assert v3.previous_version_id == v2.file_id
    lineage = container.repo.lineage(T, v1.lineage_id)
    assert [v.is_latest for v in lineage] == [False, False, True]
    assert v2.change_summary and "30 days" in v2.change_summary and "45 days" in v2.change_summary
    assert v3.change_summary and 'Added: "Quality"' in v3.change_summary
    # latest only by default; history on request
    results = search(container, T, SearchRequest(query="supply agreement payment terms")).results
    assert [r.file_id for r in results] == [v3.file_id]
    history = search(
        container,
        T,
        SearchRequest(query="supply agreement payment terms", filters=SearchFilters(include_history=True)),
    ).results
    assert {r.file_id for r in history} == {v1.file_id, v2.file_id, v3.file_id}
    # the same name in another thread starts a new lineage
    other = ingest_bytes(
        container,
        T,
        demo._contract(1) + b"\n",
        "supply-agreement.docx",
        Provenance(thread_subject="Another deal"),
    ).record
    assert (other.version, other.previous_version_id) == (1, None)
    assert other.lineage_id != v1.lineage_id


def test_explicit_previous_version(container: Container) -> None:
    v1 = ingest_bytes(container, T, TERMS, "terms.md").record
    v2 = ingest_bytes(
        container,
        T,
        TERMS + b"\n\nNew clause on discounts.",
        "terms-2026.md",
        Provenance(previous_version_id=v1.file_id),
    ).record
    assert (v2.version, v2.lineage_id, v2.previous_version_id) == (2, v1.lineage_id, v1.file_id)
    assert v2.change_summary and "discounts" in v2.change_summary


class Crash(BaseException):
    """Stands for the process dying mid-pipeline (not an Exception: nothing may catch it)."""


class CrashingEmbedder(HashEmbedder):
    def embed_documents(self, texts: list[str]) -> list[list[float]]:  # type: ignore[override]
        raise Crash


def test_crash_mid_pipeline_then_resume(tmp_path: Path, shared_extractor: object) -> None:
    settings = make_settings(tmp_path)
    crashing = build_container(settings, embedder=CrashingEmbedder(), extractor=shared_extractor)  # type: ignore[arg-type]
    with pytest.raises(Crash):
        ingest_bytes(crashing, T, TERMS, "terms.md")
    stuck = crashing.repo.unfinished()
    assert [r.status for r in stuck] == [Status.EMBEDDING]
    healthy = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    assert found(healthy, "payable") == []  # nothing partially indexed is visible
    done = resume(healthy)
    assert [(r.status, r.outcome) for r in done] == [(Status.INDEXED, Outcome.OK)]
    assert found(healthy, "payable") == ["terms.md"]
    # the next ingest of the same file also finishes an unfinished record instead of skipping it
    assert healthy.repo.unfinished() == []


def test_crash_left_file_is_finished_by_the_next_ingest(tmp_path: Path, shared_extractor: object) -> None:
    settings = make_settings(tmp_path)
    crashing = build_container(settings, embedder=CrashingEmbedder(), extractor=shared_extractor)  # type: ignore[arg-type]
    with pytest.raises(Crash):
        ingest_bytes(crashing, T, TERMS, "terms.md")
    healthy = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    assert ingest_bytes(healthy, T, TERMS, "terms.md").record.outcome is Outcome.OK


def _zip_bomb() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", b"<Types/>")
        zf.writestr("word/document.xml", b"\x00" * (30 * 1024 * 1024))
    return buf.getvalue()


def _encrypted_pdf() -> bytes:
    from reportlab.pdfgen import canvas

    buf = io.BytesIO()
    c = canvas.Canvas(buf, encrypt="secret")
    c.drawString(100, 700, "confidential figures")
    c.showPage()
    c.save()
    return buf.getvalue()


def _png() -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (40, 20), "white").save(buf, format="PNG")
    return buf.getvalue()


BAD_INPUTS = {
    "zero.txt": (lambda: b"", Outcome.SKIPPED_EMPTY),
    "truncated.pdf": (lambda: demo._security_pdf()[:900], Outcome.FAILED_PARSE),
    "encrypted.pdf": (_encrypted_pdf, Outcome.SKIPPED_ENCRYPTED),
    "bomb.docx": (_zip_bomb, Outcome.REJECTED_ARCHIVE_BOMB),
    "laughs.xml": (
        lambda: b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]><l>&b;</l>',
        Outcome.REJECTED_XML_ENTITY,
    ),
    "huge.txt": (lambda: b"word " * (12 * 1024 * 1024), Outcome.REJECTED_TOO_LARGE),
    "fake.pdf": (lambda: b"just text pretending", Outcome.REJECTED_TYPE_MISMATCH),
    "program.exe": (lambda: b"MZ\x90\x00\x03\x00\x00\x00" + bytes(200), Outcome.SKIPPED_UNSUPPORTED_TYPE),
    "scan.png": (_png, Outcome.SKIPPED_NO_TEXT),
}


def test_bad_inputs_end_in_their_outcome_and_disturb_nothing(container: Container) -> None:
    good = ingest_bytes(container, T, TERMS, "terms.md").record
    before = search(container, T, SearchRequest(query="payable thirty days"))
    for name, (make, expected) in BAD_INPUTS.items():
        r = ingest_bytes(container, T, make(), name).record
        assert r.outcome is expected, (name, r.outcome, r.error)
        assert r.status is expected.final_status and r.status.terminal
        assert r.error and "\n" not in r.error and "Traceback" not in r.error
        assert r.file_id not in container.index.file_ids(T)
    assert container.repo.get(T, good.file_id).outcome is Outcome.OK
    assert search(container, T, SearchRequest(query="payable thirty days")) == before
    assert container.index.file_ids(T) == {good.file_id}


def test_sixty_megabyte_file_is_rejected_without_storing_it(container: Container) -> None:
    r = ingest_bytes(container, T, b"a" * (60 * 1024 * 1024), "big.log").record
    assert r.outcome is Outcome.REJECTED_TOO_LARGE
    assert list(container.blobs.list("content/")) == []


def test_unsafe_name_is_rejected(container: Container) -> None:
    assert ingest_bytes(container, T, b"hello", "bad\x00name.txt").record.outcome is Outcome.REJECTED_UNSAFE_NAME
    assert ingest_bytes(container, T, b"hello there", "../../etc/passwd").record.filename == "passwd"


def test_parse_timeout_ends_in_failed_timeout(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, extract_timeout_s=0.001)
    c = build_container(settings)
    try:
        r = ingest_bytes(c, T, demo._q3_workbook(), "q3.xlsx").record
    finally:
        c.close()
    assert r.outcome is Outcome.FAILED_TIMEOUT and r.status is Status.FAILED


class FlakyEmbedder(HashEmbedder):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    def embed_documents(self, texts: list[str]) -> list[list[float]]:  # type: ignore[override]
        if self.failures > 0:
            self.failures -= 1
            raise EmbeddingUnavailable("temporarily down")
        return super().embed_documents(texts)


def test_retryable_errors_are_retried_by_the_state_machine(tmp_path: Path, shared_extractor: object) -> None:
    c = build_container(make_settings(tmp_path), embedder=FlakyEmbedder(2), extractor=shared_extractor)  # type: ignore[arg-type]
    assert ingest_bytes(c, T, TERMS, "terms.md").record.outcome is Outcome.OK


def test_retries_exhausted_end_in_failed_embed(tmp_path: Path, shared_extractor: object) -> None:
    c = build_container(make_settings(tmp_path), embedder=FlakyEmbedder(100), extractor=shared_extractor)  # type: ignore[arg-type]
    r = ingest_bytes(c, T, TERMS, "terms.md").record
    assert (r.status, r.outcome) == (Status.FAILED, Outcome.FAILED_EMBED)
    assert c.index.file_ids(T) == set()


class BrokenLlm:
    def enrich(self, item: EnrichInput) -> Enrichment:
        raise EnrichmentFailed("model overloaded")


def test_enricher_failure_falls_back_to_extractive(tmp_path: Path, shared_extractor: object) -> None:
    c = build_container(make_settings(tmp_path), enricher=BrokenLlm(), extractor=shared_extractor)  # type: ignore[arg-type]
    r = ingest_bytes(c, T, TERMS, "terms.md").record
    assert (r.outcome, r.title) == (Outcome.OK_ENRICH_FALLBACK, "Payment terms")


def slow_enrichment(item: EnrichInput) -> Enrichment:
    """An enrichment that outlasts any deadline a test sets (run in the worker, so importable by name): the real
    one got fast enough for a 1 MB document to finish inside pebble's 0.1 s timeout check at times."""
    import time

    time.sleep(30)
    raise AssertionError("the deadline should have stopped the worker")


def test_an_enrichment_past_its_deadline_ends_in_the_worker_and_the_file_keeps_its_name_as_title(
    tmp_path: Path, shared_extractor: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: enrichment ran in the serving process, holding the interpreter for as long as it took (a
    48 KB file: 113 s, /health held for 83 s). Now it runs in the bounded worker under its own deadline:
    past it (here an enrichment that sleeps past any deadline) the worker is stopped, the file is indexed with
    the title its name gives, and the worker takes the next file."""
    from semfs.adapters.local import extractive_enricher

    monkeypatch.setattr(extractive_enricher, "enrich_extractively", slow_enrichment)
    settings = make_settings(tmp_path, enrich_timeout_s=0.001)
    c = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    big = ("# Quarterly report\n\n" + "Revenue grew in every region this quarter. " * 25_000).encode()
    r = ingest_bytes(c, T, big, "q3-report.md").record
    assert (r.status, r.outcome, r.title, r.auto_tags) == (Status.INDEXED, Outcome.OK_ENRICH_FALLBACK, "Q3 report", [])
    # still serving (a file the worker reads: a short one is read in this process)
    assert shared_extractor.extract(big, "q3-report.md").document.title  # type: ignore[attr-defined]


def test_search_degrades_to_keyword_when_embeddings_fail(container: Container, embedder: HashEmbedder) -> None:
    ingest_bytes(container, T, TERMS, "terms.md")
    embedder.fail = True
    resp = search(container, T, SearchRequest(query="payable thirty days"))
    assert resp.degraded and [r.filename for r in resp.results] == ["terms.md"]
    assert search(container, T, SearchRequest(query="payable", mode="semantic")).degraded


def test_a_question_in_german_is_not_answered_by_the_german_document_that_shares_its_function_words(
    container: Container,
) -> None:
    """The keyword leg keeps every word, and in a mostly English collection "wer", "hat" and "die" are
    rare: before, a German question's BM25 leg ranked a German file about something else first."""
    ingest_bytes(container, T, TERMS, "terms.md")
    german = "# Urlaub\n\nWer hat die Anträge für den Sommer schon abgegeben? Die Liste hat jeder im Team."
    ingest_bytes(container, T, german.encode(), "urlaub.md")
    assert found(container, "Wer hat die Rechnung bezahlt?", mode="keyword") == []
    assert found(container, "Wer hat die Anträge abgegeben?", mode="keyword") == ["urlaub.md"]  # its own words
    (hit,) = search(container, T, SearchRequest(query="Wer hat die Anträge abgegeben?", mode="keyword")).results
    marked = {hit.snippets[0].text[a:b].lower() for a, b in hit.snippets[0].highlights}
    assert "anträge" in marked and not marked & {"wer", "hat", "die"}  # the words searched are the ones marked
    assert found(container, "who has paid the invoices", mode="keyword") == ["terms.md"]


def test_only_a_query_plainly_in_another_language_loses_its_function_words() -> None:
    from semfs.pipeline.query.search import keyword_text

    assert keyword_text("Wer hat die Schreibmaschine patentiert?") == "Schreibmaschine patentiert"
    assert keyword_text("Quels sont les avantages des logiciels libres ?") == "avantages logiciels libres"
    assert (
        keyword_text("¿Qué empresa tecnológica es conocida como Big Blue?") == "empresa tecnológica conocida Big Blue"
    )
    for kept in (
        "die hard review",  # "die" is German, the query is not
        "war crimes",
        "la la land soundtrack",  # one foreign word, twice
        "son of a preacher man",
        "Cell autonomous sex determination in somatic cells occurs in Passeriformes.",
        "Wer hat das",  # nothing would remain
        "How long do we have to pay",
    ):
        assert keyword_text(kept) == kept


SCIFACT_QUERIES = Path(__file__).resolve().parents[3] / "shared" / "bench" / "scifact" / "queries.jsonl"


@pytest.mark.skipif(not SCIFACT_QUERIES.exists(), reason="the SciFact queries live beside the checkout (../shared)")
def test_no_english_question_of_scifact_loses_a_word_to_the_foreign_stop_word_rule() -> None:
    """300 English claims nobody here wrote, with "in", "sex", "die" and "a" in them: none is taken for
    another language, so the SciFact figures do not move."""
    import json

    from semfs.pipeline.query.search import keyword_text

    queries = [json.loads(line)["text"] for line in SCIFACT_QUERIES.read_text(encoding="utf-8").splitlines()]
    assert len(queries) == 300
    assert [q for q in queries if keyword_text(q) != q] == []


def test_snippets_carry_highlights_and_locations(container: Container) -> None:
    ingest_bytes(container, T, demo._security_pdf(), "security.pdf")
    (hit,) = search(container, T, SearchRequest(query="lost laptop breach", limit=1)).results
    snippet = hit.snippets[0]
    assert snippet.location.page == 2
    marked = [snippet.text[a:b].lower() for a, b in snippet.highlights]
    assert "laptop" in marked and "breach" in marked


def test_rm_removes_from_every_mode_and_promotes_the_previous_version(container: Container) -> None:
    same_place = Provenance(version_key="s3:uploads/acme/supply.docx")
    v1 = ingest_bytes(container, T, demo._contract(1), "supply.docx", same_place).record
    v2 = ingest_bytes(container, T, demo._contract(2), "supply.docx", same_place).record
    assert v2.lineage_id == v1.lineage_id
    delete_file(container, T, v2.file_id)
    for mode in ("hybrid", "keyword", "semantic"):
        ids = [r.file_id for r in search(container, T, SearchRequest(query="supply agreement", mode=mode)).results]
        assert ids == [v1.file_id]
    assert container.repo.get(T, v1.file_id).is_latest
    assert container.repo.get(T, v2.file_id).status is Status.TRASHED
    delete_file(container, T, v1.file_id, all_versions=True)
    assert search(container, T, SearchRequest(query="supply agreement")).results == []


def test_a_deleted_file_leaves_nothing_of_its_content_behind(container: Container) -> None:
    """Erasure: before, a delete only tombstoned the record, and the original bytes, the extracted text,
    the chunks and the vectors stayed in the blob store. Bytes another live file of the tenant holds
    (stored once a tenant) stay until that one goes too; the tombstone keeps the name, not the summary."""
    keep = ingest_bytes(container, T, TERMS, "terms.md").record
    twin = ingest_bytes(container, T, TERMS, "terms-copy.md", Provenance(source_key="elsewhere/terms.md")).record
    other = ingest_bytes(container, T, b"# Parking\n\nPermits are renewed every January.", "parking.md").record
    derived = [k for k, _ in container.blobs.list(f"derived/{T}/{other.file_id}/")]
    assert derived and container.blobs.exists(other.blob_key)

    assert delete_file(container, T, other.file_id)[0].status is Status.TRASHED  # the trash keeps all of it
    assert derived == [k for k, _ in container.blobs.list(f"derived/{T}/{other.file_id}/")]
    tomb = delete_file(container, T, other.file_id, purge=True)[0]
    assert [k for k, _ in container.blobs.list(f"derived/{T}/{other.file_id}/")] == []
    assert not container.blobs.exists(other.blob_key)
    assert (tomb.filename, tomb.summary) == ("parking.md", None)
    assert container.repo.get(T, other.file_id).summary is None

    assert twin.blob_key == keep.blob_key  # the same bytes, stored once
    delete_file(container, T, twin.file_id, purge=True)
    assert container.blobs.exists(keep.blob_key)  # still the original of a live file
    assert load_document(container, container.repo.get(T, keep.file_id)).text
    delete_file(container, T, keep.file_id, purge=True)
    assert not container.blobs.exists(keep.blob_key)


def test_manual_tags_are_searchable_filters(container: Container) -> None:
    r = ingest_bytes(container, T, TERMS, "terms.md").record
    set_tags(container, T, r.file_id, add=["Legal Review"], remove=[])
    hits = search(container, T, SearchRequest(query="payable", filters=SearchFilters(tags=["Legal Review"])))
    assert [h.file_id for h in hits.results] == [r.file_id]
    set_tags(container, T, r.file_id, add=[], remove=["Legal Review"])
    assert (
        search(container, T, SearchRequest(query="payable", filters=SearchFilters(tags=["Legal Review"]))).results == []
    )


def test_reindex_rebuilds_the_same_answers(container: Container) -> None:
    for rel in ("handbook/employee-handbook.md", "notes/meeting-notes-2026-09-14.txt"):
        ingest_bytes(container, T, demo.TEXT_FILES[rel].encode(), rel.rsplit("/", 1)[1])
    first = ingest_bytes(container, T, demo._contract(1), "supply.docx").record
    ingest_bytes(container, T, demo._contract(2), "supply.docx", Provenance(previous_version_id=first.file_id))
    queries = ["annual leave days", "aluminium shortage", "supply agreement"]
    before = [search(container, T, SearchRequest(query=q)) for q in queries]
    assert reindex(container) == 4
    assert [search(container, T, SearchRequest(query=q)) for q in queries] == before


def test_reindex_re_embeds_when_the_model_changed(tmp_path: Path, shared_extractor: object) -> None:
    settings = make_settings(tmp_path)
    c = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    r = ingest_bytes(c, T, TERMS, "terms.md").record
    c2 = build_container(settings, embedder=HashEmbedder(dim=128), extractor=shared_extractor)  # type: ignore[arg-type]
    reindex(c2)
    assert c2.repo.get(T, r.file_id).embedding_model == "hash-128"
    assert [x.file_id for x in search(c2, T, SearchRequest(query="payable", mode="semantic")).results] == [r.file_id]


def test_an_agent_giving_an_invalid_tag_is_told_and_nothing_is_stored(container: Container) -> None:
    """The agent entry point checks provenance as the CLI and POST /files do; it used to drop the tag."""
    import semfs
    from semfs.domain.errors import InvalidRequest
    from semfs.ports import RecordQuery

    with pytest.raises(InvalidRequest, match=r"^tags: "):
        semfs.ingest_agent_file("# Note\n\nA note.", "note.md", agent="bot", tags=["fine", "!!!"], container=container)
    assert container.repo.query(RecordQuery(tenant_id="default", limit=10)) == []


def test_agent_generated_files_carry_their_provenance(container: Container) -> None:
    import semfs

    source = ingest_bytes(container, T, TERMS, "terms.md").record
    record = semfs.ingest_agent_file(
        "# Summary\n\nAcme invoices are payable within thirty days.",
        "summary.md",
        agent="finance-bot",
        run_id="run-42",
        tenant=T,
        derived_from=[source.file_id],
        container=container,
    )
    assert record.source_type == "agent_generated" and record.uploaded_by == "finance-bot"  # type: ignore[attr-defined]
    assert record.provenance["derived_from"] == [source.file_id]  # type: ignore[attr-defined]
    hits = search(container, T, SearchRequest(query="payable", filters=SearchFilters(source_type="agent_generated")))
    assert [h.file_id for h in hits.results] == [record.file_id]  # type: ignore[attr-defined]
    assert hits.results[0].origin == {"agent": "finance-bot", "run_id": "run-42", "derived_from": [source.file_id]}


def test_in_process_context_for_agents(container: Container) -> None:
    from semfs.agents import context_for

    rec = ingest_bytes(container, T, TERMS, "terms.md").record
    brief = context_for("Invoice question", "When is payment due for the invoices?", tenant=T, container=container)
    assert brief[0]["file_id"] == rec.file_id and brief[0]["why"]
    assert context_for("hi", tenant=T, container=container) == []


def test_date_filters_use_the_document_date_and_results_show_both(container: Container) -> None:
    """A file is dated by what it says (its metadata; a mail attachment by its message's Date:), falling back
    to when it arrived; --since/--until (date_from/date_to) filter on that, and results carry both dates."""
    from datetime import UTC, date, datetime

    import docx

    from semfs.pipeline.intake.mail import ingest_mail
    from tests import mail_corpus as mc

    old = docx.Document()
    old.add_paragraph("Pallet inventory count for the warehouse.")
    old.core_properties.modified = datetime(2019, 3, 14, 9, 0)
    buf = io.BytesIO()
    old.save(buf)
    dated = ingest_bytes(container, T, buf.getvalue(), "inventory-2019.docx").record
    fresh = ingest_bytes(container, T, b"Pallet inventory count, this week.", "inventory-now.txt").record
    assert dated.document_date == datetime(2019, 3, 14, 9, 0, tzinfo=UTC) and fresh.document_date is None
    message = mc.plain()
    mailed = ingest_mail(container, T, message.as_bytes()).files[0].record
    sent = mc.plain()["Date"].datetime
    assert mailed.document_date == sent

    def hits(**kw: object) -> list[str]:
        return found(container, "pallet inventory count", mode="keyword", filters=SearchFilters(**kw))  # type: ignore[arg-type]

    assert hits(date_to=date(2019, 12, 31)) == ["inventory-2019.docx"]
    assert hits(date_from=date(2020, 1, 1)) == ["inventory-now.txt"]  # no date of its own: its arrival
    result = search(container, T, SearchRequest(query="pallet inventory", mode="keyword")).results
    first = next(r for r in result if r.filename == "inventory-2019.docx")
    assert first.document_date == dated.document_date and first.ingested_at == dated.created_at


def test_an_extractive_answer_quotes_each_sentence_once_and_keeps_headings_apart(container: Container) -> None:
    """Two copies of one sentence (the GPL and GPL-2, a spec's PDF and HTML) were quoted twice, and a
    heading glued to the sentence under it ("Payment terms The Buyer shall pay…"). Now each distinct
    sentence is quoted once, citing every file that holds it, and a heading is no part of a sentence."""
    from semfs.pipeline.query.ask import ask

    terms = "# Payment terms\n\nThe Buyer shall pay every invoice within thirty days of receipt."
    a = ingest_bytes(container, T, terms.encode(), "terms.md").record
    b = ingest_bytes(container, T, (terms + "\n\nLate fees apply.").encode(), "terms-copy.md").record
    answer = ask(container, T, "Within how many days shall the Buyer pay an invoice?")
    assert answer.status == "answered" and answer.answer is not None, answer.reason
    assert answer.answer.count("The Buyer shall pay every invoice within thirty days of receipt.") == 1
    assert "Payment terms The Buyer" not in answer.answer
    cited = {c.file_id for c in answer.citations if "thirty days" in c.quote}
    assert cited == {a.file_id, b.file_id}


def test_passage_sentences_split_a_heading_not_a_wrapped_line() -> None:
    from semfs.pipeline.query.answerers import passage_sentences

    assert passage_sentences("Payment terms\nThe Buyer shall pay within thirty days.") == [
        "Payment terms",
        "The Buyer shall pay within thirty days.",
    ]
    wrapped = "The Buyer shall pay every invoice issued by the Supplier within\nthirty days of its receipt."
    assert passage_sentences(wrapped) == [
        "The Buyer shall pay every invoice issued by the Supplier within thirty days of its receipt."
    ]


def _man(name: str, line: str) -> bytes:
    return (
        f".TH {name.upper()} 1\n.SH NAME\n{name} \\- move pallets between depots\n.SH OPTIONS\n"
        f'.TP\n.BR \\-k ", " \\-\\-keep\n{line}\n'
        f".TP\n.BR \\-\\-keep\\-going\nGo on after a depot refuses a pallet.\n"
        f'.TP\n.BR \\-v ", " \\-\\-verbose\nSay which depot each pallet went to.\n'
    ).encode()


def test_a_question_about_an_option_is_answered_by_its_entry_on_its_own_page(container: Container) -> None:
    """Issue 51.2: "What does the --keep option of gzip do?" was answered from another page's passage (the
    rsync --delete question from gzip's --rsyncable), a SYNOPSIS line, or not at all; a question about an
    option no page has was answered from whatever shared its other words."""
    from semfs.pipeline.query.ask import ask

    gzip = ingest_bytes(container, T, _man("palletzip", "Keep the input pallets after loading them."), "palletzip.1")
    ingest_bytes(container, T, _man("palletcat", "Keep the depot open while loading pallets."), "palletcat.1")
    answer = ask(container, T, "What does the --keep option of palletzip do?")
    assert answer.status == "answered", answer.reason
    assert "Keep the input pallets after loading them." in (answer.answer or "")
    assert {c.file_id for c in answer.citations} == {gzip.record.file_id}, (answer.answer, answer.citations)
    assert "keep-going" not in (answer.answer or "").replace("--keep-going", "keep-going")  # not the other entry
    refused = ask(container, T, "What does the --feed-the-cat option of palletzip do?")
    assert refused.status == "no_answer", refused.answer


def test_files_that_disagree_are_shown_disagreeing(container: Container) -> None:
    """Issue 51.2: two contracts, "30 days" and "45 days", were stitched into one answer. Now the answer says
    the files differ and which file, dated, says what."""
    from semfs.pipeline.query.ask import ask

    ingest_bytes(container, T, b"The Buyer shall pay every invoice within 30 days of receipt.", "acme-terms.txt")
    ingest_bytes(container, T, b"The Buyer shall pay every invoice within 45 days of receipt.", "globex-terms.txt")
    answer = ask(container, T, "Within how many days shall the Buyer pay an invoice?")
    assert answer.status == "answered", answer.reason
    said = answer.answer or ""
    assert said.startswith("The files differ."), said
    assert "acme-terms.txt (added " in said and "globex-terms.txt (added " in said
    assert "30 days" in said and "45 days" in said


def test_a_yes_no_question_keeps_its_yes_and_no_question_is_quoted_back(container: Container) -> None:
    """Issue 51.2: a yes/no question lost its "Yes" (a sentence too short to quote) and was answered with
    the FAQ's own question."""
    from semfs.pipeline.query.ask import ask

    faq = (
        "# Depot FAQ\n\nCan a pallet be moved between depots on a Sunday?\n\n"
        "Yes. A pallet is moved between depots on a Sunday with the duty manager's approval."
    )
    ingest_bytes(container, T, faq.encode(), "faq.md")
    answer = ask(container, T, "Can a pallet be moved between depots on a Sunday?")
    assert answer.status == "answered", answer.reason
    assert (answer.answer or "").startswith("Yes. A pallet is moved"), answer.answer
    assert "?" not in (answer.answer or "")


def test_what_a_thing_is_for_is_answered_by_the_sentence_that_introduces_it(container: Container) -> None:
    """The quality card's "What is X used for?" questions (issue 51.2) were answered from any sentence with
    "used" in it ("Basic is the default authentication method curl uses with proxies")."""
    from semfs.pipeline.query.ask import ask

    page = (
        b".TH PALLETZIP 1\n.SH NAME\npalletzip \\- move pallets between depots\n.SH DESCRIPTION\n"
        b"The depot log is used by palletzip when a transfer fails.\n"
        b"A default depot is used when none is given to palletzip.\n"
    )
    own = ingest_bytes(container, T, page, "palletzip.1").record.file_id
    answer = ask(container, T, "What is palletzip used for?")
    assert answer.status == "answered", answer.reason
    assert "move pallets between depots" in (answer.answer or ""), answer.answer
    assert "is used" not in (answer.answer or ""), answer.answer  # what it is, not what it uses
    assert {c.file_id for c in answer.citations} == {own}
