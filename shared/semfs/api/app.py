"""The API router, one for both hosts: API Gateway → ``search_api`` in AWS, ``semfs serve`` locally.

The tenant comes from the verified credential only: the JWT claims the API Gateway authorizer put in
the event (AWS), or the tenant the local host attached after checking the API key. Never from a
body, query string or header. A file of another tenant is a 404. Every error, whatever its status,
has one body: ``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import replace
from datetime import UTC, date, datetime
from importlib.metadata import version as package_version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import (
    BadRequestError,
    NotFoundError,
    ServiceError,
    UnauthorizedError,
)
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer, Server
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from semfs.api.models import (
    HIDDEN,
    AskOut,
    AskRequest,
    ContextOut,
    ContextRequest,
    CreatedFileOut,
    Deleted,
    Download,
    ErrorOut,
    Facets,
    FileList,
    FileOut,
    FileText,
    Health,
    JobsOut,
    MergeOut,
    StatusOut,
    SuggestionsOut,
    TagMerge,
    TagPatch,
    TagsOut,
    UploadTarget,
    VersionLink,
    Versions,
)
from semfs.domain.errors import InvalidRequest, NotFound, RetryableError, SemfsError
from semfs.domain.models import FileRecord, SearchFilters, SearchRequest, SearchResponse, SourceType
from semfs.domain.outcomes import Status
from semfs.pipeline import manage, names
from semfs.pipeline.ask import ask, context
from semfs.pipeline.search import search
from semfs.pipeline.state import load_document
from semfs.ports.repository import RecordQuery

if TYPE_CHECKING:
    from semfs.ports import Container

app = APIGatewayHttpResolver(enable_validation=True)
OPENAPI: dict[str, Any] = {
    "title": "semfs",
    "version": package_version("semfs"),
    "description": (
        "A semantic file system: every file is extracted, titled, summarised, tagged, linked to its versions "
        "and to the mail it came with, and found by meaning and by keyword. Send `Authorization: Bearer "
        "<key>` (locally: `semfs keys create`; in AWS: an ID token from the stack's user pool)."
    ),
    "servers": [Server(url="/")],
    "security_schemes": {"bearer": HTTPBearer(description="A local API key, or a JWT in AWS.")},
    "security": [{"bearer": []}],
}
ERRORS: dict[int, OpenAPIResponse] = {
    status: {"description": text, "content": {"application/json": {"model": ErrorOut}}}
    for status, text in (
        (401, "Missing or invalid credentials"),
        (404, "No such file in your tenant"),
        (422, "The request does not match its schema"),
    )
}
PUBLIC_ROUTES = ("/health",)  # no credentials (also /openapi.json and /docs, which are not in the document)


def ok(model: type[BaseModel], description: str = "Success") -> dict[int, OpenAPIResponse]:
    """The success response (its model) and the errors every route may answer with."""
    return {200: {"description": description, "content": {"application/json": {"model": model}}}, **ERRORS}


def container() -> Container:
    """The bundle the host attached to this request (``semfs serve`` or the Lambda handler)."""
    return app.context["container"]  # type: ignore[no-any-return]


def _error(status: int, code: str, message: str, details: list[dict[str, Any]] | None = None) -> Response[str]:
    body = json.dumps({"error": {"code": code, "message": message, "details": details or []}}, default=str)
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


# One handler per error family instead of a try/except in every route. A domain reason is one line
# written for the caller and never quotes document text.
@app.exception_handler(NotFound)  # type: ignore[untyped-decorator]
def _not_found(e: NotFound) -> Response[str]:
    return _error(404, "not_found", e.reason)


@app.exception_handler(InvalidRequest)  # type: ignore[untyped-decorator]
def _invalid(e: InvalidRequest) -> Response[str]:
    return _error(400, "invalid_request", e.reason)


@app.exception_handler(RequestValidationError)  # type: ignore[untyped-decorator]
def _validation(e: RequestValidationError) -> Response[str]:
    details = [
        {"loc": [str(x) for x in err.get("loc", ())], "msg": str(err.get("msg", "")), "type": str(err.get("type"))}
        for err in e.errors()
    ]
    first = details[0] if details else {"loc": [], "msg": "invalid request"}
    where = ".".join(x for x in first["loc"] if x != "body")
    return _error(422, "validation_error", f"{where}: {first['msg']}" if where else str(first["msg"]), details)


@app.exception_handler(ServiceError)  # type: ignore[untyped-decorator]
def _service(e: ServiceError) -> Response[str]:
    codes = {400: "bad_request", 401: "unauthorized", 404: "not_found", 413: "too_large"}
    return _error(e.status_code, codes.get(e.status_code, "error"), str(e.msg))


@app.exception_handler(SemfsError)  # type: ignore[untyped-decorator]
def _semfs(e: SemfsError) -> Response[str]:
    return _error(503 if isinstance(e, RetryableError) else 500, e.outcome.value.lower(), e.reason)


@app.not_found
def _no_route(e: Exception) -> Response[str]:
    # Powertools sends a route's own NotFoundError ("no such file") here too, not only unknown paths
    said = str(e.msg) if isinstance(e, NotFoundError) and e.msg != NotFoundError().msg else ""
    return _error(404, "not_found", said or "no such route")


def current_tenant() -> str:
    """The caller's tenant from the authorizer (JWT claims in AWS, the API key locally); 401 without."""
    authorizer = app.current_event.raw_event.get("requestContext", {}).get("authorizer", {}) or {}
    claims = (authorizer.get("jwt") or {}).get("claims") or {}
    tenant = claims.get(container().settings.tenant_claim) or (authorizer.get("lambda") or {}).get("tenant")
    if not isinstance(tenant, str) or not tenant:
        raise UnauthorizedError("missing or invalid credentials")
    return tenant


