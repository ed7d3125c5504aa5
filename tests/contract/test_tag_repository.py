"""TagRepository contract: counts once per file and tag, a bounded top list, aliases that follow merges; and
ViewRepository's: saved views per tenant."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from semfs.domain.models import SavedView
from semfs.ports import TagRepository, ViewRepository

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


def test_a_stem_finds_its_most_used_tag_however_little_the_vocabulary_uses_it(tag_repository: TagRepository) -> None:
    """A new tag joins the vocabulary's tag of its stem (``invoices`` → ``invoice``), looked up by the file's
    stems: the pipeline read the 2,000 most used tags for every file, and a tag outside them was never joined
    (issue 47.11). Most used wins among tags that share a stem; ties by name."""
    from semfs.domain.tags import stem_key

    for n in range(3):
        tag_repository.record_uses("t1", f"f{n}", ["invoicing", "acme"])
    tag_repository.record_uses("t1", "f9", ["invoice"])
    tag_repository.record_uses("t2", "f1", ["invoices-theirs"])
    stems = [stem_key("invoices"), stem_key("acmes"), stem_key("zebra")]
    assert tag_repository.preferred("t1", stems) == {stems[0]: "invoicing", stems[1]: "acme"}
    assert tag_repository.preferred("t2", stems) == {}
    assert tag_repository.preferred("t1", []) == {}


@pytest.mark.usefixtures("atomic_requests")
def test_concurrent_enrichments_count_every_file(tag_repository: TagRepository) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: tag_repository.record_uses("t1", f"f{n % 20}", ["busy", f"own-{n % 20}"]), range(40)))
    top = tag_repository.top("t1", 1)
    assert top == ["busy"]
    assert len(tag_repository.top("t1", 100)) == 21


def test_saved_views_are_each_tenants_own_replaced_by_name_and_deleted(view_repository: ViewRepository) -> None:
    """ViewRepository, on SQLite and DynamoDB: a view is kept under its name, a second save of the name
    replaces it, the list is by name, another tenant sees none of them, and a delete says whether it removed
    one."""
    from semfs.domain.models import SavedView

    view_repository.save("t1", SavedView(name="Invoices", params={"tag": "invoice"}, by="key 1"))
    view_repository.save("t1", SavedView(name="Board decks", params={"type": "application/pdf", "sort": "name"}))
    view_repository.save("t1", SavedView(name="Invoices", params={"tag": "invoice", "since": "2026-01-01"}))
    view_repository.save("t2", SavedView(name="Invoices", params={"tag": "theirs"}))
    views = view_repository.views("t1")
    assert [v.name for v in views] == ["Board decks", "Invoices"]
    assert views[1].params == {"tag": "invoice", "since": "2026-01-01"}
    assert [v.params for v in view_repository.views("t2")] == [{"tag": "theirs"}]
    assert view_repository.delete("t1", "Invoices") and not view_repository.delete("t1", "Invoices")
    assert [v.name for v in view_repository.views("t1")] == ["Board decks"]
    assert [v.name for v in view_repository.views("t2")] == ["Invoices"]
    assert view_repository.views("t3") == []


def test_forgetting_a_tenant_erases_its_tags_aliases_and_views_only(
    tag_repository: TagRepository, view_repository: ViewRepository
) -> None:
    for tenant in ("t1", "t2"):
        tag_repository.record_uses(tenant, "f1", ["invoice"])
        tag_repository.set_alias(tenant, "bill", "invoice")
        view_repository.save(tenant, SavedView(name="Invoices", params={"tag": "invoice"}))
    assert tag_repository.forget_tenant("t1") == 3 and view_repository.forget_tenant("t1") == 1
    assert tag_repository.forget_tenant("t1") == view_repository.forget_tenant("t1") == 0
    assert (
        tag_repository.top("t1", 10) == [] and tag_repository.aliases("t1") == {} and view_repository.views("t1") == []
    )
    assert tag_repository.top("t2", 10) == ["invoice"] and tag_repository.aliases("t2") == {"bill": "invoice"}
    assert [v.name for v in view_repository.views("t2")] == ["Invoices"]
