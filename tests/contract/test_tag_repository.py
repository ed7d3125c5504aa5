"""TagRepository contract: counts once per file and tag, a bounded top list, aliases that follow merges."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from semfs.ports import TagRepository

pytestmark = pytest.mark.contract


def test_uses_count_once_per_file(tag_repository: TagRepository) -> None:
    tag_repository.record_uses("t1", "f1", ["invoice", "acme", "invoice"])
    tag_repository.record_uses("t1", "f1", ["invoice"])  # a retried stage
    tag_repository.record_uses("t1", "f2", ["invoice", "zeta"])
    assert tag_repository.top("t1", 10) == ["invoice", "acme", "zeta"]
    assert tag_repository.top("t1", 1) == ["invoice"]
    assert tag_repository.top("t2", 10) == []


def test_aliases_follow_a_chain_of_merges(tag_repository: TagRepository) -> None:
    tag_repository.set_alias("t1", "invoices", "invoice")
    tag_repository.set_alias("t1", "invoice", "billing")
    assert tag_repository.aliases("t1") == {"invoices": "billing", "invoice": "billing"}
    tag_repository.set_alias("t1", "billing", "invoice")  # merged back: invoice is no alias any more
    assert tag_repository.aliases("t1") == {"invoices": "invoice", "billing": "invoice"}
    assert tag_repository.aliases("t2") == {}


@pytest.mark.usefixtures("atomic_requests")
def test_concurrent_enrichments_count_every_file(tag_repository: TagRepository) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: tag_repository.record_uses("t1", f"f{n % 20}", ["busy", f"own-{n % 20}"]), range(40)))
    top = tag_repository.top("t1", 1)
    assert top == ["busy"]
    assert len(tag_repository.top("t1", 100)) == 21
