"""A bundle's members, each a file of its own (``extractors/bundles.py`` says what a bundle is).

When a zip, tar, TNEF or a PDF with embedded files is registered, its members are registered too, each with
the bundle's provenance (who sent it, its thread, its readers and tags) and where it sat: ``inside NAME: PATH``
as its context and ``{"bundle": {file_id, name, path}}`` in its provenance. A member's identity is the
bundle's plus its path, so the same bundle again creates nothing, and a new version of the bundle (the same
name uploaded again, the same attachment re-sent in a thread) makes each changed member the next version of
the one before. A message saved as a file (``.eml``) is a bundle too: its text is its own, its attachments are
its members; a bundle inside a bundle is unpacked in turn, up to ``SEMFS_MAX_BUNDLE_DEPTH`` deep.

The whole bundle is checked before the first member is stored: a bomb or one with too many members stores
none, and the bundle's own file ends with the outcome saying why (its extraction applies the same bounds).
The bundle's record lists its members (``provenance["members"]``: path, file id, outcome).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from semfs.domain.errors import SemfsError
from semfs.extractors import bundles
from semfs.extractors.bundles import Member
from semfs.extractors.limits import ArchiveLimits, archive_limits
from semfs.observability import get_logger
from semfs.pipeline.record_update import update

if TYPE_CHECKING:
    from semfs.pipeline.intake.register import Provenance, Registered
    from semfs.ports import Container

log = get_logger(__name__)
DEPTH = "bundle_depth"
MAX_LISTED = 1_000  # members named on the bundle's record


def _entries(c: Container, data: bytes, kind: str, limits: ArchiveLimits) -> Iterable[tuple[Member, bytes]]:
    """The bundle's members and their bytes, checked whole first; none when it is no bundle or breaks its
    bounds (its extraction then says why). A PDF's embedded files are read in the bounded extraction worker
    (pdfium is native code); zip, tar, TNEF and mail are read here by Python's own parsers, a member at a time."""
    if kind == "pdf":
        if b"/EmbeddedFile" not in data and b"/ObjStm" not in data:
            return ()  # no embedded file in sight, and no compressed object stream one could hide in
        timeout = c.settings.limits.extract_timeout_s
        found: list[tuple[Member, bytes]] = c.extractor.run(bundles.pdf_attachments, (data, limits), timeout)
        return found
    try:
        bundle = bundles.bundle_kind(data, kind)
    except (ValueError, OSError):
        return ()
    if bundle is None:
        return ()
    bundles.members(data, bundle, limits)  # the whole bundle within its bounds before anything is stored
    return bundles.read(data, bundle, limits)


def _member_provenance(prov: Provenance, reg: Registered, name: str, path: str, depth: int) -> Provenance:
    record = reg.record
    key = f"{record.source_key}!{path}"
    return replace(
        prov,
        source_key=key,
        version_key=f"{prov.version_key}!{path}" if prov.version_key else None,
        previous_version_id=None,
        upload_context=f"inside {name}: {path}"[:300],
        extra={**prov.extra, "bundle": {"file_id": record.file_id, "name": name, "path": path}, DEPTH: depth},
        by_caller=False,  # the bundle's caller was checked when the bundle came in
    )


def unpack(
    c: Container,
    tenant: str,
    reg: Registered,
    data: bytes,
    filename: str,
    kind: str | None,
    prov: Provenance,
    ingest: Callable[[Container, str, bytes, str, Provenance], Registered],
) -> int:
    """Register and process each member of a newly registered bundle (``kind``: what the sniffer said it is;
    module docstring); how many there were.
    A bundle that is none, is nested too deep, or breaks its bounds unpacks nothing (its extraction says why).
    ``ingest`` takes each member in (``ingest.ingest_bytes``, which unpacks a member that is a bundle in turn)."""
    depth = int(prov.extra.get(DEPTH, 0))
    limits = archive_limits(c.settings.limits)
    if kind is None or depth >= limits.max_depth:
        return 0
    try:
        entries = _entries(c, data, kind, limits)
    except SemfsError as e:  # a bomb, a crowd, a corrupt bundle
        log.info("bundle not unpacked", file_id=reg.record.file_id, outcome=str(e.outcome))
        return 0
    except (TimeoutError, MemoryError, ChildProcessError) as e:  # the worker gave up on the PDF: so will Extract
        log.info("bundle not unpacked", file_id=reg.record.file_id, error=type(e).__name__)
        return 0
    listed: list[dict[str, Any]] = []
    for member, body in entries:
        name = member.path.rsplit("/", 1)[-1]
        got = ingest(c, tenant, body, name, _member_provenance(prov, reg, filename, member.path, depth + 1))
        listed.append({"path": member.path, "file_id": got.record.file_id, "outcome": str(got.record.outcome)})
    _list_members(c, tenant, reg, listed)
    log.info("bundle unpacked", file_id=reg.record.file_id, members=len(listed), depth=depth)
    return len(listed)


def _list_members(c: Container, tenant: str, reg: Registered, listed: list[dict[str, Any]]) -> None:
    def change(record: Any) -> Any:
        extra = dict(record.provenance)
        extra["members"] = listed[:MAX_LISTED]
        extra["member_count"] = len(listed)
        return record.model_copy(update={"provenance": extra})

    update(c.repo, tenant, reg.record.file_id, change)
