"""Liveness, the feature switches, the queue and the status counts."""

from __future__ import annotations

from semfs.api.models import (
    CapabilitiesOut,
    Health,
    JobsOut,
    StatusOut,
)
from semfs.api.request import container, current_tenant, new_router, ok, readers
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
