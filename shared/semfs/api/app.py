"""The API resolver, one for both hosts: API Gateway → ``search_api`` in AWS, ``semfs serve`` locally.

The routes live in ``api/routes/`` (one Powertools ``Router`` per area) and are joined here with
``include_router``; what a route reads from its request (the container, the tenant, a file of that
tenant) is in ``api/request.py``. This module holds what applies to every route: one exception handler
per error family, and the OpenAPI document.

The tenant comes from the verified credential only: the JWT claims the API Gateway authorizer put in
the event (AWS), or the tenant the local host attached after checking the API key. Never from a
body, query string or header. A file of another tenant is a 404. Every error, whatever its status,
has one body: ``{"error": {"code", "message", "details"}}``.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError, ServiceError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.models import HTTPBearer, Server
from pydantic import BaseModel

from semfs.api import request
from semfs.api.models import FileFilters
from semfs.api.resolver import ConcurrentResolver
from semfs.api.routes import ROUTERS
from semfs.api.routes.upload import UPLOAD_BODY, UPLOAD_QUERY
from semfs.domain.errors import Busy, RequestError, RetryableError, SemfsError

app = ConcurrentResolver(enable_validation=True)  # many requests at once on the local host's threads
for router in (request.router, *ROUTERS):
    app.include_router(router)

# query parameters a route reads from the event itself rather than as a declared parameter
READ_BY_ROUTE: dict[str, frozenset[str]] = {
    "/files": frozenset({"filename", "sha256"}),
    "/docs": frozenset({"format"}),
}


def _declared_query(route: Any) -> set[str]:
    names: set[str] = set()
    for param in route.dependant.query_params if route.dependant else []:
        kind = getattr(param.field_info, "annotation", None)
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            names |= set(kind.model_fields)  # a query model: each field is a parameter
        else:
            names.add(param.alias)
    return names | READ_BY_ROUTE.get(route.path, frozenset())


def _no_unknown_query(app: ConcurrentResolver, next_middleware: Any) -> Response[str]:
    """A query parameter no route declares is a 422 naming it, as an unknown body field is: a misspelt
    ``?tags=x`` listed every file, as if there were no filter."""
    route = app.context.get("_route")
    if route is None or not any(route is r for r in app._static_routes + app._dynamic_routes):
        return next_middleware(app)  # type: ignore[no-any-return]  # no route of ours: the 404 answers
    event = app.current_event
    given = set(event.query_string_parameters or {})
    unknown = sorted(given - _declared_query(route))
    if unknown:
        known = sorted(_declared_query(route))
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else (f"; it takes {', '.join(known)}" if known else "")
        return _error(422, "validation_error", f"unknown query parameter {unknown[0]!r}{hint}")
    return next_middleware(app)  # type: ignore[no-any-return]


app.use(middlewares=[_no_unknown_query])


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


# no credentials (also /openapi.json and /docs, which are not in the document); the protected-resource metadata
# tells a client without one where to sign in
PUBLIC_ROUTES = ("/health", "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp")


def _error(
    status: int,
    code: str,
    message: str,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> Response[str]:
    body = json.dumps({"error": {"code": code, "message": message, "details": details or []}}, default=str)
    return Response(status_code=status, content_type=content_types.APPLICATION_JSON, body=body, headers=headers)


# One handler per error family instead of a try/except in every route. A domain reason is one line
# written for the caller and never quotes document text.
@app.exception_handler(RequestError)  # type: ignore[untyped-decorator]
def _request(e: RequestError) -> Response[str]:
    headers = {"Retry-After": str(e.retry_after_s)} if isinstance(e, Busy) else None
    return _error(e.http_status, e.request_outcome.value.lower(), e.reason, headers=headers)


@app.exception_handler(RequestValidationError)  # type: ignore[untyped-decorator]
def _validation(e: RequestValidationError) -> Response[str]:
    details = [
        {"loc": [str(x) for x in err.get("loc", ())], "msg": str(err.get("msg", "")), "type": str(err.get("type"))}
        for err in e.errors()
    ]
    first = details[0] if details else {"loc": [], "msg": "invalid request"}
    where = ".".join(_field_path(first["loc"]))
    return _error(422, "validation_error", f"{where}: {first['msg']}" if where else str(first["msg"]), details)


def _field_path(loc: Sequence[str]) -> list[str]:
    """Where a validation error is, as the client named it: ``until``, not ``query.filters.until`` (a query
    model's fields are parameters of their own), and ``filters.tags`` in a body."""
    parts = list(loc)
    kind = parts.pop(0) if parts and parts[0] in ("body", "query", "path", "header") else ""
    if kind == "query" and len(parts) > 1:
        parts.pop(0)  # the query model's parameter name
    return parts


@app.exception_handler(ServiceError)  # type: ignore[untyped-decorator]
def _service(e: ServiceError) -> Response[str]:
    codes = {400: "bad_request", 401: "unauthorized", 404: "not_found", 413: "too_large"}
    return _error(e.status_code, codes.get(e.status_code, "error"), str(e.msg))


@app.exception_handler(SemfsError)  # type: ignore[untyped-decorator]
def _semfs(e: SemfsError) -> Response[str]:
    return _error(503 if isinstance(e, RetryableError) else 500, e.outcome.value.lower(), e.reason)


def has_route(path: str) -> bool:
    """Whether any route (of any method) answers ``path``: a host answers other paths 404 before it
    asks for a key (a mistyped address is not a question of who is asking)."""
    return any(route.rule.match(path) for route in app._static_routes + app._dynamic_routes)


@app.not_found
def _no_route(e: Exception) -> Response[str]:
    # Powertools sends a route's own NotFoundError ("no such file") here too, not only unknown paths
    said = str(e.msg) if isinstance(e, NotFoundError) and e.msg != NotFoundError().msg else ""
    return _error(404, "not_found", said or "no such route")


def openapi_document(uploads_in_body: bool = True) -> dict[str, Any]:
    """The one OpenAPI document: served at /openapi.json and behind /docs. The upload's multipart body
    is described here because the route reads it itself: required on the local host, no body at all in
    AWS (``uploads_in_body=False``: the route answers a presigned POST)."""
    schema = app.get_openapi_schema(**OPENAPI)
    document: dict[str, Any] = json.loads(schema.model_dump_json(by_alias=True, exclude_none=True))
    document["paths"]["/files"]["post"]["requestBody"] = {**UPLOAD_BODY, "required": uploads_in_body}
    if not uploads_in_body:  # AWS: the presigned POST's parameters
        document["paths"]["/files"]["post"]["parameters"] = UPLOAD_QUERY
    for path in PUBLIC_ROUTES:
        for op in document["paths"][path].values():
            op["security"] = []  # no credentials needed
            op["responses"].pop("422", None)
    _query_model_schemas(document)
    document["paths"]["/mcp"] = MCP_PATH
    return document


def _error_ref(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorOut"}}},
    }


# The MCP endpoint (mcp_server.McpOverHttp locally, lambda_support in AWS): its body is the Model Context
# Protocol's JSON-RPC, which the official SDK reads and answers; described here so that a client and a
# reviewer find it beside the routes (issue 48), not as a schema of each MCP message.
MCP_PATH: dict[str, Any] = {
    "post": {
        "summary": "MCP over streamable HTTP (stateless): the same tools as `semfs mcp`",
        "description": "A JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, "
        "…). Send `Accept: application/json, text/event-stream`. Each request stands alone: no session, no "
        "stream left open; it runs under the request deadline.",
        "operationId": "mcp",
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": {"type": "object", "description": "a JSON-RPC 2.0 message"}}},
        },
        "responses": {
            "200": {"description": "The JSON-RPC answer (application/json or one text/event-stream message)"},
            "202": {"description": "A notification or a response, accepted (no body)"},
            "400": {"description": "Not a JSON-RPC message the SDK accepts"},
            "401": _error_ref("No key, or a key (a token in AWS) that is not valid"),
            "406": {"description": "The Accept header does not list application/json and text/event-stream"},
            "503": _error_ref("MCP is switched off here (SEMFS_ENABLE_MCP=false)"),
            "504": _error_ref("The exchange ran past the request deadline"),
        },
    },
    **{
        method: {
            "summary": "Not served: a stateless server has no stream to open and no session to end",
            "operationId": f"mcp_{method}",
            "responses": {"405": _error_ref("Use POST (the answer says Allow: POST)")},
        }
        for method in ("get", "delete")
    },
}


