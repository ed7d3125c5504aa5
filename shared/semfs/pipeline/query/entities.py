"""What a person or an agent reads about entities: a tenant's entities by kind, one entity's page (its
contact, the files naming it, their threads), and the entities of one file."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from semfs.domain.access import can_read
from semfs.domain.errors import NotFound
from semfs.domain.mentions import KINDS, FileEntity
from semfs.domain.results import EntityContact, EntityFile, EntityInfo, EntityPage, EntityThread
from semfs.domain.vocabulary import EntityKind
from semfs.pipeline import names
from semfs.pipeline.file_entities import resolve
from semfs.ports.repository import RecordQuery

if TYPE_CHECKING:
    from semfs.ports import Container

PAGE_FILES = 200  # the files an entity's page reads at most


def list_entities(
    c: Container,
    tenant_id: str,
    kind: EntityKind | None = None,
    q: str | None = None,
    limit: int = 100,
    readers: tuple[str, ...] | None = None,
) -> list[EntityInfo]:
    """The tenant's entities (of one kind), named in the most files first; ``q`` keeps those whose label
    or id holds it (case aside). Each is counted in the files a listing shows — latest versions, not in
    the trash — so its count is the number of files its page lists (issue 51.4: 7 on the list, 5 on the
    page, older versions counted). A caller who reads as ``readers`` sees the entities of the files shared
    with them only, each counted in those files alone: no count says an invisible file exists."""
    found = _visible_entities(c, tenant_id, kind, readers)
    if q:
        needle = q.casefold()
        found = [s for s in found if needle in s.label.casefold() or needle in s.entity_id.casefold()]
    return found[:limit]


def _visible_entities(
    c: Container, tenant_id: str, kind: EntityKind | None, readers: tuple[str, ...] | None
) -> list[EntityInfo]:
    """The entities the latest, untrashed files shared with ``readers`` (``None``: every one) name (each
    file's ``entities``: its most mentioned), counted over those files only, most files first."""
    counts: Counter[str] = Counter()
    after: str | None = None
    while True:
        query = RecordQuery(tenant_id=tenant_id, readers=readers, after=after, limit=500, latest_only=True)
        page = c.repo.query(query)
        for r in page:
            counts.update(set(r.entities))
        if len(page) < 500:
            break
        after = page[-1].file_id
    known = {e.entity_id: e for e in c.entities.entities(tenant_id, kind, limit=max(1000, 4 * len(counts)))}
    seen = [known[e].model_copy(update={"files": n}) for e, n in counts.items() if e in known]
    return sorted(seen, key=lambda e: (-e.files, e.label))


def entity_page(c: Container, tenant_id: str, value: str, readers: tuple[str, ...] | None = None) -> EntityPage:
    """The entity ``value`` names (an id, or as written), or ``NotFound``; for a caller reading as
    ``readers``, from the files shared with them alone (``NotFound`` when none of them names it)."""
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
        if r.deleted_at is not None or not r.is_latest or not can_read(r.readers, readers):
            continue  # trashed, an older version, or not the caller's: the page shows what a listing shows
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
    if readers is not None and not files:
        raise NotFound(f"no file names {value!r}")  # as for an entity no file names
    if len(files) < PAGE_FILES:  # the count is the files listed, as on the list of entities
        summary = summary.model_copy(update={"files": len(files)})
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
