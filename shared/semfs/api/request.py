"""What every route reads from the request it serves: the container, the caller's tenant (from the verified
credential only), a file of that tenant, and the success and error responses routes declare."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.exceptions import (
    NotFoundError,
    UnauthorizedError,
)
from aws_lambda_powertools.event_handler.openapi.types import OpenAPIResponse
from pydantic import BaseModel

from semfs.api.models import (
    HIDDEN,
    ErrorOut,
    FileOut,
)
from semfs.domain.errors import NotFound
from semfs.domain.models import FileRecord, SearchFilters
from semfs.domain.outcomes import Status
from semfs.domain.tenants import is_tenant_id
from semfs.pipeline import names

if TYPE_CHECKING:
    from semfs.ports import Container


def new_router() -> Router:
    """A router for one area of routes (Powertools' constructor is untyped)."""
    return Router()  # type: ignore[no-untyped-call]


router = new_router()  # holds no routes: included so that it sees the request the resolver is serving


ERRORS: dict[int, OpenAPIResponse] = {
    status: {"description": text, "content": {"application/json": {"model": ErrorOut}}}
    for status, text in (
        (400, "The request cannot be done as asked"),
        (401, "Missing or invalid credentials"),
        (404, "No such file in your tenant"),
        (409, "The file changed under the request (retry it)"),
        (413, "The body is over the size limit"),
        (422, "The request does not match its schema"),
        (503, "A service semfs depends on is unavailable (retry it)"),
    )
}


def ok(model: type[BaseModel], description: str = "Success") -> dict[int, OpenAPIResponse]:
    """The success response (its model) and the errors every route may answer with."""
    return {200: {"description": description, "content": {"application/json": {"model": model}}}, **ERRORS}


def container() -> Container:
    """The bundle the host attached to this request (``semfs serve`` or the Lambda handler)."""
    return router.context["container"]  # type: ignore[no-any-return]


def current_tenant() -> str:
    """The caller's tenant from the authorizer (JWT claims in AWS, the API key locally); 401 without."""
    authorizer = router.current_event.raw_event.get("requestContext", {}).get("authorizer", {}) or {}
    claims = (authorizer.get("jwt") or {}).get("claims") or {}
    tenant = claims.get(container().settings.aws.tenant_claim) or (authorizer.get("lambda") or {}).get("tenant")
    if not is_tenant_id(tenant):  # a claim that is no tenant id is no credential (domain/tenants.py)
        raise UnauthorizedError("missing or invalid credentials")
    return str(tenant)


def current_caller() -> str | None:
    """Who is calling, for a file's history and a note's author: the signed-in user (the JWT's email or
    user name in AWS) or the API key by its fingerprint (locally). ``None`` when nothing names one."""
    authorizer = router.current_event.raw_event.get("requestContext", {}).get("authorizer", {}) or {}
    claims = (authorizer.get("jwt") or {}).get("claims") or {}
    caller = (
        claims.get("email")
        or claims.get("cognito:username")
        or claims.get("username")
        or (authorizer.get("lambda") or {}).get("caller")
    )
    return caller if isinstance(caller, str) and caller else None


def record_in_tenant(file_id: str) -> FileRecord:
    try:
        record = container().repo.get(current_tenant(), file_id)
    except NotFound as e:  # the same answer for another tenant's file and for none at all
        raise NotFoundError("no such file") from e
    if record.deleted_at is not None:
        raise NotFoundError("no such file")
    return record


def trashed_in_tenant(file_id: str) -> FileRecord:
    """A file of the caller's tenant that is in the trash; 404 for any other (another tenant's too)."""
    try:
        record = container().repo.get(current_tenant(), file_id)
    except NotFound as e:
        raise NotFoundError("no such file in the trash") from e
    if record.status is not Status.TRASHED:
        raise NotFoundError("no such file in the trash")
    return record


def public(record: FileRecord) -> FileOut:
    return FileOut.model_validate({**record.model_dump(exclude=set(HIDDEN)), "came_from": record.came_from})


def named(tenant: str, filters: SearchFilters) -> SearchFilters:
    """Threads and contacts may be given by subject / name / address as well as by id."""
    c = container()
    return filters.model_copy(
        update={
            "thread_id": names.thread_id(c, tenant, filters.thread_id),
            "contact_id": names.contact_id(c, tenant, filters.contact_id),
        }
    )


def to_json(value: Any) -> str:
    return json.dumps(value, default=str)
