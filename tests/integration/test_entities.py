"""Entities from file text, end to end: found when a file is enriched, linked to the tenant's contacts, kept
per tenant, and used by listings, facets, search, an entity's page, an agent's context and MCP; the LLM's
candidates kept only where the text holds them; the switch; a purged file's entities gone."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from semfs.bootstrap import Container, build_container
from semfs.domain.models import Enrichment, EntityCandidate
from semfs.mcp_server import build_server
from semfs.pipeline.catalogue import trash
from semfs.pipeline.catalogue.files import delete_file, facets
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance
from semfs.pipeline.query.ask import context
from semfs.pipeline.query.entities import entity_page, list_entities
from semfs.ports import RecordQuery
from semfs.ports.enricher import EnrichInput
from tests.conftest import make_settings

pytestmark = pytest.mark.integration

INVOICE = b"""Invoice INV-2024-0042

Northwind Cycles Ltd, 4 Harbour Road, Bristol
Bill to: Acme Corp, attention Jane Okafor (jane.okafor@acme-corp.example)

Frames, 500 units at EUR 88 each: EUR 44,000.00 due on 15 March 2025.
Pay to IBAN DE89 3704 0044 0532 0130 00. Questions: call +44 20 7946 0958.
"""
REMINDER = b"""Payment reminder

Dear Jane Okafor, invoice INV-2024-0042 of EUR 44,000.00 is overdue since 15 March 2025.
Signed by Tom Becker, Northwind Cycles Ltd.
"""
UNRELATED = b"""Cycling club newsletter

