"""What a person or an agent reads about entities: a tenant's entities by kind, one entity's page (its
contact, the files naming it, their threads), and the entities of one file."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from semfs.domain.errors import NotFound
from semfs.domain.mentions import KINDS, FileEntity
from semfs.domain.results import EntityContact, EntityFile, EntityInfo, EntityPage, EntityThread
from semfs.domain.vocabulary import EntityKind
from semfs.pipeline import names
from semfs.pipeline.file_entities import resolve

if TYPE_CHECKING:
    from semfs.ports import Container

PAGE_FILES = 200  # the files an entity's page reads at most


def list_entities(
    c: Container, tenant_id: str, kind: EntityKind | None = None, q: str | None = None, limit: int = 100
) -> list[EntityInfo]:
    """The tenant's entities (of one kind), named in the most files first; ``q`` keeps those whose label
    or id holds it (case aside)."""
    found = c.entities.entities(tenant_id, kind, limit=limit if not q else 5_000)
    if q:
        needle = q.casefold()
        found = [s for s in found if needle in s.label.casefold() or needle in s.entity_id.casefold()]
    return found[:limit]


def entity_page(c: Container, tenant_id: str, value: str) -> EntityPage:
    """The entity ``value`` names (an id, or as written), or ``NotFound``."""
    summary = resolve(c, tenant_id, value)
    if summary is None:
        raise NotFound(f"no file names {value!r}")
    files: list[EntityFile] = []
    given: dict[str, str | None] = {}  # thread id → the subject a file's provenance gives it
    for m in c.entities.files(tenant_id, summary.entity_id, PAGE_FILES):
        try:
            r = c.repo.get(tenant_id, m.file_id)
        except NotFound:
            continue
        if r.deleted_at is not None or not r.is_latest:
            continue  # trashed, or an older version: the page shows what a listing shows
        if r.thread_id:
            given.setdefault(r.thread_id, names.record_subject(r))
        files.append(
            EntityFile(
                file_id=r.file_id,
                filename=r.filename,
                title=r.title,
                came_from=r.came_from,
                mentions=m.mentions,
                location=m.location,
                thread_id=r.thread_id,
                created_at=r.created_at,
            )
        )
    counted = Counter(f.thread_id for f in files if f.thread_id)
    subjects, _ = names.labels(c, tenant_id, {t: given.get(t) for t in counted}, [])
    threads = [EntityThread(thread_id=t, subject=subjects.get(t, t), files=n) for t, n in counted.most_common()]
    contact = c.mail.contact(tenant_id, summary.contact_id) if summary.contact_id else None
    return EntityPage(
        entity=summary,
        contact=EntityContact(
            contact_id=contact.contact_id, email=contact.email, name=contact.name, organisation=contact.organisation
        )
        if contact
        else None,
        files=files,
        threads=threads,
    )


def file_entities(c: Container, tenant_id: str, file_id: str) -> list[FileEntity]:
    """The entities one file names, most mentioned first, then people, organisations and the rest in
    ``KINDS`` order (the caller checked the file is the tenant's)."""
    return sorted(c.entities.of_file(tenant_id, file_id), key=lambda e: (-e.mentions, KINDS.index(e.kind), e.label))
