"""The API router, one for both hosts: API Gateway → ``search_api`` in AWS, ``semfs serve`` locally.

The tenant comes from the verified credential only: the JWT claims the API Gateway authorizer put in
the event (AWS), or the tenant the local host attached after checking the API key. Never from a
body, query string or header. A file of another tenant is a 404.
"""

from __future__ import annotations

import base64
import io
import json
from datetime import date
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types
from aws_lambda_powertools.event_handler.exceptions import (
    BadRequestError,
    NotFoundError,
    ServiceError,
    UnauthorizedError,
)
from pydantic import BaseModel, ConfigDict, Field

from semfs.domain.errors import InvalidRequest, NotFound, RetryableError, SemfsError
from semfs.domain.models import FileRecord, SearchFilters, SearchRequest, SourceType
from semfs.domain.outcomes import Status
from semfs.pipeline import manage
from semfs.pipeline.ask import ask, context
from semfs.pipeline.search import search
from semfs.pipeline.state import load_document
from semfs.ports.repository import RecordQuery

if TYPE_CHECKING:
    from semfs.ports import Container

app = APIGatewayHttpResolver(enable_validation=True)
app.enable_swagger(path="/docs", title="semfs API", version="0.1.0")
HIDDEN = {"blob_key", "text_key", "chunks_key", "source_key"}


def container() -> Container:
    """The bundle the host attached to this request (``semfs serve`` or the Lambda handler)."""
    return app.context["container"]  # type: ignore[no-any-return]


def _error(status: int, code: str, message: str) -> Response[str]:
    body = json.dumps({"error": {"code": code, "message": message}})
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body)


# One handler per error family instead of a try/except in every route. A domain reason is one line
# written for the caller and never quotes document text.
@app.exception_handler(NotFound)  # type: ignore[untyped-decorator]
def _not_found(e: NotFound) -> Response[str]:
    return _error(404, "not_found", e.reason)


@app.exception_handler(InvalidRequest)  # type: ignore[untyped-decorator]
def _invalid(e: InvalidRequest) -> Response[str]:
    return _error(400, "invalid_request", e.reason)


@app.exception_handler(ServiceError)  # type: ignore[untyped-decorator]
def _service(e: ServiceError) -> Response[str]:
    codes = {400: "bad_request", 401: "unauthorized", 404: "not_found", 413: "too_large"}
    return _error(e.status_code, codes.get(e.status_code, "error"), str(e.msg))


@app.exception_handler(SemfsError)  # type: ignore[untyped-decorator]
def _semfs(e: SemfsError) -> Response[str]:
    return _error(503 if isinstance(e, RetryableError) else 500, e.outcome.value.lower(), e.reason)


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


def _public(record: FileRecord) -> dict[str, Any]:
    return record.model_dump(mode="json", exclude=HIDDEN)


class AskRequest(BaseModel):
    question: str = Field(min_length=1, max_length=2000)
    filters: SearchFilters = SearchFilters()
    file_id: str | None = None
    thread_id: str | None = None
    limit: int = Field(default=6, ge=1, le=20)


class ContextRequest(BaseModel):
    subject: str = Field(default="", max_length=1000)
    body: str = Field(default="", max_length=20_000)
    contact_id: str | None = None
    thread_id: str | None = None
    limit: int = Field(default=5, ge=1, le=20)


class TagPatch(BaseModel):
    add_tags: list[str] = Field(default_factory=list, max_length=50)
    remove_tags: list[str] = Field(default_factory=list, max_length=50)


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


@app.post("/search")
def search_route(request: SearchRequest) -> dict[str, Any]:
    return search(container(), current_tenant(), request).model_dump(mode="json")


@app.post("/ask")
def ask_route(request: AskRequest) -> dict[str, Any]:
    tenant = current_tenant()
    filters = request.filters
    if request.file_id:
        filters = filters.model_copy(update={"file_ids": [_record(request.file_id).file_id]})
    if request.thread_id:
        filters = filters.model_copy(update={"thread_id": request.thread_id})
    return ask(container(), tenant, request.question, filters, request.limit)


@app.post("/context")
def context_route(request: ContextRequest) -> dict[str, Any]:
    filters = SearchFilters(contact_id=request.contact_id, thread_id=request.thread_id)
    items = context(container(), current_tenant(), request.subject, request.body, filters, request.limit)
    return {"items": items}


@app.get("/files")
def list_files(
    limit: int = 50,
    cursor: str | None = None,
    tag: str | None = None,
    source_type: str | None = None,
    thread_id: str | None = None,
    status: str | None = None,
    since: date | None = None,
) -> dict[str, Any]:
    from datetime import UTC, datetime

    if not 1 <= limit <= 200:
        raise BadRequestError("limit must be between 1 and 200")
    try:
        statuses = [Status(status)] if status else []
    except ValueError as e:
        raise BadRequestError(f"unknown status {status}") from e
    query = RecordQuery(
        tenant_id=current_tenant(),
        statuses=statuses,
        tag=tag,
        source_type=source_type,
        thread_id=thread_id,
        created_from=datetime(since.year, since.month, since.day, tzinfo=UTC) if since else None,
        limit=limit,
        after=cursor,
    )
    records = container().repo.query(query)
    return {
        "files": [_public(r) for r in records],
        "next_cursor": records[-1].file_id if len(records) == limit else None,
    }


@app.get("/files/<file_id>")
def get_file(file_id: str) -> dict[str, Any]:
    return _public(_record(file_id))


