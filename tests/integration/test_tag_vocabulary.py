"""The tag vocabulary as enrichment uses it (issue 47.11): a new tag joins the existing tag of its stem however
far down the vocabulary that tag is, and a vocabulary counted before stems were kept is read as well."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from semfs.adapters.local.sqlite_tags import SqliteTagRepository
from semfs.bootstrap import Container
from semfs.domain.tags import stem_key
from semfs.pipeline.vocabulary import prefer_existing

pytestmark = pytest.mark.integration


def test_a_new_tag_joins_a_rarely_used_tag_of_its_stem(container: Container) -> None:
    for n in range(2_100):  # 2,100 tags used more than the one that matters
        container.tags.record_uses("acme", f"f{n}", [f"topic-{n}", f"topic-{n}-extra"])
        container.tags.record_uses("acme", f"g{n}", [f"topic-{n}", f"topic-{n}-extra"])
    container.tags.record_uses("acme", "late", ["invoice"])
    container.tags.set_alias("acme", "bills", "billing")
    assert prefer_existing(container, "acme", ["invoices", "bills", "fresh"]) == ["invoice", "billing", "fresh"]


def test_a_vocabulary_counted_before_stems_were_kept_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "tags.db"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE tag_counts (tenant_id TEXT NOT NULL, tag TEXT NOT NULL, files INTEGER NOT NULL,"
        " PRIMARY KEY (tenant_id, tag));"
        "INSERT INTO tag_counts VALUES ('acme', 'invoice', 4), ('acme', 'invoicing', 9), ('acme', 'acme', 2);"
    )
    old.close()
    repo = SqliteTagRepository(path)
    assert repo.preferred("acme", [stem_key("invoices"), stem_key("acme")]) == {
        stem_key("invoices"): "invoicing",
        stem_key("acme"): "acme",
    }
    repo.record_uses("acme", "f1", ["invoice"])
    assert repo.top("acme", 2) == ["invoicing", "invoice"]
