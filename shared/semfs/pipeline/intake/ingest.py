"""Ingest: register a file and run ProcessFile for it; resume what a crash left unfinished."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING

from semfs.domain.errors import SemfsError
from semfs.domain.ids import execution_name
from semfs.domain.models import FileRecord, utcnow
from semfs.domain.outcomes import Status
from semfs.pipeline.intake.register import Provenance, Registered, register
from semfs.pipeline.stages.state import PipelineState

if TYPE_CHECKING:
    from semfs.ports import Container


def process(c: Container, record: FileRecord) -> FileRecord:
    """Start (locally: run) the state machine for a registered, unfinished file."""
    state = PipelineState(tenant_id=record.tenant_id, file_id=record.file_id, attempt=record.attempt)
    c.starter.start(execution_name(record.tenant_id, record.file_id, record.attempt), state.model_dump(mode="json"))
    return c.repo.get(record.tenant_id, record.file_id)


def retry(c: Container, tenant_id: str, file_id: str) -> FileRecord:
    """Run a failed file again — or one whose enrichment fell back while the LLM was unavailable
    (``enrich_again``) — as a new attempt (a new execution name: Step Functions refuses to start a name
    it has seen, even for a closed execution)."""
    from semfs.domain.errors import InvalidRequest
    from semfs.domain.outcomes import Status
    from semfs.pipeline.record_update import update

    record = c.repo.get(tenant_id, file_id)
    if record.status is not Status.FAILED and not (record.enrich_again and record.status is Status.INDEXED):
        raise InvalidRequest("only failed files can be retried")
    reset = update(
        c.repo,
        tenant_id,
        file_id,
        lambda r: r.evolve(status=Status.RECEIVED, outcome=None, error=None, attempt=r.attempt + 1),
        seen=record,
    )
    return process(c, reset)


def ingest_bytes(
    c: Container, tenant_id: str, data: bytes, filename: str, prov: Provenance | None = None
) -> Registered:
    """Register and process one file. A file registered before and already finished is a no-op;
    one left unfinished (a crash) is processed again — every stage is idempotent. A bundle (a zip, a tar,
    a winmail.dat, a PDF with files inside) first registers and processes each file it holds
    (``bundles.unpack``)."""
    from semfs.pipeline.intake.bundles import unpack

    kind = _kind(data, filename)
    prov = _with_people(data, kind, prov or Provenance())
    reg = register(c, tenant_id, data, filename, prov)
    if reg.record.status.terminal:
        return reg
    if unpack(c, tenant_id, reg, data, filename, kind, prov, ingest_bytes):  # a crash half-way: the rest, now
        reg = Registered(c.repo.get(tenant_id, reg.record.file_id), created=True)  # it lists its members now
    return Registered(process(c, reg.record), created=reg.created)


def _kind(data: bytes, filename: str) -> str | None:
    """What the sniffer says the file is (None: one it refuses; its extraction says why)."""
    from semfs.extractors.sniff import sniff

    try:
        return sniff(data, filename).kind
    except SemfsError:
        return None


def _with_people(data: bytes, kind: str | None, prov: Provenance) -> Provenance:
    """A contact card (``.vcf``) or a calendar (``.ics``) brings the people it names as the file's contacts
    (``Name <address>``, as ``--contact`` does): each becomes a contact of the tenant, the file one of theirs."""
    from semfs.extractors.text import decode, people_of

    if kind not in ("vcard", "calendar"):
        return prov
    people = people_of(kind, decode(data))
    return replace(prov, contacts=list(dict.fromkeys([*prov.contacts, *people]))) if people else prov


def resume(c: Container) -> list[FileRecord]:
    """Finish every file left in a non-terminal status (all tenants)."""
    return [process(c, record) for record in c.repo.unfinished()]


# A file registered but never started (a process killed between registering it and queueing its
# execution) sits in ``received`` with no execution. One that waited this long was not about to start.
STRANDED_AFTER = timedelta(seconds=60)


def stranded(c: Container, records: list[FileRecord] | None = None) -> list[FileRecord]:
    """Of ``records`` (default: every unfinished file), those ``received`` over ``STRANDED_AFTER`` ago
    with no execution queued or running. Behind an admission gate (AWS) a received file may be waiting
    for a slot in the admission queue, which redelivers it: none is stranded there."""
    if c.settings.aws.gate_table:
        return []
    cutoff = utcnow() - STRANDED_AFTER
    candidates = c.repo.unfinished() if records is None else records
    return [
        r
        for r in candidates
        if r.status is Status.RECEIVED
        and r.updated_at < cutoff
        and not c.starter.running(execution_name(r.tenant_id, r.file_id, r.attempt))
    ]


def restart_stranded(c: Container) -> list[FileRecord]:
    """Start the execution each stranded file never got (named per attempt: a duplicate is a no-op)."""
    return [process(c, r) for r in stranded(c)]