def _record(file_id: str) -> FileRecord:
    try:
        record = container().repo.get(current_tenant(), file_id)
    except NotFound as e:  # the same answer for another tenant's file and for none at all
        raise NotFoundError("no such file") from e
    if record.deleted_at is not None:
        raise NotFoundError("no such file")
    return record


def _public(record: FileRecord) -> FileOut:
    return FileOut.model_validate(record.model_dump(exclude=set(HIDDEN)))


def _named(tenant: str, filters: SearchFilters) -> SearchFilters:
    """Threads and contacts may be given by subject / name / address as well as by id."""
    c = container()
    return filters.model_copy(
        update={
            "thread_id": names.thread_id(c, tenant, filters.thread_id),
            "contact_id": names.contact_id(c, tenant, filters.contact_id),
        }
    )


@app.get(
    "/health",
    summary="Liveness",
    responses={200: {"description": "Up", "content": {"application/json": {"model": Health}}}},
)
def health() -> Health:
    return Health(status="ok")


@app.post("/search", summary="Search files by meaning and keyword", responses=ok(SearchResponse))
def search_route(request: SearchRequest) -> SearchResponse:
    """Hybrid (BM25 + k-NN fused), keyword or semantic search over the caller's files, grouped by file,
    each with its best snippets and their locations. Filters take ids, or a thread's subject and a
    contact's name or address."""
    tenant = current_tenant()
    named = request.model_copy(update={"filters": _named(tenant, request.filters)})
    return search(container(), tenant, named)


@app.post("/ask", summary="A grounded answer with citations", responses=ok(AskOut))
def ask_route(request: AskRequest) -> AskOut:
    """An answer only when every citation is a retrieved passage in scope whose quote occurs in it;
    otherwise ``no_answer`` with the reason."""
    tenant = current_tenant()
    filters = _named(tenant, request.filters)
    if request.file_id:
        filters = filters.model_copy(update={"file_ids": [_record(request.file_id).file_id]})
    if request.thread_id:
        filters = filters.model_copy(update={"thread_id": names.thread_id(container(), tenant, request.thread_id)})
    return AskOut.model_validate(ask(container(), tenant, request.question, filters, request.limit))