The spring ride starts at the harbour on Sunday. Bring water and a spare tube."""
GLOBEX = b"""Globex Corporation purchase order PO-7781 for EUR 12,500.00, approved by Dr. Hank Scorpio."""


@dataclass
class Stocked:
    c: Container
    ids: dict[str, str]


@pytest.fixture
def stocked(tmp_path: Path, shared_extractor: object) -> Iterator[Stocked]:
    c = build_container(make_settings(tmp_path), extractor=shared_extractor)  # type: ignore[arg-type]
    acme = Provenance(contacts=["Jane Okafor <jane.okafor@acme-corp.example>"])
    ids = {
        "invoice": ingest_bytes(c, "acme", INVOICE, "invoice-0042.txt", acme).record.file_id,
        "reminder": ingest_bytes(c, "acme", REMINDER, "reminder.txt").record.file_id,
        "unrelated": ingest_bytes(c, "acme", UNRELATED, "newsletter.txt").record.file_id,
        "globex": ingest_bytes(c, "globex", GLOBEX, "po.txt").record.file_id,
    }
    yield Stocked(c, ids)
    c.close()


def test_a_files_entities_are_found_with_where_and_linked_to_its_contact(stocked: Stocked) -> None:
    c, ids = stocked.c, stocked.ids
    found = {e.entity_id: e for e in c.entities.of_file("acme", ids["invoice"])}
    assert {
        "identifier:INV-2024-0042",
        "organisation:northwind cycles",
        "organisation:acme",
        "person:jane okafor",
        "email:jane.okafor@acme-corp.example",
        "money:EUR 44000.00",
        "money:EUR 88.00",
        "date:2025-03-15",
        "identifier:DE89370400440532013000",
        "phone:+442079460958",
    } <= set(found)
    assert found["identifier:INV-2024-0042"].detail == "invoice"
    assert found["identifier:DE89370400440532013000"].detail == "iban"
    assert found["money:EUR 44000.00"].label == "EUR 44,000.00" and found["money:EUR 44000.00"].location
    # the contact named on the upload: its address, its name, and its organisation by the address's domain
    contact = found["email:jane.okafor@acme-corp.example"].contact_id
    assert contact and found["person:jane okafor"].contact_id == contact
    assert found["organisation:acme"].contact_id == contact
    record = c.repo.get("acme", ids["invoice"])
    assert record.entities[0] in found and set(record.entities) == set(found)
    assert c.entities.of_file("acme", ids["unrelated"]) == []


def test_listings_facets_and_search_filter_by_an_entity_as_written(stocked: Stocked) -> None:
    c, ids = stocked.c, stocked.ids
    for written in ("INV-2024-0042", "inv-2024-0042", "identifier:INV-2024-0042"):
        listed = c.repo.query(RecordQuery(tenant_id="acme", entity=_named(c, written)))
        assert {r.file_id for r in listed} == {ids["invoice"], ids["reminder"]}, written
    counts = facets(c, RecordQuery(tenant_id="acme", latest_only=True))
    by_value = {v.value: v for v in counts.entity}
    assert by_value["organisation:northwind cycles"].count == 2
    assert by_value["organisation:northwind cycles"].label == "Northwind Cycles Ltd"
    from semfs.domain.models import SearchFilters, SearchRequest
    from semfs.pipeline.query.search import search

    def hits(query: str, entity: str) -> list[str]:
        request = SearchRequest(query=query, mode="keyword", filters=SearchFilters(entity=entity))
        return [r.file_id for r in search(c, "acme", request).results]

    assert hits("harbour", "Northwind Cycles Ltd") == [ids["invoice"]]  # the newsletter's harbour is not named
    assert hits("overdue", "Jane Okafor") == [ids["reminder"]]
    assert hits("purchase order", "Globex Corporation") == []  # another tenant's entity is no entity here


def _named(c: Container, value: str) -> str | None:
    from semfs.pipeline.file_entities import entity_named

    return entity_named(c, "acme", value)


def test_an_entitys_page_and_the_tenants_entities_are_the_tenants_own(stocked: Stocked) -> None:
    c, ids = stocked.c, stocked.ids
    page = entity_page(c, "acme", "Acme Corp")
    assert page.entity.entity_id == "organisation:acme" and page.contact is not None
    assert page.contact.email == "jane.okafor@acme-corp.example"
    assert [f.file_id for f in page.files] == [ids["invoice"]]
    people = [e.label for e in list_entities(c, "acme", "person")]
    assert "Jane Okafor" in people and "Tom Becker" in people and "Hank Scorpio" not in people
    from semfs.domain.errors import NotFound

    with pytest.raises(NotFound):
        entity_page(c, "acme", "Globex Corporation")
    assert [e.label for e in list_entities(c, "globex", "person")] == ["Hank Scorpio"]


def test_context_brings_the_files_naming_what_the_message_names_first_saying_why(
    stocked: Stocked, monkeypatch: pytest.MonkeyPatch
) -> None:
    c, ids = stocked.c, stocked.ids
    embedded: list[str] = []
    real = c.embedder.embed_query
    monkeypatch.setattr(c.embedder, "embed_query", lambda q: embedded.append(q) or real(q))
    items = context(c, "acme", "Question about INV-2024-0042", "Hello, has this been paid yet? Regards, a customer")
    # ranked three times (every file, those naming the invoice, and by the subject): the message embedded
    # once, its subject once
    assert len(embedded) == len(set(embedded)) == 2, embedded
    assert [i.file_id for i in items[:2]] == [ids["invoice"], ids["reminder"]] or [i.file_id for i in items[:2]] == [
        ids["reminder"],
        ids["invoice"],
    ]
    assert items[0].entities == ["INV-2024-0042"] and items[0].why.startswith("names INV-2024-0042")
    # another tenant's message naming this tenant's invoice finds nothing of it
    theirs = context(c, "globex", "Question about INV-2024-0042", "Hello, has this invoice been paid yet?")
    assert all(i.file_id not in ids.values() or i.file_id == ids["globex"] for i in theirs)


def test_a_purged_file_leaves_its_entities(stocked: Stocked) -> None:
    c, ids = stocked.c, stocked.ids
    delete_file(c, "acme", ids["reminder"])
    assert [f.file_id for f in entity_page(c, "acme", "Tom Becker").files] == []  # trashed: not shown
    trash.purge(c, "acme", [ids["reminder"]])
    assert c.entities.of_file("acme", ids["reminder"]) == []
    assert c.entities.get("acme", "person:tom becker") is None
    assert c.entities.get("acme", "identifier:INV-2024-0042").files == 1  # type: ignore[union-attr]


class ScriptedLlm:
    """An LLM enricher's answer, scripted: entities it read, one that is in the text in another case and
    spacing, and two the text never names (an invention and an injected one)."""

    def enrich(self, item: EnrichInput) -> Enrichment:
        return Enrichment(
            title="Invoice",
            summary="An invoice.",
            auto_tags=["invoice"],
            entities=[
                EntityCandidate(kind="organisation", text="northwind   cycles ltd"),
                EntityCandidate(kind="person", text="Jane Okafor"),
                EntityCandidate(kind="organisation", text="Harbour Road Trust"),  # not in the text
                EntityCandidate(kind="email", text="attacker@evil.example"),  # not in the text
                EntityCandidate(kind="person", text="4 Harbour Road"),  # in the text: kept, as a name it is not
                EntityCandidate(kind="weapon", text="Frames"),  # no such kind
            ],
        )


def test_an_llms_entities_are_kept_only_where_the_text_names_them(tmp_path: Path, shared_extractor: object) -> None:
    c = build_container(make_settings(tmp_path), extractor=shared_extractor, enricher=ScriptedLlm())  # type: ignore[arg-type]
    try:
        fid = ingest_bytes(c, "acme", INVOICE, "invoice.txt").record.file_id
        found = {e.entity_id for e in c.entities.of_file("acme", fid)}
        assert {"organisation:northwind cycles", "person:jane okafor", "person:4 harbour road"} <= found
        assert "organisation:harbour road trust" not in found and "email:attacker@evil.example" not in found
        assert not any(e.startswith("weapon") for e in found)
    finally:
        c.close()


def test_switched_off_no_entity_is_found_and_context_still_answers(tmp_path: Path, shared_extractor: object) -> None:
    c = build_container(make_settings(tmp_path, enable_entities=False), extractor=shared_extractor)  # type: ignore[arg-type]
    try:
        fid = ingest_bytes(c, "acme", INVOICE, "invoice.txt").record.file_id
        assert c.entities.of_file("acme", fid) == [] and c.repo.get("acme", fid).entities == []
        items = context(c, "acme", "Question about INV-2024-0042", "Has invoice INV-2024-0042 been paid yet?")
        assert [i.file_id for i in items] == [fid] and items[0].entities == []
        from semfs.pipeline.capabilities import capabilities

        caps = capabilities(c)
        assert not caps.entities.on and "SEMFS_ENABLE_ENTITIES" in (caps.entities.why_off or "")
    finally:
        c.close()
    # switched on again, a reindex finds the entities of the files read meanwhile
    from semfs.pipeline.maintenance.reindex import reindex

    c = build_container(make_settings(tmp_path), extractor=shared_extractor)  # type: ignore[arg-type]
    try:
        assert reindex(c) == 1
        assert "identifier:INV-2024-0042" in c.repo.get("acme", fid).entities
        assert c.entities.get("acme", "identifier:INV-2024-0042") is not None
    finally:
        c.close()


def test_mcp_entity_tool_and_search_filter(stocked: Stocked) -> None:
    from mcp import Client

    c, ids = stocked.c, stocked.ids

    async def call(tenant: str, tool: str, args: dict[str, Any]) -> Any:
        async with Client(build_server(c, tenant)) as client:
            return await client.call_tool(tool, args)

    page = asyncio.run(call("acme", "entity", {"name": "INV-2024-0042"}))
    assert not page.is_error
    assert {f["file_id"] for f in page.structured_content["files"]} == {ids["invoice"], ids["reminder"]}
    theirs = asyncio.run(call("globex", "entity", {"name": "INV-2024-0042"}))
    assert theirs.is_error and "no file names this" in theirs.content[0].text
    found = asyncio.run(call("acme", "search", {"query": "overdue", "mode": "keyword", "entity": "Tom Becker"}))
    assert [r["file_id"] for r in found.structured_content["results"]] == [ids["reminder"]]


def test_an_entitys_count_is_the_files_its_page_lists(container: Container) -> None:
    """Issue 51.4: an entity's count was 7 on the list and its page listed 5 files: the list counted older
    versions (and a reader's list, trashed ones' records aside, too). Both now count the files a listing
    shows: latest versions, out of the trash."""
    c = container
    text = "Order PO-77123 for twelve pallets of tiles, due Friday.\n"
    key = Provenance(version_key="path:/orders/po.txt", source_key="path:/orders/po.txt")
    ingest_bytes(c, "acme", text.encode(), "po.txt", key)
    ingest_bytes(c, "acme", (text + "Revised: fourteen pallets.\n").encode(), "po.txt", key)  # v2 of the same file
    other = ingest_bytes(c, "acme", ("Copy of " + text).encode(), "copy.txt").record.file_id
    gone = ingest_bytes(c, "acme", ("Draft of " + text).encode(), "draft.txt").record.file_id
    delete_file(c, "acme", gone)
    for readers in (None, ("tenant",)):
        (listed,) = [e for e in list_entities(c, "acme", readers=readers) if "PO-77123" in e.label]
        page = entity_page(c, "acme", listed.entity_id, readers=readers)
        assert listed.files == page.entity.files == len(page.files) == 2, (readers, listed.files, len(page.files))
        assert {f.file_id for f in page.files} >= {other}
