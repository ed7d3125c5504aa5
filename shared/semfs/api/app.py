"""The API router. The tenant comes from the verified JWT claims, never from the request.

This first cut serves ``/health``, ``POST /search`` and ``GET /files/{id}``; the API issue adds the
remaining routes, ``/ask``, ``/context`` and the local host.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver
from aws_lambda_powertools.event_handler.exceptions import NotFoundError, UnauthorizedError

from semfs.domain.errors import NotFound
from semfs.domain.models import SearchRequest
from semfs.lambda_support import get_container
from semfs.pipeline.search import search

app = APIGatewayHttpResolver(enable_validation=True)


def current_tenant() -> str:
    """The caller's tenant from the authorizer's JWT claims; 401 without one."""
    claims: dict[str, Any] = (
        app.current_event.raw_event.get("requestContext", {}).get("authorizer", {}).get("jwt", {}).get("claims", {})
    )
    tenant = claims.get(get_container().settings.tenant_claim)
    if not isinstance(tenant, str) or not tenant:
        raise UnauthorizedError("no tenant in the token")
    return tenant


@app.get("/health")
def health() -> dict[str, str]:
    return {"status": "ok"}


@app.post("/search")
def search_route(request: SearchRequest) -> dict[str, Any]:
    return search(get_container(), current_tenant(), request).model_dump(mode="json")


@app.get("/files/<file_id>")
def get_file(file_id: str) -> dict[str, Any]:
    tenant = current_tenant()
    try:
        record = get_container().repo.get(tenant, file_id)
    except NotFound as e:  # another tenant's file is a 404 too
        raise NotFoundError("no such file") from e
    return record.model_dump(mode="json", exclude={"blob_key", "text_key", "chunks_key", "source_key"})