@app.post("/context", summary="The files an agent should know about for a message", responses=ok(ContextOut))
def context_route(request: ContextRequest) -> ContextOut:
    tenant = current_tenant()
    filters = _named(tenant, SearchFilters(contact_id=request.contact_id, thread_id=request.thread_id))
    items = context(container(), tenant, request.subject, request.body, filters, request.limit)
    return ContextOut.model_validate({"items": items})


def _file_query(
    tag: str | None,
    source_type: SourceType | None,
    mime_type: str | None,
    thread_id: str | None,
    contact_id: str | None,
    status: Status | None,
    since: date | None,
    until: date | None,
    include_history: bool,
    include_duplicates: bool,
) -> RecordQuery:
    """The records a file listing (and its facet counts) covers; threads and contacts by name or id."""
    tenant = current_tenant()
    c = container()
    return RecordQuery(
        tenant_id=tenant,
        statuses=[status] if status else [],
        tag=tag,
        source_type=source_type,
        mime_type=mime_type,
        thread_id=names.thread_id(c, tenant, thread_id),
        contact_id=names.contact_id(c, tenant, contact_id),
        latest_only=not include_history,
        exclude_duplicates=not include_duplicates,
        created_from=datetime(since.year, since.month, since.day, tzinfo=UTC) if since else None,
        created_to=datetime(until.year, until.month, until.day, tzinfo=UTC) if until else None,
    )


@app.get("/files", summary="List files", responses=ok(FileList))
def list_files(
    limit: int = 50,
    cursor: str | None = None,
    sort: Literal["newest", "oldest", "name", "size"] = "newest",
    tag: str | None = None,
    source_type: SourceType | None = None,
    mime_type: str | None = None,
    thread_id: str | None = None,
    contact_id: str | None = None,
    status: Status | None = None,
    since: date | None = None,
    until: date | None = None,
    include_history: bool = False,
    include_duplicates: bool = True,
) -> FileList:
    """Latest versions, newest first unless ``sort`` says otherwise; ``include_history`` adds older
    versions, ``include_duplicates=false`` leaves out skipped duplicates. ``cursor`` is the
    ``next_cursor`` of the previous page. In AWS, newest and oldest read a page from an index by
    creation time; name and size read every file of the tenant to sort them (slow past ~100k files)."""
    if not 1 <= limit <= 200:
        raise BadRequestError("limit must be between 1 and 200")
    try:
        offset = int(cursor) if cursor else 0
    except ValueError as e:
        raise BadRequestError("cursor must be the next_cursor of a previous page") from e
    scope = _file_query(
        tag, source_type, mime_type, thread_id, contact_id, status, since, until, include_history, include_duplicates
    )
    records = container().repo.query(replace(scope, order=sort, offset=offset, limit=limit + 1))
    more = len(records) > limit
    return FileList(files=[_public(r) for r in records[:limit]], next_cursor=str(offset + limit) if more else None)


@app.get(
    "/files/facets", summary="How many files have each tag, type, source, thread, contact, month", responses=ok(Facets)
)
def file_facets(
    tag: str | None = None,
    source_type: SourceType | None = None,
    mime_type: str | None = None,
    thread_id: str | None = None,
    contact_id: str | None = None,
    status: Status | None = None,
    since: date | None = None,
    until: date | None = None,
    include_history: bool = False,
    include_duplicates: bool = True,
) -> Facets:
    """Counts over the files ``GET /files`` lists with the same filters (each value with a label: a
    thread's subject, a contact's name), to narrow a listing by what is there."""
    scope = _file_query(
        tag, source_type, mime_type, thread_id, contact_id, status, since, until, include_history, include_duplicates
    )
    return Facets.model_validate(manage.facets(container(), scope))


@app.get("/files/<file_id>", summary="One file", responses=ok(FileOut))
def get_file(file_id: str) -> FileOut:
    """The record, with the names of its thread and contacts (the listing carries ids only)."""
    record = _record(file_id)
    threads = {record.thread_id: names.record_subject(record)} if record.thread_id else {}
    subjects, people = names.labels(container(), record.tenant_id, threads, record.contact_ids)
    return _public(record).model_copy(
        update={"thread_subject": subjects.get(record.thread_id or ""), "contact_names": people}
    )


