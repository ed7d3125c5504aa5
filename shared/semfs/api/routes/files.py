"""Files: list and count them, read one, its versions, text and original, and change it."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Annotated, Literal
from urllib.parse import unquote

from aws_lambda_powertools.event_handler.exceptions import (
    BadRequestError,
    NotFoundError,
)
from aws_lambda_powertools.event_handler.openapi.params import Path, Query

from semfs.api.models import (
    VIEW_NAME_PATTERN,
    Deleted,
    Download,
    Facets,
    FileFilters,
    FileList,
    FileOut,
    FileText,
    History,
    NoteIn,
    Purged,
    Restored,
    ShareRequest,
    SharingOut,
    SimilarOut,
    TagPatch,
    TextBlock,
    TrashItem,
    TrashOut,
    VersionLink,
    Versions,
    ViewIn,
    ViewsOut,
)
from semfs.api.request import (
    admin_only,
    changeable_in_tenant,
    container,
    current_caller,
    current_principal,
    current_tenant,
    new_router,
    ok,
    public,
    readers,
    record_in_tenant,
    trashed_in_tenant,
    visible,
)
from semfs.domain.access import parse_share, readers_of
from semfs.domain.models import SavedView
from semfs.domain.outcomes import Status
from semfs.domain.results import FacetCounts
from semfs.extractors.formats import compressed_name
from semfs.pipeline import names, vocabulary
from semfs.pipeline.catalogue import notes, trash, views
from semfs.pipeline.catalogue.files import cancel as cancel_queued
from semfs.pipeline.catalogue.files import delete_file, facets, set_tags
from semfs.pipeline.catalogue.versions import detach_version, link_version
from semfs.pipeline.documents import load_document
from semfs.pipeline.file_entities import entity_named
from semfs.ports.blobs import INLINE_TYPES
from semfs.ports.repository import RecordQuery

router = new_router()


PROBLEMS = (Status.SKIPPED, Status.FAILED)
# which statuses each listing shows: a skipped duplicate or a failed parse is no document, and waits under
# Problems with its reason instead of filling the Documents list (trashed files are in the trash)
LISTINGS: dict[str, tuple[Status, ...]] = {
    "all": tuple(Status),
    "documents": tuple(s for s in Status if s not in PROBLEMS and s not in (Status.TRASHED, Status.DELETED)),
    "problems": PROBLEMS,
}


def _file_query(filters: FileFilters) -> RecordQuery | None:
    """The records a file listing (and its facet counts) covers; threads and contacts by name or id. None
    when the status asked for is never in the listing (a received file among the problems): no file is."""
    tenant = current_tenant()
    c = container()
    since, until = filters.since, filters.until
    statuses = [s for s in LISTINGS[filters.listing] if filters.status in (None, s)]
    if not statuses:  # (every status is in "all")
        return None
    return RecordQuery(
        tenant_id=tenant,
        readers=readers(),
        statuses=[] if filters.listing == "all" and filters.status is None else statuses,
        tag=vocabulary.named(c, tenant, filters.tag),
        source_type=filters.source_type,
        mime_type=filters.mime_type,
        thread_id=names.thread_id(c, tenant, filters.thread_id),
        contact_id=names.contact_id(c, tenant, filters.contact_id),
        entity=entity_named(c, tenant, filters.entity),
        latest_only=not filters.include_history,
        exclude_duplicates=not (
            filters.include_duplicates if filters.include_duplicates is not None else filters.listing != "problems"
        ),
        created_from=datetime(since.year, since.month, since.day, tzinfo=UTC) if since else None,
        created_to=datetime(until.year, until.month, until.day, tzinfo=UTC) if until else None,
    )


@router.get("/files", summary="List files", responses=ok(FileList))
def list_files(
    filters: Annotated[FileFilters, Query()],
    limit: Annotated[int, Query(ge=1, le=200, description="Files per page")] = 50,
    cursor: Annotated[str | None, Query(pattern="^[0-9]{1,9}$", description="next_cursor of a page")] = None,
    sort: Literal["newest", "oldest", "name", "size"] = "newest",
) -> FileList:
    """Latest versions, newest first unless ``sort`` says otherwise; ``include_history`` adds older
    versions, ``include_duplicates=false`` leaves out skipped duplicates. ``cursor`` is the
    ``next_cursor`` of the previous page. In AWS, newest and oldest read a page from an index by
    creation time; name and size read every file of the tenant to sort them (slow past ~100k files)."""
    offset = _offset(cursor)
    scope = _file_query(filters)
    if scope is None:
        return FileList(files=[], next_cursor=None)
    records = container().repo.query(replace(scope, order=sort, offset=offset, limit=limit + 1))
    more = len(records) > limit
    return FileList(files=[public(r) for r in records[:limit]], next_cursor=str(offset + limit) if more else None)


@router.get(
    "/files/facets", summary="How many files have each tag, type, source, thread, contact, month", responses=ok(Facets)
)
def file_facets(
    filters: Annotated[FileFilters, Query()],
    top: Annotated[int, Query(ge=1, le=500, description="Values per facet (more says how many were left out)")] = 12,
) -> Facets:
    """Counts over the files ``GET /files`` lists with the same filters (each value with a label: a
    thread's subject, a contact's name), to narrow a listing by what is there."""
    scope = _file_query(filters)
    if scope is None:
        return Facets.model_validate(
            FacetCounts(total=0, capped=False, tag=[], type=[], source=[], thread=[], contact=[], month=[]).model_dump()
        )
    return Facets.model_validate(facets(container(), scope, top).model_dump())


@router.get("/views", summary="The tenant's saved views, by name", responses=ok(ViewsOut))
def list_views() -> ViewsOut:
    return ViewsOut(views=views.visible_views(container(), current_tenant(), current_principal()))


ViewName = Annotated[str, Path(min_length=1, max_length=80, pattern=VIEW_NAME_PATTERN, description="The view's name")]


@router.put("/views/<name>", summary="Save a view: a named listing of the Documents view", responses=ok(SavedView))
def save_view(name: ViewName, view: ViewIn) -> SavedView:
    """Keeps the listing's filters and sort under ``name`` (replacing a view of that name), seen by whom
    ``share_with`` names (everyone in the tenant unless it says otherwise) and its maker."""
    params = view.params.model_dump(exclude_none=True)
    shared = parse_share(view.share_with)
    return views.save_view(
        container(), current_tenant(), unquote(name), params, by=current_caller(), principal=current_principal(),
        shared_with=shared,
    )  # fmt: skip


@router.delete("/views/<name>", summary="Delete a saved view", responses=ok(ViewsOut))
def delete_view(name: ViewName) -> ViewsOut:
    c, tenant = container(), current_tenant()
    views.delete_view(c, tenant, unquote(name), current_principal())
    return ViewsOut(views=views.visible_views(c, tenant, current_principal()))


@router.get("/files/<file_id>", summary="One file", responses=ok(FileOut))
def get_file(file_id: str) -> FileOut:
    """The record, with the names of its thread and contacts (the listing carries ids only)."""
    record = record_in_tenant(file_id)
    threads = {record.thread_id: names.record_subject(record)} if record.thread_id else {}
    subjects, people = names.labels(container(), record.tenant_id, threads, record.contact_ids)
    return public(record).model_copy(
        update={"thread_subject": subjects.get(record.thread_id or ""), "contact_names": people}
    )


@router.get("/files/<file_id>/versions", summary="Every version of the file's document", responses=ok(Versions))
def versions(file_id: str) -> Versions:
    record = record_in_tenant(file_id)
    lineage = container().repo.lineage(record.tenant_id, record.lineage_id)
    return Versions(versions=[public(v) for v in lineage if v.deleted_at is None and visible(v)])


# A Lambda function answers at most 6 MB: a page of text stays under this many bytes of JSON, counted as
# the response encodes it (non-ASCII escaped, up to 12 bytes a character)
TEXT_PAGE_BYTES = 4_000_000


@router.get(
    "/files/<file_id>/text", summary="The extracted text with locations, a page at a time", responses=ok(FileText)
)
def text(
    file_id: str,
    offset: Annotated[int, Query(ge=0, le=10**9, description="next_offset of the page before: the first block")] = 0,
) -> FileText:
    """Blocks from ``offset`` while their JSON fits ``TEXT_PAGE_BYTES``; ``next_offset`` names the page
    after (none: the last). A block too large for a page on its own is cut to fit (``truncated``)."""
    doc = load_document(container(), record_in_tenant(file_id))
    blocks: list[dict[str, object]] = []
    size, next_offset = 0, None
    for i in range(offset, len(doc.blocks)):
        block = TextBlock.model_validate(doc.blocks[i].model_dump()).model_dump(mode="json")  # as answered
        cost = len(json.dumps(block)) + 2  # and the separator before the next one
        if blocks and size + cost > TEXT_PAGE_BYTES:
            next_offset = i
            break
        body, keep = str(block["text"]), len(str(block["text"]))
        while cost > TEXT_PAGE_BYTES and keep > 0:  # one block alone: as much of its text as fits
            keep = max(0, keep * TEXT_PAGE_BYTES // cost - 1)
            block = {**block, "text": body[:keep], "truncated": True}
            cost = len(json.dumps(block)) + 2
        blocks.append(block)
        size += cost
    return FileText.model_validate({"file_id": file_id, "blocks": blocks, "next_offset": next_offset})


@router.get("/files/<file_id>/similar", summary="Files like this one, by meaning", responses=ok(SimilarOut))
def similar_files(
    file_id: str, limit: Annotated[int, Query(ge=1, le=50, description="At most this many files")] = 10
) -> SimilarOut:
    from semfs.pipeline.query.similar import similar

    record = record_in_tenant(file_id)
    return SimilarOut(files=similar(container(), record.tenant_id, file_id, limit, readers=readers()))


@router.get("/files/<file_id>/download", summary="A short-lived link to the original", responses=ok(Download))
def download(
    file_id: str,
    inline: Annotated[
        bool, Query(description="A link the browser shows (PDF, PNG, JPEG, GIF, WebP, plain text) instead of saving")
    ] = False,
) -> Download:
    record = record_in_tenant(file_id)
    if not record.blob_key:
        raise NotFoundError("the original was not stored")
    ref = f"{record.tenant_id}/{record.file_id}"
    # a compressed original (``notes.txt.gz``) is typed by what it holds, but its bytes are the compressed ones
    shown = (
        record.mime_type
        if inline and not compressed_name(record.filename) and record.mime_type in INLINE_TYPES
        else None
    )
    url = container().blobs.download_url(record.blob_key, record.filename, 300, ref, inline_type=shown)
    return Download(url=url, expires_in=300)


@router.patch("/files/<file_id>", summary="Add or remove manual tags", responses=ok(FileOut))
def patch_file(file_id: str, patch: TagPatch) -> FileOut:
    record = record_in_tenant(file_id)
    tagged = set_tags(container(), record.tenant_id, file_id, patch.add_tags, patch.remove_tags, by=current_caller())
    return public(tagged)


@router.post("/files/<file_id>/notes", summary="Add a note to a file", responses=ok(FileOut))
def add_note(file_id: str, note: NoteIn) -> FileOut:
    """The note is kept with this version, signed by the caller, and found by search through the file."""
    record = record_in_tenant(file_id)
    return public(notes.add_note(container(), record.tenant_id, file_id, note.text, author=current_caller()))


@router.delete("/files/<file_id>/notes/<note_id>", summary="Remove a note from a file", responses=ok(FileOut))
def remove_note(file_id: str, note_id: str) -> FileOut:
    record = record_in_tenant(file_id)
    return public(notes.remove_note(container(), record.tenant_id, file_id, note_id, by=current_caller()))


@router.get("/files/<file_id>/share", summary="Who may read a file", responses=ok(SharingOut))
def sharing(file_id: str) -> SharingOut:
    """Its owner and readers: ``tenant`` (everyone), ``u:NAME``, ``g:NAME``, or ``admins``."""
    record = record_in_tenant(file_id)
    return SharingOut(file_id=record.file_id, owner=record.owner, readers=list(readers_of(record.readers)))


@router.post("/files/<file_id>/share", summary="Share a file, or stop sharing it", responses=ok(SharingOut))
def change_sharing(file_id: str, request: ShareRequest) -> SharingOut:
    """Share every version of the file's document with ``add`` and stop sharing it with ``revoke`` (each
    ``private``, ``tenant``, ``group:NAME`` or ``user:NAME``). Its owner or an admin (403 for a reader)."""
    from semfs.pipeline.catalogue.sharing import share

    record = changeable_in_tenant(file_id)
    changed = share(
        container(), current_principal(), record, parse_share(request.add), parse_share(request.revoke),
        by=current_caller(),
    )  # fmt: skip
    return SharingOut(file_id=changed.file_id, owner=changed.owner, readers=list(readers_of(changed.readers)))


@router.get("/files/<file_id>/history", summary="What happened to a file, newest first", responses=ok(History))
def file_history(file_id: str) -> History:
    """Received (and from where), a new version of which file, processed, then what people did: tags,
    notes, trash and restore, version links."""
    return History(entries=notes.history(container(), record_in_tenant(file_id)))


@router.delete("/files/<file_id>", summary="Move a file (or every version) to the trash", responses=ok(Deleted))
def delete(file_id: str, all_versions: bool = False, purge: bool = False) -> Deleted:
    """Moves it to the trash: hidden from search, answers and lists, restorable until ``purge_on``.
    ``purge=true`` erases it for good at once (an erasure request). Its owner or an admin only (403)."""
    record = changeable_in_tenant(file_id)
    c = container()
    removed = delete_file(c, record.tenant_id, file_id, all_versions=all_versions, purge=purge, by=current_caller())
    kept = bool(removed) and all(r.status is Status.TRASHED for r in removed)
    return Deleted(
        deleted=[r.file_id for r in removed], in_trash=kept, purge_on=trash.purge_date(c, removed[0]) if kept else None
    )


@router.post("/files/<file_id>/restore", summary="Bring a file back from the trash", responses=ok(Restored))
def restore(file_id: str, all_versions: bool = False) -> Restored:
    """Restores a file in the trash as it was (searchable again); with ``all_versions`` every version
    of its document in the trash. 404 for a file not in the trash."""
    record = trashed_in_tenant(file_id)
    back = trash.restore(container(), record.tenant_id, file_id, all_versions=all_versions, by=current_caller())
    return Restored(restored=[public(r) for r in back])


@router.get("/trash", summary="The trash, newest first", responses=ok(TrashOut))
def list_trash(
    limit: Annotated[int, Query(ge=1, le=200)] = 50, offset: Annotated[int, Query(ge=0, le=100_000)] = 0
) -> TrashOut:
    c = container()
    tenant = current_tenant()
    everything = [r for r in trash.in_trash(c, tenant, limit=100_000) if visible(r)]
    items = [
        TrashItem(
            file_id=r.file_id,
            filename=r.filename,
            title=r.title,
            version=r.version,
            deleted_at=r.deleted_at,
            purge_on=trash.purge_date(c, r),
        )
        for r in everything[offset : offset + limit]
    ]
    return TrashOut(items=items, total=len(everything))


@router.delete("/trash", summary="Empty the trash (erase for good)", responses=ok(Purged))
def empty_trash(older_than_days: Annotated[float | None, Query(ge=0, le=3650)] = None) -> Purged:
    """Erases everything in the trash, or only what was deleted more than ``older_than_days`` ago. An
    admin's to do (403): the trash holds every user's files."""
    admin_only()
    gone = trash.empty_trash(container(), current_tenant(), older_than_days)
    return Purged(purged=[r.file_id for r in gone])


@router.post("/files/<file_id>/detach", summary="Detach a wrongly linked version", responses=ok(FileOut))
def detach(file_id: str) -> FileOut:
    """Take a wrongly linked version out of its lineage: it becomes version 1 of its own document."""
    record = changeable_in_tenant(file_id)
    return public(detach_version(container(), record.tenant_id, file_id, by=current_caller()))


@router.post("/files/<file_id>/link", summary="Make a file the next version of another", responses=ok(FileOut))
def link(file_id: str, request: VersionLink) -> FileOut:
    """Make this file the next version of ``previous_version_id``'s lineage."""
    record = changeable_in_tenant(file_id)
    record_in_tenant(request.previous_version_id)  # 404 for another tenant's file, or one not shared
    linked = link_version(container(), record.tenant_id, file_id, request.previous_version_id, by=current_caller())
    return public(linked)


@router.post("/files/<file_id>/cancel", summary="Take a queued file out of the queue", responses=ok(FileOut))
def cancel(file_id: str) -> FileOut:
    """Only a file still waiting in the queue can be cancelled; it ends ``SKIPPED_CANCELLED``."""
    record = record_in_tenant(file_id)
    return public(cancel_queued(container(), record.tenant_id, file_id))


@router.post("/files/<file_id>/retry", summary="Run a failed file through the pipeline again", responses=ok(FileOut))
def retry(file_id: str) -> FileOut:
    from semfs.pipeline.intake.ingest import retry as run_again

    record = record_in_tenant(file_id)
    return public(run_again(container(), record.tenant_id, file_id))


MAX_OFFSET = 10**9  # far past any listing's end; an offset SQLite (64-bit) and DynamoDB paging both hold


def _offset(cursor: str | None) -> int:
    """The offset a ``next_cursor`` names: a whole number from 0 to ``MAX_OFFSET``, else 400."""
    if not cursor:
        return 0
    if not (cursor.isascii() and cursor.isdigit() and len(cursor) <= 10 and int(cursor) <= MAX_OFFSET):
        raise BadRequestError("cursor must be the next_cursor of a previous page")
    return int(cursor)
