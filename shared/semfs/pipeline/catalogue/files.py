"""The stored files of a tenant: manual tags, deletion (to the trash: ``catalogue/trash.py``), cancelling a
queued file, the status counts, the facet counts of a listing, and walking
every record."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from semfs.domain.errors import InvalidRequest
from semfs.domain.models import ACTIVITY_MAX, Activity, FileRecord
from semfs.domain.outcomes import Outcome, Status
from semfs.domain.results import FacetCounts, FacetValue
from semfs.domain.tags import manual_tag, slugify
from semfs.extractors.formats import type_label
from semfs.pipeline import names
from semfs.pipeline.catalogue import trash
from semfs.pipeline.documents import index_record
from semfs.pipeline.file_entities import labels as entity_labels
from semfs.pipeline.record_update import update
from semfs.ports.repository import RecordQuery

if TYPE_CHECKING:
    from semfs.ports import Container


def status_rows(
    c: Container, tenant_id: str | None, readers: tuple[str, ...] | None = None
) -> list[tuple[str, str | None, int]]:
    """``(status, outcome, count)`` rows in one order for every caller (CLI, API, web page). A caller who
    reads as ``readers`` counts the files shared with them (the stored counts are the whole tenant's)."""
    if readers is not None and tenant_id is not None:
        tally = Counter(
            (r.status.value, r.outcome.value if r.outcome else None)
            for r in iter_records(c, tenant_id, readers=readers)
        )
        return sorted(((s, o, n) for (s, o), n in tally.items()), key=lambda r: (r[0], r[1] or ""))
    counts = c.repo.counts(tenant_id)
    return sorted(((s, o, n) for (s, o), n in counts.items()), key=lambda r: (r[0], r[1] or ""))


def status_warnings(rows: list[tuple[str, str | None, int]]) -> list[str]:
    """What the counts say a person must fix: files that failed on a refused model key."""
    refused = sum(n for _, o, n in rows if o == Outcome.FAILED_CONFIG.value)
    if not refused:
        return []
    return [
        f"{refused} file(s) failed because the model endpoint refused semfs's API key: set the key "
        "(docs/deploy.md, 'Rotating the LLM key'); the reconcile sweep then runs them again"
    ]


# the entities a listing is narrowed by: who and which document, not every amount and date it names
FACET_KINDS = ("person:", "organisation:", "identifier:", "email:")
FACET_CAP = 10_000  # records a facet count reads at most (the page says when it counted only these)


def facets(c: Container, query: RecordQuery, top: int = 12) -> FacetCounts:
    """Counts of the files ``query`` matches, per tag, type, source, thread, contact, month and entity (the
    people, organisations, identifiers and addresses they name), each with a label a person reads (a
    thread's subject, a contact's name): the ``top`` values of each, and in ``more`` how many each left
    out. Reads the matching records page by page, at most ``FACET_CAP`` of them (``capped`` then says so)."""
    from dataclasses import replace

    kinds = ("tag", "type", "source", "thread", "contact", "month", "entity")
    counters: dict[str, Counter[str]] = {k: Counter() for k in kinds}
    subjects: dict[str, str | None] = {}
    seen = 0
    page = replace(query, order="id", limit=500, offset=0, after=None)
    while seen < FACET_CAP:
        records = c.repo.query(page)
        for r in records[: FACET_CAP - seen]:
            counters["tag"].update(list(dict.fromkeys([*r.tags, *r.auto_tags])))  # a person's tags first, among ties
            counters["type"][r.mime_type] += 1
            counters["source"][r.source_type] += 1
            if r.thread_id:
                counters["thread"][r.thread_id] += 1
                subjects.setdefault(r.thread_id, names.record_subject(r))  # an upload's thread has no mail thread
            counters["contact"].update(list(dict.fromkeys(r.contact_ids)))
            counters["month"][r.created_at.strftime("%Y-%m")] += 1
            counters["entity"].update(e for e in r.entities if e.startswith(FACET_KINDS))
        seen += min(len(records), FACET_CAP - seen)
        if len(records) < 500:
            break
        page = replace(page, after=records[-1].file_id)
    top_threads = {t: subjects.get(t) for t, _ in counters["thread"].most_common(top)}
    top_contacts = [k for k, _ in counters["contact"].most_common(top)]
    thread_names, people = names.labels(c, query.tenant_id, top_threads, top_contacts)
    top_entities = [k for k, _ in counters["entity"].most_common(top)]
    named: dict[str, dict[str, str]] = {
        "type": {m: type_label(m) for m in counters["type"]},
        "thread": thread_names,
        "contact": people,
        "entity": entity_labels(c, query.tenant_id, top_entities),
    }
    values: dict[str, list[FacetValue]] = {}
    more = {name: len(counter) - top for name, counter in counters.items() if len(counter) > top}
    for name, counter in counters.items():
        ordered = (
            sorted(counter.items(), key=lambda kv: kv[0], reverse=True) if name == "month" else counter.most_common()
        )
        values[name] = [
            FacetValue(value=value, label=named.get(name, {}).get(value, value), count=n) for value, n in ordered[:top]
        ]
    return FacetCounts(total=seen, capped=seen >= FACET_CAP, more=more, **values)


def iter_records(
    c: Container, tenant_id: str, statuses: tuple[Status, ...] = (), readers: tuple[str, ...] | None = None
) -> Iterator[FileRecord]:
    """Every record of the tenant (in these statuses; shared with ``readers``, ``None``: all), a page at a time."""
    after: str | None = None
    while True:
        query = RecordQuery(tenant_id=tenant_id, readers=readers, statuses=statuses, limit=500, after=after)
        page = c.repo.query(query)
        yield from page
        if len(page) < 500:
            return
        after = page[-1].file_id


def set_tags(
    c: Container, tenant_id: str, file_id: str, add: list[str], remove: list[str], by: str | None = None
) -> FileRecord:
    """Edit manual tags, normalised like auto-tags (``Needs Review`` → ``needs-review``, the typed label
    kept for display) and validated (``InvalidRequest``), then refresh the file's index documents."""
    try:
        adding = [manual_tag(t) for t in add]
    except ValueError as e:
        raise InvalidRequest(str(e)) from e
    drop = {slugify(t) for t in remove} - {""}

    def edit(current: FileRecord) -> FileRecord:
        if current.deleted_at is not None:
            raise InvalidRequest("the file is deleted")
        tags = [t for t in current.tags if t not in drop]
        labels = {k: v for k, v in current.tag_labels.items() if k not in drop}
        for slug, label in adding:
            if slug not in tags:
                tags.append(slug)
            if label != slug:
                labels[slug] = label
        added = [labels.get(t, t) for t in tags if t not in current.tags]
        removed = [current.tag_labels.get(t, t) for t in current.tags if t not in tags]
        done = [Activity(action="tagged", detail=", ".join(added), by=by)] if added else []
        done += [Activity(action="untagged", detail=", ".join(removed), by=by)] if removed else []
        activity = [*current.activity, *done][-ACTIVITY_MAX:]
        return current.evolve(tags=tags, tag_labels=labels, activity=activity)

    # applied to the record as stored at write time: a pipeline stage writing meanwhile keeps its fields
    record = update(c.repo, tenant_id, file_id, edit)
    if record.status is Status.INDEXED:
        index_record(c, record, reembed_card=True)
    return record


def delete_file(
    c: Container,
    tenant_id: str,
    file_id: str,
    all_versions: bool = False,
    purge: bool = False,
    by: str | None = None,
) -> list[FileRecord]:
    """Move the file (or its lineage) to the trash (``trash.trash``); with ``purge``, erase it for good
    at once as well (an erasure request). Returns the records moved or purged."""
    moved = trash.trash(c, tenant_id, file_id, all_versions, by=by)
    if purge:
        targets = c.repo.lineage(tenant_id, c.repo.get(tenant_id, file_id).lineage_id) if all_versions else []
        ids = [r.file_id for r in targets] or [file_id]
        return trash.purge(c, tenant_id, ids) or moved
    return moved


def cancel(c: Container, tenant_id: str, file_id: str) -> FileRecord:
    """Take a queued file out of the queue before it is processed: it ends ``SKIPPED_CANCELLED``."""
    record = c.repo.get(tenant_id, file_id)
    if not c.jobs.cancel(tenant_id, file_id):
        raise InvalidRequest("only a queued file can be cancelled (this one is running or done)")
    return update(
        c.repo,
        tenant_id,
        file_id,
        lambda r: r.evolve(
            status=Status.SKIPPED, outcome=Outcome.SKIPPED_CANCELLED, error="cancelled before it was processed"
        ),
        seen=record,
    )
