"""The tag vocabulary: counts, merge suggestions with evidence, merges that keep both names working."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semfs.bootstrap import Container
from semfs.domain.models import SearchFilters, SearchRequest
from semfs.pipeline.catalogue.tags import merge, suggest_merges, vocabulary
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance
from semfs.pipeline.query.search import search

pytestmark = pytest.mark.integration
T = "acme"


@pytest.fixture
def tagged(container: Container) -> Container:
    docs = {
        "a.md": (b"# Invoice A\n\nInvoice for frames, payable in thirty days.", ["invoice", "q3-financials"]),
        "b.md": (b"# Invoice B\n\nInvoice for forks, payable in thirty days.", ["invoice"]),
        "c.md": (b"# Invoices C\n\nTwo invoices for carbon parts.", ["invoices"]),
        "d.md": (b"# Invoicing run\n\nThe monthly invoicing run for dealers.", ["invoicing", "q3-finance"]),
        # look-alikes that mean different things: never suggested
        "e.md": (b"# Networking\n\nThe connection pool and the naming convention.", ["connection", "convention"]),
        "f.md": (b"# Customs\n\nImport duties at the port of Rotterdam.", ["import", "port"]),
        "g.md": (b"# Pricing\n\nA flat fee, and the float in the cash box.", ["flat", "float"]),
        "h.md": (b"# Rights\n\nThe licensor grants a license to the dealer.", ["licensor", "license"]),
    }
    for name, (data, tags) in docs.items():
        ingest_bytes(container, T, data, name, Provenance(tags=tags))
    return container


def test_vocabulary_counts_manual_and_auto(tagged: Container) -> None:
    vocab = {t.tag: t for t in vocabulary(tagged, T)}
    assert (vocab["invoice"].manual, vocab["invoices"].manual) == (2, 1)
    assert {"a.md", "b.md"} <= set(vocab["invoice"].examples)
    assert any(t.auto for t in vocab.values())


def test_merge_suggestions_come_with_reasons_and_evidence(tagged: Container) -> None:
    pairs = {(s.merge, s.into): s for s in suggest_merges(tagged, T)}
    stem = pairs[("invoices", "invoice")]
    assert "same stem" in stem.reasons
    assert stem.evidence["invoice"].manual == 2 and stem.evidence["invoices"].examples == ["c.md"]
    assert ("invoicing", "invoice") in pairs
    finance = pairs.get(("q3-finance", "q3-financials")) or pairs.get(("q3-financials", "q3-finance"))
    assert finance is not None and "stems differ by one letter" in finance.reasons
    look_alikes = [("connection", "convention"), ("import", "port"), ("flat", "float"), ("licensor", "license")]
    suggested = {frozenset(p) for p in pairs}
    assert [p for p in look_alikes if frozenset(p) in suggested] == []
    # precision by the stated rule (an inflection: same stem, or stems one letter apart): every pair
    assert all({"same stem", "stems differ by one letter"} & set(s.reasons) for s in pairs.values())


def test_merge_rewrites_records_and_index_and_keeps_both_names_working(tagged: Container) -> None:
    assert merge(tagged, T, "invoices", "invoice") == 1
    vocab = {t.tag: t for t in vocabulary(tagged, T)}
    assert "invoices" not in vocab and vocab["invoice"].manual == 3
    found = {}
    for name in ("invoice", "invoices"):
        hits = search(
            tagged, T, SearchRequest(query="invoice", mode="keyword", limit=10, filters=SearchFilters(tags=[name]))
        )
        found[name] = {h.filename for h in hits.results}
    # c.md carried only "invoices"; d.md's auto tag was mapped onto the existing "invoice" at enrichment
    assert found["invoice"] == found["invoices"] and {"a.md", "b.md", "c.md"} <= found["invoice"]
    # merging again into another name follows the chain
    merge(tagged, T, "invoice", "invoicing")
    hits = search(
        tagged, T, SearchRequest(query="invoice", mode="keyword", limit=10, filters=SearchFilters(tags=["invoices"]))
    )
    assert {h.filename for h in hits.results} == {"a.md", "b.md", "c.md", "d.md"}


def test_cli_tags(tagged: Container, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from semfs.cli import app

    monkeypatch.setenv("SEMFS_DATA_DIR", str(tagged.settings.data_dir))
    monkeypatch.setenv("SEMFS_EMBEDDER", "hash")
    runner = CliRunner()
    listed = json.loads(runner.invoke(app, ["tags", "--tenant", T, "--json"], catch_exceptions=False).output)
    assert {"tag": "invoice", "manual": 2, "auto": 0} in listed or any(r["tag"] == "invoice" for r in listed)
    suggested = json.loads(runner.invoke(app, ["tags", "--tenant", T, "--suggest", "--json"]).output)
    assert any(s["merge"] == "invoices" for s in suggested)
    merged = runner.invoke(app, ["tags", "merge", "invoices", "invoice", "--tenant", T])
    assert merged.exit_code == 0 and "1 file(s)" in merged.output
    assert runner.invoke(app, ["tags", "merge", "x", "x", "--tenant", T]).exit_code == 2


def test_enrichment_prefers_the_existing_vocabulary(tagged: Container) -> None:
    record = ingest_bytes(
        tagged, T, b"# Invoices overdue\n\nThree invoices are overdue. The invoices were sent in May.", "overdue.md"
    ).record
    assert "invoice" in record.auto_tags and "invoices" not in record.auto_tags