@app.get("/files/<file_id>/versions", summary="Every version of the file's document", responses=ok(Versions))
def versions(file_id: str) -> Versions:
    record = _record(file_id)
    lineage = container().repo.lineage(record.tenant_id, record.lineage_id)
    return Versions(versions=[_public(v) for v in lineage if v.deleted_at is None])


@app.get("/files/<file_id>/text", summary="The extracted text with locations", responses=ok(FileText))
def text(file_id: str) -> FileText:
    doc = load_document(container(), _record(file_id))
    return FileText.model_validate({"file_id": file_id, "blocks": [b.model_dump() for b in doc.blocks]})


@app.get("/files/<file_id>/download", summary="A short-lived link to the original", responses=ok(Download))
def download(file_id: str) -> Download:
    record = _record(file_id)
    if not record.blob_key:
        raise NotFoundError("the original was not stored")
    ref = f"{record.tenant_id}/{record.file_id}"
    return Download(url=container().blobs.download_url(record.blob_key, record.filename, 300, ref), expires_in=300)


@app.patch("/files/<file_id>", summary="Add or remove manual tags", responses=ok(FileOut))
def patch_file(file_id: str, patch: TagPatch) -> FileOut:
    record = _record(file_id)
    return _public(manage.set_tags(container(), record.tenant_id, file_id, patch.add_tags, patch.remove_tags))


@app.delete("/files/<file_id>", summary="Delete a file (or every version)", responses=ok(Deleted))
def delete(file_id: str, all_versions: bool = False) -> Deleted:
    record = _record(file_id)
    removed = manage.delete_file(container(), record.tenant_id, file_id, all_versions=all_versions)
    return Deleted(deleted=[r.file_id for r in removed])


@app.post("/files/<file_id>/detach", summary="Detach a wrongly linked version", responses=ok(FileOut))
def detach(file_id: str) -> FileOut:
    """Take a wrongly linked version out of its lineage: it becomes version 1 of its own document."""
    record = _record(file_id)
    return _public(manage.detach_version(container(), record.tenant_id, file_id))


@app.post("/files/<file_id>/link", summary="Make a file the next version of another", responses=ok(FileOut))
def link(file_id: str, request: VersionLink) -> FileOut:
    """Make this file the next version of ``previous_version_id``'s lineage."""
    record = _record(file_id)
    _record(request.previous_version_id)  # 404 for another tenant's file
    return _public(manage.link_version(container(), record.tenant_id, file_id, request.previous_version_id))


@app.post("/files/<file_id>/cancel", summary="Take a queued file out of the queue", responses=ok(FileOut))
def cancel(file_id: str) -> FileOut:
    """Only a file still waiting in the queue can be cancelled; it ends ``SKIPPED_CANCELLED``."""
    record = _record(file_id)
    return _public(manage.cancel(container(), record.tenant_id, file_id))


@app.get("/jobs", summary="Files queued and in flight, per stage", responses=ok(JobsOut))
def jobs() -> JobsOut:
    return JobsOut.model_validate(manage.jobs_view(container(), current_tenant()))


@app.post("/files/<file_id>/retry", summary="Run a failed file through the pipeline again", responses=ok(FileOut))
def retry(file_id: str) -> FileOut:
    from semfs.pipeline.ingest import retry as run_again

    record = _record(file_id)
    return _public(run_again(container(), record.tenant_id, file_id))


UPLOAD_BODY: dict[str, Any] = {
    "required": False,
    "description": "Locally: the file and its provenance as multipart/form-data. In AWS: no body.",
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {"type": "string", "format": "binary", "description": "The file."},
                    "previous_version_id": {"type": "string", "description": "The file this is a new version of."},
                    "thread_id": {"type": "string", "description": "A thread id or subject."},
                    "contact_ids": {"type": "string", "description": "Contact ids, comma-separated or repeated."},
                    "tags": {"type": "string", "description": "Manual tags, comma-separated or repeated."},
                    "source_type": {"type": "string", "enum": ["upload", "agent_generated"]},
                    "agent": {"type": "string", "description": "For agent_generated: the agent's name."},
                    "run_id": {"type": "string", "description": "For agent_generated: the run."},
                    "derived_from": {"type": "string", "description": "File ids it was made from."},
                },
            }
        }
    },
}