@app.get("/files/<file_id>/versions")
def versions(file_id: str) -> dict[str, Any]:
    record = _record(file_id)
    lineage = container().repo.lineage(record.tenant_id, record.lineage_id)
    return {"versions": [_public(v) for v in lineage if v.deleted_at is None]}


@app.get("/files/<file_id>/text")
def text(file_id: str) -> dict[str, Any]:
    doc = load_document(container(), _record(file_id))
    return {"file_id": file_id, "blocks": [b.model_dump(mode="json", exclude_none=True) for b in doc.blocks]}


@app.get("/files/<file_id>/download")
def download(file_id: str) -> dict[str, Any]:
    record = _record(file_id)
    if not record.blob_key:
        raise NotFoundError("the original was not stored")
    url = container().blobs.download_url(record.blob_key, record.filename, 300)
    return {"url": url, "expires_in": 300}


@app.patch("/files/<file_id>")
def patch_file(file_id: str, patch: TagPatch) -> dict[str, Any]:
    record = _record(file_id)
    return _public(manage.set_tags(container(), record.tenant_id, file_id, patch.add_tags, patch.remove_tags))


@app.delete("/files/<file_id>")
def delete(file_id: str, all_versions: bool = False) -> dict[str, Any]:
    record = _record(file_id)
    removed = manage.delete_file(container(), record.tenant_id, file_id, all_versions=all_versions)
    return {"deleted": [r.file_id for r in removed]}


class VersionLink(BaseModel):
    model_config = ConfigDict(extra="forbid")

    previous_version_id: str = Field(min_length=1, max_length=100)


@app.post("/files/<file_id>/detach")
def detach(file_id: str) -> dict[str, Any]:
    """Take a wrongly linked version out of its lineage: it becomes version 1 of its own document."""
    record = _record(file_id)
    return _public(manage.detach_version(container(), record.tenant_id, file_id))


@app.post("/files/<file_id>/link")
def link(file_id: str, request: VersionLink) -> dict[str, Any]:
    """Make this file the next version of ``previous_version_id``'s lineage."""
    record = _record(file_id)
    _record(request.previous_version_id)  # 404 for another tenant's file
    return _public(manage.link_version(container(), record.tenant_id, file_id, request.previous_version_id))


@app.post("/files/<file_id>/retry")
def retry(file_id: str) -> dict[str, Any]:
    from semfs.pipeline.ingest import process
    from semfs.pipeline.records import update

    record = _record(file_id)
    if record.status is not Status.FAILED:
        raise BadRequestError("only failed files can be retried")
    c = container()
    reset = update(
        c.repo, record.tenant_id, file_id, lambda r: r.evolve(status=Status.RECEIVED, outcome=None, error=None)
    )
    return _public(process(c, reset))


@app.post("/files")
def upload() -> Any:  # a 201 Response locally, the presigned POST in AWS
    """Locally: a multipart/form-data upload (``file`` plus optional ``previous_version_id``,
    ``thread_id``, ``contact_ids``, ``source_type``, ``tags``), ingested at once. In AWS: a presigned
    POST for a server-generated key under ``uploads/{tenant}/`` (≤ 15 min, size-limited)."""
    tenant = current_tenant()
    c = container()
    event = app.current_event
    filename = (event.query_string_parameters or {}).get("filename") or "upload.bin"
    target = c.blobs.presign_upload(tenant, filename, c.settings.max_file_bytes, 900)
    if target is not None:  # the client sends the bytes to the store itself
        return target
    raw = base64.b64decode(event.body or "") if event.is_base64_encoded else (event.body or "").encode("latin-1")
    fields, file_name, payload = _multipart(event.headers.get("content-type", ""), raw)
    from semfs.pipeline.ingest import ingest_bytes
    from semfs.pipeline.register import Provenance

    source: SourceType = "agent_generated" if fields.get("source_type") == "agent_generated" else "upload"
    prov = Provenance(
        source_type=source,
        previous_version_id=fields.get("previous_version_id") or None,
        thread_id=fields.get("thread_id") or None,
        contact_ids=[x for x in fields.get("contact_ids", "").split(",") if x.strip()],
        tags=[x for x in fields.get("tags", "").split(",") if x.strip()],
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
    return Response(
        status_code=201,
        content_type=content_types.APPLICATION_JSON,
        body=_json(_public(reg.record) | {"created": reg.created}),
    )


@app.get("/tags")
def tags() -> dict[str, Any]:
    from semfs.pipeline.tags import vocabulary

    return {
        "tags": [{"tag": t.tag, "manual": t.manual, "auto": t.auto} for t in vocabulary(container(), current_tenant())]
    }


@app.get("/tags/suggestions")
def tag_suggestions() -> dict[str, Any]:
    from semfs.pipeline.tags import suggest_merges

    return {"suggestions": suggest_merges(container(), current_tenant())}


class TagMerge(BaseModel):
    merge: str = Field(min_length=1, max_length=100)
    into: str = Field(min_length=1, max_length=100)


@app.post("/tags/merge")
def tag_merge(request: TagMerge) -> dict[str, Any]:
    from semfs.pipeline.tags import merge

    changed = merge(container(), current_tenant(), request.merge, request.into)
    return {"merged": request.merge, "into": request.into, "files": changed}


@app.get("/status")
def status() -> dict[str, Any]:
    return {
        "counts": [
            {"status": s, "outcome": o, "count": n} for s, o, n in manage.status_rows(container(), current_tenant())
        ]
    }


@app.get("/openapi.json")
def openapi() -> Any:  # the schema as generated, not re-validated
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=app.get_openapi_json_schema())


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