# the query strings read into one model, by route (Powertools expands a model's fields into parameters)
QUERY_MODELS: dict[tuple[str, str], type[BaseModel]] = {
    ("/files", "get"): FileFilters,
    ("/files/facets", "get"): FileFilters,
}


def _query_model_schemas(document: dict[str, Any]) -> None:
    """Powertools writes each field of a query model as a bare string or boolean; give each the schema its
    model states (the enums of ``source_type`` and ``status``, the date format of ``since``), so that a
    client or fuzzer reading the document sends what the route accepts."""
    for (path, method), model in QUERY_MODELS.items():
        schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
        document["components"]["schemas"].update(schema.get("$defs", {}))
        for param in document["paths"][path][method]["parameters"]:
            if param["in"] == "query" and param["name"] in schema["properties"]:
                param["schema"] = schema["properties"][param["name"]]


@app.get("/openapi.json", include_in_schema=False)
def openapi() -> Response[str]:
    document = openapi_document(uploads_in_body=request.container().settings.backend == "local")
    return Response(status_code=200, content_type=content_types.APPLICATION_JSON, body=json.dumps(document))


@app.get("/docs", include_in_schema=False)
def docs() -> Response[str]:
    """Swagger UI over the same document (its assets ship inside Powertools: no network needed)."""
    from aws_lambda_powertools.event_handler.openapi.swagger_ui.html import generate_swagger_html

    spec = json.dumps(openapi_document(uploads_in_body=request.container().settings.backend == "local"))
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
