"""Notes people write on a file version, and the file's history: what happened to it, newest first.

A note is stored with its record (both backends keep the whole record), goes into the file's card, so
keyword and meaning search find the file by what was said about it, and is one entry of the history.
The history joins what the pipeline's own fields say (received, processed, a new version of another
file) with what people did (``FileRecord.activity``: tags, notes, trash, restore, version links)."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from semfs.domain.errors import InvalidRequest, NotFound
from semfs.domain.models import NOTE_MAX_CHARS, NOTES_MAX, FileRecord, Note
from semfs.domain.outcomes import Status
from semfs.domain.results import HistoryEntry
from semfs.domain.text import normalise
from semfs.pipeline.documents import index_record
from semfs.pipeline.record_update import update

if TYPE_CHECKING:
    from semfs.ports import Container


def add_note(c: Container, tenant_id: str, file_id: str, text: str, author: str | None = None) -> FileRecord:
    """Add a note (its text normalised: NFC, no control characters, at most ``NOTE_MAX_CHARS``) and
    refresh the file's card so search finds it. ``InvalidRequest`` for an empty or too long note, a
    file with ``NOTES_MAX`` notes, or a deleted file."""
    body = normalise(text).strip()
    if not body:
        raise InvalidRequest("a note needs some text")
    if len(body) > NOTE_MAX_CHARS:
        raise InvalidRequest(f"a note holds at most {NOTE_MAX_CHARS} characters (this one has {len(body)})")
    note = Note(note_id="n_" + secrets.token_hex(6), text=body, author=author)

    def edit(current: FileRecord) -> FileRecord:
        if current.deleted_at is not None:
            raise InvalidRequest("the file is deleted")
        if len(current.notes) >= NOTES_MAX:
            raise InvalidRequest(f"a file holds at most {NOTES_MAX} notes: remove one first")
        return current.evolve(notes=[*current.notes, note], activity=current.did("noted", _gist(body), author))

    return _reindexed(c, update(c.repo, tenant_id, file_id, edit))


def remove_note(c: Container, tenant_id: str, file_id: str, note_id: str, by: str | None = None) -> FileRecord:
    """Remove one note by its id (``NotFound`` when the file has no such note)."""

    def edit(current: FileRecord) -> FileRecord:
        if current.deleted_at is not None:
            raise InvalidRequest("the file is deleted")
        gone = [n for n in current.notes if n.note_id == note_id]
        if not gone:
            raise NotFound("no such note on this file")
        kept = [n for n in current.notes if n.note_id != note_id]
        return current.evolve(notes=kept, activity=current.did("unnoted", _gist(gone[0].text), by))

    return _reindexed(c, update(c.repo, tenant_id, file_id, edit))


def history(c: Container, record: FileRecord) -> list[HistoryEntry]:
    """What happened to the file version, newest first (as the CLI, the API, MCP and the page all show it,
    like a log): received (from where), a new version of which
    file, processed (or how it ended), and every recorded action."""
    entries = [HistoryEntry(at=record.created_at, action="received", detail=f"from {record.came_from}")]
    if record.previous_version_id:
        try:
            previous = c.repo.get(record.tenant_id, record.previous_version_id)
            named = previous.title or previous.filename
        except NotFound:
            named = "an earlier file"
        entries.append(
            HistoryEntry(at=record.created_at, action="versioned", detail=f"version {record.version}, after {named}")
        )
    if record.status is Status.INDEXED and record.embedded_at is not None:
        entries.append(HistoryEntry(at=record.embedded_at, action="processed", detail="searchable"))
    elif record.outcome is not None and record.status in (Status.FAILED, Status.SKIPPED):
        entries.append(HistoryEntry(at=record.updated_at, action="processed", detail=record.outcome.value))
    entries += [HistoryEntry(at=a.at, action=a.action, detail=a.detail, by=a.by) for a in record.activity]
    return sorted(entries, key=lambda e: e.at, reverse=True)


def _gist(text: str, width: int = 80) -> str:
    """A note's first words, for the history (the note itself stays on the file)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1].rstrip() + "…"


def _reindexed(c: Container, record: FileRecord) -> FileRecord:
    if record.status is Status.INDEXED:
        index_record(c, record, reembed_card=True)
    return record
