"""Liveness, the feature switches, the queue and the status counts."""

from __future__ import annotations

from semfs.api.models import (
    CapabilitiesOut,
    Health,
    JobsOut,
    ProtectedResourceOut,
    StatusOut,
)
from semfs.api.request import container, current_tenant, new_router, ok, public_base, readers
from semfs.domain.errors import NotFound
from semfs.pipeline.capabilities import capabilities
from semfs.pipeline.catalogue.files import status_rows, status_warnings
from semfs.pipeline.catalogue.jobs import jobs_view

router = new_router()


@router.get(
    "/health",
    summary="Liveness",
    responses={200: {"description": "Up", "content": {"application/json": {"model": Health}}}},
)
def health() -> Health:
    return Health(status="ok")


WELL_KNOWN = "/.well-known/oauth-protected-resource"


# An MCP client that meets a 401 at /mcp looks here (the MCP authorization specification: RFC 9728's path under
# the endpoint's path first, then the host's root; API Gateway's authorizer sends no WWW-Authenticate header to
# point elsewhere). No credentials: this is how a client without one learns where to get it.
@router.get(
    f"{WELL_KNOWN}/mcp",
    summary="Where an MCP client signs in: the MCP endpoint's protected-resource metadata (RFC 9728)",
    responses=ok(ProtectedResourceOut),  # 404: no sign-in here, this server takes API keys
)
def mcp_protected_resource() -> ProtectedResourceOut:
    aws = container().settings.aws
    if not aws.oauth_issuer:
        raise NotFound("no sign-in for MCP clients here: send an API key (semfs keys create)")
    return ProtectedResourceOut(
        resource=f"{public_base()}/mcp", authorization_servers=[aws.oauth_issuer], scopes_supported=aws.oauth_scopes
    )


@router.get(
    WELL_KNOWN,
    summary="The same metadata at the host's root, where a client looks second",
    responses=ok(ProtectedResourceOut),
)
def protected_resource() -> ProtectedResourceOut:
    return mcp_protected_resource()


@router.get(
    "/capabilities", summary="What this server does: each feature on, or off and why", responses=ok(CapabilitiesOut)
)
def capabilities_route() -> CapabilitiesOut:
    return CapabilitiesOut.model_validate(capabilities(container()).model_dump())


@router.get("/jobs", summary="Files queued and in flight, per stage", responses=ok(JobsOut))
def jobs() -> JobsOut:
    return JobsOut.model_validate(jobs_view(container(), current_tenant(), readers()).model_dump())


@router.get("/status", summary="Files by status and outcome", responses=ok(StatusOut))
def status() -> StatusOut:
    tenant = current_tenant()
    rows = status_rows(container(), tenant, readers())
    counts = [{"status": s, "outcome": o, "count": n} for s, o, n in rows]
    return StatusOut.model_validate({"tenant": tenant, "counts": counts, "warnings": status_warnings(rows)})
