"""In-process entry point for agents: store an artifact with the provenance of the run that made it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance

if TYPE_CHECKING:
    from semfs.domain.access import Access
    from semfs.domain.models import FileRecord
    from semfs.ports import Container


def ingest_agent_file(
    data: bytes | str,
    filename: str,
    *,
    agent: str,
    run_id: str | None = None,
    tenant: str = "default",
    thread_id: str | None = None,
    contact_ids: Sequence[str] = (),
    derived_from: Sequence[str] = (),
    tags: Sequence[str] = (),
    container: Container | None = None,
    access: Access | None = None,
    viewer: tuple[str, ...] | None = None,
) -> FileRecord:
    """Ingest a file an agent produced (``source_type=agent_generated``) and return its record.

    ``derived_from`` names the file ids the artifact was made from; with ``agent`` and ``run_id``
    it is kept as provenance, so the file can be filtered and traced back. Re-running the same
    agent run with the same bytes is a no-op. ``access``: who may read it (``artifact_access``: at most what
    the user the agent acts for may see of every file it was made from); none given, the whole tenant.
    """
    own = container is None
    if container is None:
        from semfs.bootstrap import build_container
        from semfs.config import Settings

        container = build_container(Settings())
    try:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        prov = Provenance.from_caller(  # an invalid tag is the agent's to hear about, not to lose quietly
            source_type="agent_generated",
            source_key=f"agent:{agent}:{run_id or '-'}:{filename}",
            thread_id=thread_id,
            contact_ids=list(contact_ids),
            tags=tags,
            uploaded_by=agent,
            upload_context=f"produced by agent {agent}" + (f" in run {run_id}" if run_id else ""),
            extra={"agent": agent, "run_id": run_id, "derived_from": list(derived_from)},
            access=access,
            viewer=viewer,
        )
        return ingest_bytes(container, tenant, raw, filename, prov).record
    finally:
        if own:
            container.close()


def context_for(
    subject: str,
    body: str = "",
    *,
    tenant: str = "default",
    contact_id: str | None = None,
    thread_id: str | None = None,
    limit: int = 5,
    container: Container | None = None,
) -> list[dict[str, object]]:
    """The briefing ``POST /context`` returns, for agents running in the same process: the files
    relevant to a message (filename, title, summary, why it matched). Empty for near-empty text."""
    from semfs.domain.models import SearchFilters
    from semfs.pipeline.query.ask import context

    own = container is None
    if container is None:
        from semfs.bootstrap import build_container
        from semfs.config import Settings

        container = build_container(Settings())
    try:
        filters = SearchFilters(contact_id=contact_id, thread_id=thread_id)
        return [item.model_dump() for item in context(container, tenant, subject, body, filters, limit)]
    finally:
        if own:
            container.close()
