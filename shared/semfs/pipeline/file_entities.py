"""Entities as the pipeline uses them: found in a file's text when it is enriched (``record_entities``),
an entity named by id or by how a person writes it (``resolve``), and the known entities a message names
(``named_in``, for an agent's context)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.domain.features import enabled
from semfs.domain.mentions import (
    KINDS,
    MAX_FILE_ENTITIES,
    MAX_STORED_ENTITIES,
    Known,
    KnownContact,
    entity_id,
    extract_mentions,
    file_entities,
    located,
    mentions_in,
    normalised_key,
    split_id,
)
from semfs.domain.models import Enrichment, ExtractedDocument, FileRecord, Location
from semfs.observability import get_logger

if TYPE_CHECKING:
    from semfs.domain.results import EntityInfo
    from semfs.ports import Container

log = get_logger(__name__)
MAX_KNOWN_CONTACTS = 5_000  # the contacts whose names are looked for in each file
MAX_LOOKUPS = 50  # a message's distinct entities looked up in the store, in the order it names them


def known(c: Container, tenant_id: str) -> Known:
    contacts = c.mail.contacts(tenant_id)[:MAX_KNOWN_CONTACTS]
    return Known.of(KnownContact(x.contact_id, x.email, x.name, x.organisation) for x in contacts)


def record_entities(c: Container, record: FileRecord, doc: ExtractedDocument, enrichment: Enrichment) -> list[str]:
    """Find what ``doc`` names (the patterns, the tenant's contacts, and the LLM's candidates that occur in
    the text), keep every one in the entity store, and return the ids the record carries. Switched off
    (``SEMFS_ENABLE_ENTITIES=false``): nothing is found or changed, and the record keeps what it had."""
    if not enabled(c.settings, "entities"):
        return record.entities
    names = known(c, record.tenant_id)
    mentions = extract_mentions(doc, names, c.settings.mail.phone_region)
    mentions += located(doc, [(e.kind, e.text) for e in enrichment.entities])
    found = file_entities(mentions, names)[:MAX_STORED_ENTITIES]
    c.entities.replace_file(record.tenant_id, record.file_id, found)
    log.info("entities", file_id=record.file_id, entities=len(found), mentions=len(mentions))
    return [e.entity_id for e in found[:MAX_FILE_ENTITIES]]


def resolve(c: Container, tenant_id: str, value: str) -> EntityInfo | None:
    """The tenant's entity ``value`` names: its id (``organisation:acme``), or how a person writes it
    ("Acme Corp", "INV-2024-0042", "jane@acme.example"), tried as each kind in turn."""
    parsed = split_id(value)
    if parsed and (hit := c.entities.get(tenant_id, entity_id(*parsed))):
        return hit
    for kind in KINDS:
        key = normalised_key(kind, value, c.settings.mail.phone_region)
        if key and (hit := c.entities.get(tenant_id, entity_id(kind, key))):
            return hit
    return None


def entity_named(c: Container, tenant_id: str, value: str | None) -> str | None:
    """The id of the entity ``value`` names; ``value`` itself when none does (a filter that matches nothing)."""
    if not value:
        return None
    hit = resolve(c, tenant_id, value)
    return hit.entity_id if hit else value


def files_naming(c: Container, tenant_id: str, value: str, limit: int = 1_000) -> list[str]:
    """The ids of the files that name the entity ``value`` names (``resolve``), most mentions first."""
    entity = resolve(c, tenant_id, value)
    return [m.file_id for m in c.entities.files(tenant_id, entity.entity_id, limit)] if entity else []


def labels(c: Container, tenant_id: str, entity_ids: list[str]) -> dict[str, str]:
    """Entity id → how a person reads it (its most common spelling in the files)."""
    out: dict[str, str] = {}
    for eid in entity_ids:
        hit = c.entities.get(tenant_id, eid)
        out[eid] = hit.label if hit else eid.partition(":")[2]
    return out


def named_in(c: Container, tenant_id: str, text: str, limit: int = 8) -> list[EntityInfo]:
    """The tenant's known entities that ``text`` names, in the order it names them (an incoming message:
    its invoice number, the organisation, the people), at most ``limit``; one keyed read for each of the
    first ``MAX_LOOKUPS`` distinct ones it names, so a long message costs a bounded number."""
    if not enabled(c.settings, "entities") or not text.strip():
        return []
    found: list[EntityInfo] = []
    seen: set[str] = set()
    for m in mentions_in(text[:100_000], Location(), known(c, tenant_id), c.settings.mail.phone_region):
        eid = entity_id(m.kind, m.key)
        if eid in seen:
            continue
        if len(seen) >= MAX_LOOKUPS:
            break
        seen.add(eid)
        hit = c.entities.get(tenant_id, eid)
        if hit:
            found.append(hit)
            if len(found) >= limit:
                break
    return found