@app.post(
    "/files",
    summary="Upload a file",
    responses={
        201: {
            "description": "Registered and processed",
            "content": {"application/json": {"model": CreatedFileOut}},
        },
        202: {
            "description": "Registered and queued (semfs serve): poll status_url for the outcome",
            "content": {"application/json": {"model": CreatedFileOut}},
        },
        200: {
            "description": "Where to upload it (AWS: a presigned POST under uploads/{tenant}/)",
            "content": {"application/json": {"model": UploadTarget}},
        },
        **ERRORS,
    },
)
def upload() -> Response[str]:
    """Locally: a multipart/form-data upload (``file`` plus optional ``previous_version_id``,
    ``thread_id``, ``contact_ids``, ``source_type``, ``tags``), ingested at once. In AWS: a presigned
    POST for a server-generated key under ``uploads/{tenant}/`` (≤ 15 min, size-limited)."""
    tenant = current_tenant()
    c = container()
    event = app.current_event
    filename = (event.query_string_parameters or {}).get("filename") or "upload.bin"
    target = c.blobs.presign_upload(tenant, filename, c.settings.max_file_bytes, 900)
    if target is not None:  # the client sends the bytes to the store itself
        return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=_json(target))
    raw = base64.b64decode(event.body or "") if event.is_base64_encoded else (event.body or "").encode("latin-1")
    fields, file_name, payload = _multipart(event.headers.get("content-type", ""), raw)
    from semfs.domain.tags import manual_tag
    from semfs.pipeline.ingest import ingest_bytes
    from semfs.pipeline.register import Provenance

    tags = [x for x in fields.get("tags", "").split(",") if x.strip()]
    for t in tags:
        try:
            manual_tag(t)
        except ValueError as e:
            raise BadRequestError(f"tags: {e}") from e
    source: SourceType = "agent_generated" if fields.get("source_type") == "agent_generated" else "upload"
    prov = Provenance(
        source_type=source,
        previous_version_id=fields.get("previous_version_id") or None,
        thread_id=names.thread_id(c, tenant, fields.get("thread_id")),
        contact_ids=[x for x in fields.get("contact_ids", "").split(",") if x.strip()],
        tags=tags,
        extra={
            **{k: fields[k] for k in ("agent", "run_id") if fields.get(k)},
            **(
                {"derived_from": [x.strip() for x in fields["derived_from"].split(",") if x.strip()]}
                if fields.get("derived_from")
                else {}
            ),
        },
        uploaded_by=fields.get("agent") or None,
    )
    try:
        reg = ingest_bytes(c, tenant, payload, file_name, prov)
    except NotFound as e:  # previous_version_id of another tenant or unknown
        raise NotFoundError("no such previous version") from e
    done = reg.record.status.terminal
    where = f"/files/{reg.record.file_id}"
    body = CreatedFileOut.model_validate(
        {**_public(reg.record).model_dump(), "created": reg.created, "status_url": where}
    )
    return Response(
        status_code=201 if done else 202,  # 202: queued; poll status_url (GET /files/{id}) for the outcome
        headers={} if done else {"Location": where},
        content_type=content_types.APPLICATION_JSON,
        body=body.model_dump_json(),
    )


@app.get("/tags", summary="The tag vocabulary with counts", responses=ok(TagsOut))
def tags() -> TagsOut:
    from semfs.pipeline.tags import vocabulary

    stats = vocabulary(container(), current_tenant())
    return TagsOut.model_validate({"tags": [{"tag": t.tag, "manual": t.manual, "auto": t.auto} for t in stats]})


