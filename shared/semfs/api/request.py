"""What every route reads from the request it serves: the container, the caller's tenant (from the verified
credential only), a file of that tenant, and the success and error responses routes declare."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.exceptions import (
    ForbiddenError,
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
from semfs.domain.access import TENANT, Principal, can_read, claimed_groups
from semfs.domain.errors import NotFound
from semfs.domain.models import FileRecord, SearchFilters
from semfs.domain.outcomes import Status
from semfs.domain.tenants import is_tenant_id
from semfs.observability import get_logger
from semfs.pipeline import names
from semfs.pipeline.principals import principal_for, principal_from_claims

if TYPE_CHECKING:
    from semfs.ports import Container


def new_router() -> Router:
    """A router for one area of routes (Powertools' constructor is untyped)."""
    return Router()  # type: ignore[no-untyped-call]


def public_base() -> str:
    """This API's address as the caller dialed it (``https://<api id>.execute-api.<region>.amazonaws.com`` or a
    custom domain; ``http://127.0.0.1:8080`` locally): the Host header, and the scheme a proxy in front says."""
    event = router.current_event
    headers = {k.lower(): v for k, v in (event.headers or {}).items()}
    domain = (event.raw_event.get("requestContext") or {}).get("domainName")  # API Gateway's; HTTPS only
    host = headers.get("host") or domain or "localhost"
    scheme = headers.get("x-forwarded-proto") or ("https" if domain else "http")
    return f"{scheme.split(',')[0].strip()}://{host}"


log = get_logger(__name__)
router = new_router()  # holds no routes: included so that it sees the request the resolver is serving


ERRORS: dict[int, OpenAPIResponse] = {
    status: {"description": text, "content": {"application/json": {"model": ErrorOut}}}
    for status, text in (
        (400, "The request cannot be done as asked"),
        (401, "Missing or invalid credentials"),
        (403, "Your access does not allow this (the file's owner or an admin may)"),
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


def current_principal() -> Principal:
    """Who the caller is inside its tenant (``domain/access.py``), from the verified credential only: the
    JWT's user and ``cognito:groups`` in AWS, the API key's user locally (a key from before users, or with
    none: the tenant's first admin). Remembered for the request."""
    cached = router.context.get("principal")
    if isinstance(cached, Principal):
        return cached
    tenant = current_tenant()
    authorizer = router.current_event.raw_event.get("requestContext", {}).get("authorizer", {}) or {}
    claims = (authorizer.get("jwt") or {}).get("claims") or {}
    c = container()
    if claims:
        user = claims.get("cognito:username") or claims.get("username")
        named = user if isinstance(user, str) else None
        email = claims.get("email") if isinstance(claims.get("email"), str) else None
        principal = principal_from_claims(c, tenant, named, claimed_groups(claims.get("cognito:groups")), email)
    else:
        key = authorizer.get("lambda") or {}
        try:
            principal = principal_for(c, tenant, key.get("user"), agent=key.get("agent"))
        except NotFound as e:  # a key whose user was removed is no credential
            raise UnauthorizedError("missing or invalid credentials") from e
    router.context["principal"] = principal
    return principal


def readers() -> tuple[str, ...] | None:
    """What the caller reads as: every query's readers clause (``None``: an admin, every file)."""
    return current_principal().tokens()


def visible(record: FileRecord) -> bool:
    """Whether the caller may see ``record``; an admin's read of a file not shared with them is audited."""
    principal = current_principal()
    if principal.is_admin and not can_read(record.readers, (TENANT, *principal.own_tokens())):
        log.info("admin read", tenant_id=record.tenant_id, file_id=record.file_id, by=principal.label)
    return can_read(record.readers, principal.tokens())


def may_change(record: FileRecord) -> bool:
    """Whether the caller may share, trash or erase ``record``: its owner, an admin, or anyone for a file
    nobody owns (from before users, or mail to the whole tenant)."""
    principal = current_principal()
    return principal.is_admin or record.owner is None or record.owner == principal.user


def record_in_tenant(file_id: str) -> FileRecord:
    """A file the caller may see; 404 for any other: another tenant's, one not shared with the caller and one
    that does not exist get the same answer."""
    try:
        record = container().repo.get(current_tenant(), file_id)
    except NotFound as e:  # the same answer for another tenant's file and for none at all
        raise NotFoundError("no such file") from e
    if record.deleted_at is not None or not visible(record):
        raise NotFoundError("no such file")
    return record


def changeable_in_tenant(file_id: str) -> FileRecord:
    """A file the caller may see and change (``may_change``); 403 for one they may only read."""
    record = record_in_tenant(file_id)
    if not may_change(record):
        raise ForbiddenError("only the file's owner or an admin may do this")
    return record


def admin_only() -> None:
    """403 unless the caller is an admin of its tenant."""
    if not current_principal().is_admin:
        raise ForbiddenError("only an admin of this tenant may do this")


def trashed_in_tenant(file_id: str) -> FileRecord:
    """A file of the caller's tenant that is in the trash; 404 for any other (another tenant's too)."""
    try:
        record = container().repo.get(current_tenant(), file_id)
    except NotFound as e:
        raise NotFoundError("no such file in the trash") from e
    if record.status is not Status.TRASHED or not visible(record):
        raise NotFoundError("no such file in the trash")
    if not may_change(record):
        raise ForbiddenError("only the file's owner or an admin may do this")
    return record


def public(record: FileRecord) -> FileOut:
    return FileOut.model_validate({**record.model_dump(exclude=set(HIDDEN)), "came_from": record.came_from})


def named(tenant: str, filters: SearchFilters) -> SearchFilters:
    """The filters of a search, an answer or a briefing as the index applies them: threads and contacts may
    be given by subject / name / address as well as by id, and the caller reads as its principal (every
    leg filters by its readers inside the query)."""
    c = container()
    return filters.model_copy(
        update={
            "thread_id": names.thread_id(c, tenant, filters.thread_id),
            "contact_id": names.contact_id(c, tenant, filters.contact_id),
        }
    ).read_as(readers())


def to_json(value: Any) -> str:
    return json.dumps(value, default=str)
