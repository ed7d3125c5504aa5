"""Enrich: title, summary, auto-tags (+ context tags), and the change summary against the previous version."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from semfs.domain.changes import change_summary, version_link
from semfs.domain.enrichment import minimal_enrichment
from semfs.domain.errors import EnrichmentFailed, EnrichmentUnavailable, NotFound
from semfs.domain.models import FileRecord
from semfs.domain.outcomes import Status
from semfs.domain.tags import contact_tag, is_generic, merge_tags
from semfs.observability import get_logger
from semfs.pipeline.documents import load_document
from semfs.pipeline.file_entities import record_entities
from semfs.pipeline.stages.state import PipelineState
from semfs.pipeline.stages.unit_of_work import stage
from semfs.ports.enricher import EnrichInput

if TYPE_CHECKING:
    from semfs.ports import Container
log = get_logger(__name__)


def context_tags(record: FileRecord) -> list[str]:
    tags: list[str] = []
    subject = record.provenance.get("thread_subject")
    if isinstance(subject, str) and subject.strip():
        tags.append(subject)
    for contact in record.provenance.get("contacts", []) or []:
        if isinstance(contact, dict):
            org = contact.get("organisation") or contact_tag(str(contact.get("name") or contact.get("email") or ""))
            tags.append(str(org))
        else:
            tags.append(contact_tag(str(contact)))
    return merge_tags(tags)


PREVIOUS_WAIT_S = 30.0  # how long a new version waits for its previous version's text (both in flight)
_NOT_READ_YET = frozenset({Status.RECEIVED, Status.EXTRACTING, Status.OCR})


def _previous_text(c: Container, record: FileRecord) -> tuple[str | None, bool]:
    """The previous version's text, and whether it is known. Two files of one lineage can be in the pipeline at
    once (``semfs ingest`` has two in flight, a server several): the previous version may still be being read,
    and judging the link against no text detached the new version into a lineage of its own, two "version 1"s
    (issue 47.11's fresh-clone run). So while the previous version is unread, its text is waited for, at most
    ``PREVIOUS_WAIT_S``; past that the link is kept unjudged. A previous version that has no text (it failed,
    or was skipped) is known to have none."""
    assert record.previous_version_id is not None
    until = time.monotonic() + PREVIOUS_WAIT_S
    while True:
        try:
            previous = c.repo.get(record.tenant_id, record.previous_version_id)
        except NotFound:
            return None, True
        if previous.text_key is not None:
            try:
                return load_document(c, previous).text, True
            except NotFound:
                return None, True
        if previous.status not in _NOT_READ_YET:
            return None, True
        if time.monotonic() >= until:
            log.warning("previous version still unread; link kept", file_id=record.file_id)
            return None, False
        time.sleep(0.05)


def run(state: PipelineState, c: Container) -> PipelineState:
    """Enrich the document; an LLM failure falls back to the extractive enricher (OK_ENRICH_FALLBACK)."""
    fallback = False
    with stage("enrich", state, c, Status.EMBEDDING) as work:
        record = work.record
        from semfs.pipeline.vocabulary import known_tags, prefer_existing, remember

        doc = load_document(c, record)
        # the enricher is shown the closest existing vocabulary, and near-duplicates are mapped onto it
        item = EnrichInput(
            document=doc,
            filename=record.filename,
            existing_tags=known_tags(c, record.tenant_id),
            came_from=record.came_from if record.source_type == "upload" else "",
        )
        again = False
        try:
            if state.enrich_extractive:  # the model timed the function out: no model call this time
                raise EnrichmentUnavailable("the model timed the Enrich function out")
            enrichment = c.enricher.enrich(item)
        except EnrichmentFailed as e:
            log.warning("enricher failed; extractive fallback", file_id=record.file_id, error=type(e).__name__)
            fallback = True
            again = isinstance(e, EnrichmentUnavailable)  # throttled: not final, enriched again later
            try:  # (the extractive enricher is the default: when it was the one that failed, not again)
                if c.enricher is c.fallback_enricher:
                    raise
                enrichment = c.fallback_enricher.enrich(item)
            except EnrichmentFailed:  # past its deadline too: the file's name is its title
                log.warning("extractive fallback failed; title from the name", file_id=record.file_id)
                enrichment = minimal_enrichment(record.filename)
        changes = None
        previous_text, known = _previous_text(c, record) if record.previous_version_id else (None, False)
        if known:
            link = version_link(record, previous_text, doc.text)
            if link:  # the same place, but not the same document: it starts its own lineage
                work.set(**link)
                log.info(
                    "implicit version detached", file_id=record.file_id, similarity=link["provenance"]["similarity"]
                )
            elif previous_text is not None:
                changes = change_summary(previous_text, doc.text)
        topical = [t for t in merge_tags(enrichment.auto_tags) if not is_generic(t)]
        auto_tags = prefer_existing(c, record.tenant_id, merge_tags(context_tags(record), topical))
        remember(c, record.tenant_id, record.file_id, [*record.tags, *auto_tags])
        work.set(
            title=enrichment.title,
            summary=enrichment.summary,
            auto_tags=auto_tags[:12],
            entities=record_entities(c, record, doc, enrichment),
            change_summary=changes,
            enrich_again=again,
        )
    return state.model_copy(update={"enrich_fallback": fallback or state.enrich_fallback})
