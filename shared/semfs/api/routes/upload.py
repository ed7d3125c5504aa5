"""``POST /files``: a multipart upload ingested at once (locally) or a presigned POST (AWS)."""

from __future__ import annotations

import base64
import io
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.exceptions import (
    BadRequestError,
    NotFoundError,
)

from semfs.api.models import (
    CreatedFileOut,
    ErrorOut,
    UploadTarget,
)
from semfs.api.request import ERRORS, container, current_principal, current_tenant, new_router, public, to_json
from semfs.domain.access import parse_share
from semfs.domain.errors import NotFound
from semfs.domain.features import require
from semfs.domain.ids import file_id_for
from semfs.pipeline import names
from semfs.pipeline.principals import access_metadata, new_file_access

if TYPE_CHECKING:
    from semfs.pipeline.intake.register import Provenance
    from semfs.ports import Container

router = new_router()


_TAG = "[^<>{}\\[\\]`@,]*[A-Za-z0-9][^<>{}\\[\\]`@,]*"  # a letter or digit, nothing of links or markup

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
                    "contact_ids": {
                        "type": "string",
                        "description": "Contacts by id (c_…), name or address, comma-separated; a name no "
                        "contact has yet makes one.",
                    },
                    "tags": {
                        "type": "string",
                        "description": "Manual tags, comma-separated or repeated (each at most 48 characters).",
                        "pattern": f"^({_TAG}(,{_TAG})*)?$",
                    },
                    "source_type": {"type": "string", "enum": ["upload", "agent_generated"]},
                    "agent": {"type": "string", "description": "For agent_generated: the agent's name."},
                    "run_id": {"type": "string", "description": "For agent_generated: the run."},
                    "derived_from": {"type": "string", "description": "File ids it was made from."},
                },
            }
        }
    },
}


UPLOAD_QUERY: list[dict[str, Any]] = [
    {
        "name": "filename",
        "in": "query",
        "required": False,
        "schema": {"type": "string", "maxLength": 255},
        "description": "The file's name (the key's last part).",
    },
    {
        "name": "sha256",
        "in": "query",
        "required": False,
        "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
        "description": "The bytes' SHA-256: the answer then names the file_id the upload will have, to poll.",
    },
]
SHA256 = re.compile(r"[0-9a-f]{64}")


@router.post(
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
        429: {
            "description": "The tenant already has its share of files waiting (send it again after Retry-After)",
            "content": {"application/json": {"model": ErrorOut}},
        },
    },
)
def upload() -> Response[str]:
    """Locally: a multipart/form-data upload (``file`` plus optional ``previous_version_id``,
    ``thread_id``, ``contact_ids``, ``source_type``, ``tags``, ``share_with``: private, tenant, group:NAME or
    user:NAME, comma-separated; the file is the uploader's and theirs), ingested at once. In AWS: a presigned
    POST for a server-generated key under ``uploads/{tenant}/`` (≤ 15 min, size-limited)."""
    from semfs.pipeline.intake.ingest import ingest_bytes

    tenant = current_tenant()
    c = container()
    require(c.settings, "ingest")  # before a presigned POST is issued or the body is read
    event = router.current_event
    query = event.query_string_parameters or {}
    principal = current_principal()
    shared = parse_share([x for x in (query.get("share_with") or "").split(",") if x.strip()])
    target = c.blobs.presign_upload(
        tenant,
        query.get("filename") or "upload.bin",
        c.settings.limits.max_file_bytes,
        900,
        access_metadata(new_file_access(c, principal, shared)),
    )
    if target is not None:  # the client sends the bytes to the store itself
        return _presigned(tenant, target, query.get("sha256"))
    raw = base64.b64decode(event.body or "") if event.is_base64_encoded else (event.body or "").encode("latin-1")
    fields, file_name, payload = _multipart(event.headers.get("content-type", ""), raw)
    try:
        reg = ingest_bytes(c, tenant, payload, file_name, _provenance(c, tenant, fields))
    except NotFound as e:  # an id it names (previous version, contacts, sources) is not the tenant's
        raise NotFoundError(e.reason) from e
    done = reg.record.status.terminal
    where = f"/files/{reg.record.file_id}"
    body = CreatedFileOut.model_validate(
        {**public(reg.record).model_dump(), "created": reg.created, "status_url": where}
    )
    return Response(
        status_code=201 if done else 202,  # 202: queued; poll status_url (GET /files/{id}) for the outcome
        headers={} if done else {"Location": where},
        content_type=content_types.APPLICATION_JSON,
        body=body.model_dump_json(),
    )


def _presigned(tenant: str, target: dict[str, Any], sha: str | None) -> Response[str]:
    """The presigned POST, with the id its ingestion will give the file when the client names its bytes'
    SHA-256 (identity: tenant, source, key, bytes)."""
    if sha is not None:
        if not SHA256.fullmatch(sha):
            raise BadRequestError("sha256 is the bytes' SHA-256 in 64 lowercase hex digits")
        file_id = file_id_for(tenant, "upload", f"s3:{target['key']}", sha)
        target |= {"file_id": file_id, "status_url": f"/files/{file_id}"}
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=to_json(target))


def _provenance(c: Container, tenant: str, fields: dict[str, str]) -> Provenance:
    """What the form's fields say about the file, checked as every caller's claims are."""
    from semfs.pipeline.intake.register import Provenance

    def listed(name: str) -> list[str]:
        return [x.strip() for x in fields.get(name, "").split(",") if x.strip()]

    extra: dict[str, Any] = {k: fields[k] for k in ("agent", "run_id") if fields.get(k)}
    if fields.get("derived_from"):
        extra["derived_from"] = listed("derived_from")
    principal = current_principal()
    prov = Provenance.from_caller(
        source_type=fields.get("source_type"),
        tags=listed("tags"),
        previous_version_id=fields.get("previous_version_id") or None,
        thread_id=names.thread_id(c, tenant, fields.get("thread_id")),
        **_contacts(c, tenant, listed("contact_ids")),
        extra=extra,
        uploaded_by=fields.get("agent") or principal.user,
    )
    # the uploader's, and whom the ``share_with`` field names (private | tenant | group:G | user:U)
    access = new_file_access(c, principal, parse_share(listed("share_with")))
    return replace(prov, access=access, viewer=principal.tokens())


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


def _contacts(c: Container, tenant: str, given: list[str]) -> dict[str, list[str]]:
    """The contacts a person typed, as ``Provenance`` takes them: a contact's id, or a name or address one
    of the tenant's contacts has, by that contact's id; any other name or address as a new contact (the
    CLI's ``--contact``). An id the tenant has no contact for is kept, and refused by the register."""
    known = {contact.contact_id for contact in c.mail.contacts(tenant)}
    ids: list[str] = []
    new: list[str] = []
    for entry in given:
        found = names.contact_id(c, tenant, entry)
        if entry.startswith("c_") or found in known:
            ids.append(found or entry)
        else:
            new.append(entry)
    return {"contact_ids": ids, "contacts": new}