@app.get("/tags/suggestions", summary="Tags that probably mean the same, with evidence", responses=ok(SuggestionsOut))
def tag_suggestions() -> SuggestionsOut:
    from semfs.pipeline.tags import suggest_merges

    return SuggestionsOut(suggestions=suggest_merges(container(), current_tenant()))


@app.post("/tags/merge", summary="Merge one tag into another", responses=ok(MergeOut))
def tag_merge(request: TagMerge) -> MergeOut:
    from semfs.pipeline.tags import merge

    changed = merge(container(), current_tenant(), request.merge, request.into)
    return MergeOut(merged=request.merge, into=request.into, files=changed)


@app.get("/status", summary="Files by status and outcome", responses=ok(StatusOut))
def status() -> StatusOut:
    tenant = current_tenant()
    rows = manage.status_rows(container(), tenant)
    counts = [{"status": s, "outcome": o, "count": n} for s, o, n in rows]
    return StatusOut.model_validate({"tenant": tenant, "counts": counts})


def openapi_document() -> dict[str, Any]:
    """The one OpenAPI document: served at /openapi.json and behind /docs. The upload's multipart body
    is described here because the route reads it itself (it is no body at all in AWS)."""
    schema = app.get_openapi_schema(**OPENAPI)
    document: dict[str, Any] = json.loads(schema.model_dump_json(by_alias=True, exclude_none=True))
    document["paths"]["/files"]["post"]["requestBody"] = UPLOAD_BODY
    for path in PUBLIC_ROUTES:
        for op in document["paths"][path].values():
            op["security"] = []  # no credentials needed
            op["responses"].pop("422", None)
    return document


@app.get("/openapi.json", include_in_schema=False)
def openapi() -> Response[str]:
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=json.dumps(openapi_document()))


@app.get("/docs", include_in_schema=False)
def docs() -> Response[str]:
    """Swagger UI over the same document (its assets ship inside Powertools: no network needed)."""
    from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import generate_swagger_html

    spec = json.dumps(openapi_document())
    if (app.current_event.query_string_parameters or {}).get("format") == "json":
        return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=spec)
    import aws_lambda_powertools.event_handler.openapi.swagger_ui as assets

    ui = Path(str(assets.__file__)).parent
    html = generate_swagger_html(
        spec.replace("</", "<\\/"),
        (ui / "swagger-ui-bundle.min.js").read_text(encoding="utf-8"),
        (ui / "swagger-ui.min.css").read_text(encoding="utf-8"),
        "",
        None,
        True,  # persist the key entered with Authorize across reloads
    )
    return Response(status_code=200, content_type="text/html", body=html)


def _json(value: Any) -> str:
    return json.dumps(value, default=str)


def _multipart(content_type: str, raw: bytes) -> tuple[dict[str, str], str, bytes]:
    """``(fields, filename, bytes)`` of a multipart/form-data body with one ``file`` part, parsed by
    python-multipart (repeated fields are joined with commas, as a comma-separated field would be)."""
    import python_multipart

    if not content_type.startswith("multipart/form-data"):
        raise BadRequestError("send the file as multipart/form-data")
    fields: dict[str, list[str]] = {}
    files: list[Any] = []

    def on_field(f: Any) -> None:
        fields.setdefault(f.field_name.decode(), []).append((f.value or b"").decode("utf-8", "replace").strip())

    try:
        python_multipart.parse_form(
            {"Content-Type": content_type.encode("latin-1"), "Content-Length": str(len(raw)).encode()},
            io.BytesIO(raw),
            on_field,
            files.append,
        )
    except (python_multipart.exceptions.FormParserError, ValueError) as e:
        raise BadRequestError("the multipart body cannot be parsed") from e
    upload = next((f for f in files if f.field_name == b"file" and f.file_name), None)
    if upload is None:
        raise BadRequestError("no file field in the upload")
    upload.file_object.seek(0)
    name = upload.file_name.decode("utf-8", "replace")
    return {k: ",".join(v) for k, v in fields.items()}, name, upload.file_object.read()
