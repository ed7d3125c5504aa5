"""The MCP server's tools, each a function of its own over the same use cases and request models as the HTTP
API: ``search(caller, query, …)``. ``Caller`` is who calls, and its tenant: every tool reads and writes that
tenant only, as that user (or agent acting for them) may. ``mcp_server.build_server`` registers each with the
caller bound, its title and annotations from ``TOOLS``; what a tool refuses it raises as the API's errors
(``domain/errors.py``), which the server answers as tool errors in the API's words."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from semfs.api.models import AskRequest, ContextRequest
from semfs.domain.access import Principal, can_read
from semfs.domain.errors import InvalidRequest, NotFound, SemfsError
from semfs.domain.models import SearchFilters, SearchRequest, SearchResultItem
from semfs.domain.outcomes import Status
from semfs.pipeline import names, vocabulary
from semfs.pipeline.documents import load_document
from semfs.pipeline.principals import artifact_access, principal_for, principal_from_claims
from semfs.ports.repository import RecordQuery

if TYPE_CHECKING:
    from semfs.domain.models import FileRecord
    from semfs.ports import Container


class Refused(SemfsError):
    """What a tool will not do, said as it is (not the API's "no such file")."""


@dataclass(frozen=True)
class Caller:
    """Who calls a tool: ``user`` of ``tenant`` (or ``agent`` acting for them); ``groups`` from a JWT (AWS),
    none for one of the tenant's own users (a local key)."""

    c: Container
    tenant: str
    user: str | None = None
    agent: str | None = None
    groups: tuple[str, ...] | None = None

    def principal(self) -> Principal:
        """Looked up on each call: a user's groups may change while the server runs."""
        if self.groups is not None:  # a signed-in user (AWS): ``user`` is their email, or their user name
            email = self.user if self.user and "@" in self.user else None
            return principal_from_claims(self.c, self.tenant, self.user, self.groups, email)
        return principal_for(self.c, self.tenant, self.user, agent=self.agent)

    def tokens(self) -> tuple[str, ...] | None:
        return self.principal().tokens()

    def record(self, file_id: str) -> FileRecord:
        """A live file the caller may read, or "no such file" (another tenant's id and a missing one alike)."""
        found = self.c.repo.get(self.tenant, file_id)
        if found.deleted_at is not None or not can_read(found.readers, self.tokens()):
            raise NotFound("no such file")
        return found

    def filters(
        self,
        tags: list[str] | None,
        source_type: str | None,
        thread: str | None,
        contact: str | None,
        entity: str | None,
    ) -> SearchFilters:
        """The filters, each one that names nothing of this tenant's refused as such: "no thread named …"
        tells a model to look the name up, where "no file matches" told it there was nothing to find."""
        c, tenant = self.c, self.tenant
        base = SearchFilters.model_validate({"tags": tags or [], "source_type": source_type, "entity": entity})
        thread_id, contact_id = names.thread_id(c, tenant, thread), names.contact_id(c, tenant, contact)
        everything = RecordQuery(tenant_id=tenant, limit=1, readers=self.tokens())
        asked = [("thread", thread, replace(everything, thread_id=thread_id)) if thread_id else None]
        asked += [("contact", contact, replace(everything, contact_id=contact_id)) if contact_id else None]
        asked += [("tags", t, replace(everything, tag=vocabulary.named(c, tenant, t))) for t in tags or []]
        for shown, given, query in filter(None, asked):  # (among what the caller may read: no existence leaks)
            if not c.repo.query(query):
                raise InvalidRequest(f"{shown}: no file you can read is filed under {given!r}")
        return base.model_copy(update={"thread_id": thread_id, "contact_id": contact_id}).read_as(self.tokens())


class Hints(NamedTuple):
    """MCP tool annotations (``mcp.types.ToolAnnotations``, made when the server is built)."""

    read_only: bool
    idempotent: bool


READS = Hints(read_only=True, idempotent=True)
WRITES = Hints(read_only=False, idempotent=False)
WRITES_IDEMPOTENT = Hints(read_only=False, idempotent=True)


class Tool(NamedTuple):
    fn: Callable[..., dict[str, Any]]
    title: str
    hints: Hints


TOOLS: list[Tool] = []


def tool(title: str, hints: Hints) -> Callable[[Callable[..., dict[str, Any]]], Callable[..., dict[str, Any]]]:
    """Put a function in ``TOOLS``: its name is the tool's, its docstring what the model reads, its parameters
    after ``caller`` the tool's arguments."""

    def add(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
        TOOLS.append(Tool(fn, title, hints))
        return fn

    return add


def bound(fn: Callable[..., dict[str, Any]], caller: Caller) -> Callable[..., dict[str, Any]]:
    """``fn`` with ``caller`` given: the signature the SDK reads for the tool's input schema (its annotations
    evaluated here, where their names are), without ``caller``."""
    signature = inspect.signature(fn, eval_str=True)
    arguments = list(signature.parameters.values())[1:]

    def call(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return fn(caller, *args, **kwargs)

    call.__name__, call.__qualname__ = fn.__name__, fn.__qualname__
    call.__doc__ = inspect.cleandoc(fn.__doc__ or "")  # what the model reads, without the source's indent
    call.__signature__ = signature.replace(parameters=arguments)  # type: ignore[attr-defined]
    return call


TEXT_PAGE_CHARS = 20_000  # a tool result a model can take in one read
MAX_ARTIFACT_BYTES = 5 * 1024 * 1024

SEARCH_CHARS = 12_000  # a search answer's default budget: MCP clients cut tool results at ~25k tokens


def _result(r: SearchResultItem) -> dict[str, Any]:
    """One search result as a model reads it: what it is, where it came from, how relevant, the passages."""
    return {
        "file_id": r.file_id,
        "title": r.title,
        "filename": r.filename,
        "came_from": r.came_from,
        "source_type": r.source_type,
        "origin": r.origin,  # sender, subject, thread; agent, run, derived_from
        "version": r.version,
        "is_latest": r.is_latest,
        "document_date": r.document_date.isoformat() if r.document_date else None,
        "relevance": r.relevance,
        "weak": r.weak,
        "summary": r.summary,
        "passages": [
            {"passage_id": s.chunk_id, "text": s.text, "location": s.location.label()} for s in r.snippets
        ],  # a passage is read whole with read_passages
    }


def _fitting(results: list[dict[str, Any]], max_chars: int) -> list[dict[str, Any]]:
    """The first results whose JSON fits ``max_chars`` together (the first one always, its passages cut
    to fit when it alone is longer)."""
    kept: list[dict[str, Any]] = []
    used = 0
    for r in results:
        size = len(json.dumps(r, default=str))
        if kept and used + size > max_chars:
            break
        cut = r if kept or size <= max_chars else {**r, "summary": (r["summary"] or "")[: max_chars // 4]}
        kept.append(cut if cut is r else {**cut, "passages": r["passages"][:1]})
        used += size
    return kept


def _brief(r: FileRecord) -> dict[str, Any]:
    return {
        "file_id": r.file_id,
        "title": r.title,
        "filename": r.filename,
        "came_from": r.came_from,
        "version": r.version,
        "is_latest": r.is_latest,
        "tags": r.all_tags,
        "indexed": r.status is Status.INDEXED,
        "ingested_at": r.created_at.isoformat(),
    }


@tool("Search files", READS)
def search(
    caller: Caller,
    query: str,
    mode: str = "hybrid",
    limit: int = 10,
    tags: list[str] | None = None,
    source_type: str | None = None,
    thread: str | None = None,
    contact: str | None = None,
    entity: str | None = None,
    min_relevance: float = 0.0,
    max_chars: int = SEARCH_CHARS,
    cursor: str | None = None,
) -> dict[str, Any]:
    """Find files by meaning and keyword, most relevant first. Each result: the file's id, title, where it
    came from (path, sender, thread, the agent and the files it was made from), its version, a calibrated
    relevance (0-1; `weak` below 0.25) and its best passages with their locations. mode: hybrid (default),
    keyword (exact names, numbers, codes) or semantic. Filters: tags, source_type (upload,
    email_attachment, agent_generated), a mail thread's subject or id, a contact's name, address or id,
    and entity: only files whose text names it (a person, organisation, amount or identifier as written,
    e.g. "Acme Corp" or "INV-2024-0042"). min_relevance leaves weaker results out; the answer stays within
    max_chars (default 12,000) and gives a `next_cursor` when more results follow: pass it as cursor."""
    from semfs.pipeline.query.search import search as run_search

    if not 1 <= limit <= 50 or not 0.0 <= min_relevance <= 1.0 or not 500 <= max_chars <= 100_000:
        raise InvalidRequest("limit: 1 to 50; min_relevance: 0 to 1; max_chars: 500 to 100,000")
    if cursor is not None and not (cursor.isdigit() and int(cursor) < 100):
        raise InvalidRequest("cursor: pass the next_cursor of the previous answer as it came")
    offset = int(cursor or 0)
    scope = caller.filters(tags, source_type, thread, contact, entity)
    asked = {"query": query, "mode": mode, "limit": min(100, offset + limit)}
    request = SearchRequest.model_validate(asked).model_copy(update={"filters": scope})  # (keeps readers)
    resp = run_search(caller.c, caller.tenant, request)
    ranked = resp.results[offset : offset + limit]
    shown = [_result(r) for r in ranked if r.relevance >= min_relevance]
    kept = _fitting(shown, max_chars)
    more = len(kept) < len(shown) or len(resp.results) > offset + limit
    return {
        "results": kept,
        "next_cursor": str(offset + len(ranked) - (len(shown) - len(kept))) if more else None,
        "below_min_relevance": len(ranked) - len(shown),
        "note": resp.note,
        "degraded": resp.degraded,
    }


@tool("Answer from the files", READS)
def ask(
    caller: Caller,
    question: str,
    file_id: str | None = None,
    thread: str | None = None,
    include_agent_files: bool = False,
) -> dict[str, Any]:
    """A short answer quoted from the files, each sentence cited (file id, location, quote), or
    `no_answer` with the reason when the files do not support one. Scope it to one file (file_id) or one
    mail thread (its subject or id). Files agents saved (drafts, summaries) are left out unless
    include_agent_files: an answer should rest on the sources, not on an earlier draft of it."""
    from semfs.pipeline.query.ask import ask as run_ask

    request = AskRequest.model_validate({"question": question, "file_id": file_id})
    scope = SearchFilters(include_agent_files=include_agent_files).read_as(caller.tokens())
    if request.file_id:
        scope = scope.model_copy(update={"file_ids": [caller.record(request.file_id).file_id]})
    if thread:
        scope = scope.model_copy(update={"thread_id": names.thread_id(caller.c, caller.tenant, thread)})
    return run_ask(caller.c, caller.tenant, request.question, scope, request.limit).model_dump(mode="json")


@tool("Context for a message", READS)
def context(caller: Caller, subject: str, body: str = "", limit: int = 5) -> dict[str, Any]:
    """The files to know about before answering a message (its subject and body): each with its title,
    summary, relevance and the passage that shows why it matters. Files that name what the message
    names (an invoice number, an organisation, a person) come first, with those names in `entities`.
    Files agents saved are left out: a briefing is about the sources."""
    from semfs.pipeline.query.ask import context as run_context

    request = ContextRequest.model_validate({"subject": subject, "body": body, "limit": limit})
    scope = SearchFilters().read_as(caller.tokens())
    items = run_context(caller.c, caller.tenant, request.subject, request.body, scope, request.limit)
    return {"items": [i.model_dump(mode="json") for i in items]}


@tool("Who or what the files name", READS)
def entity(caller: Caller, name: str) -> dict[str, Any]:
    """Look up a person, organisation, email address, phone number, amount, date or identifier (an
    invoice or order number) as the files write it, or by its id from another answer: what it is, the
    contact it belongs to, the files that name it (latest versions, with where) and their mail threads.
    Use it to gather everything about a customer, a supplier or an invoice before answering."""
    from semfs.pipeline.query.entities import entity_page

    if not 1 <= len(name.strip()) <= 200:
        raise InvalidRequest("name: 1 to 200 characters")
    try:
        return entity_page(caller.c, caller.tenant, name, readers=caller.tokens()).model_dump(mode="json")
    except NotFound:
        raise Refused("no file names this (search finds files by their words)") from None


@tool("List files", READS)
def list_files(
    caller: Caller, limit: int = 20, offset: int = 0, tag: str | None = None, sort: str = "newest"
) -> dict[str, Any]:
    """The latest version of each file, newest first (sort: newest, oldest, name, size), optionally with
    one tag; page with offset."""

    if sort not in ("newest", "oldest", "name", "size"):
        raise InvalidRequest("sort: one of newest, oldest, name, size")
    if not 1 <= limit <= 200 or offset < 0:
        raise InvalidRequest("limit: 1 to 200; offset: 0 or more")
    query = RecordQuery(
        tenant_id=caller.tenant,
        readers=caller.tokens(),
        tag=vocabulary.named(caller.c, caller.tenant, tag),
        latest_only=True,
        exclude_duplicates=True,
        order=sort,  # type: ignore[arg-type]
        offset=offset,
        limit=limit + 1,
    )
    found = caller.c.repo.query(query)
    return {
        "files": [_brief(r) for r in found[:limit]],
        "next_offset": offset + limit if len(found) > limit else None,
    }


@tool("Read a file", READS)
def read_file(caller: Caller, file_id: str, offset: int = 0) -> dict[str, Any]:
    """A file's extracted text, a page at a time: blocks with their locations (page, sheet, slide,
    section) from `offset`; `next_offset` is where the next page starts (none: the end)."""

    if offset < 0:
        raise InvalidRequest("offset: 0 or more")
    found = caller.record(file_id)
    doc = load_document(caller.c, found)
    blocks: list[dict[str, str]] = []
    size, next_offset = 0, None
    for i in range(offset, len(doc.blocks)):
        block = doc.blocks[i]
        if blocks and size + len(block.text) > TEXT_PAGE_CHARS:
            next_offset = i
            break
        blocks.append({"text": block.text[:TEXT_PAGE_CHARS], "location": block.location.label()})
        size += len(block.text)
    return {"file": _brief(found), "blocks": blocks, "next_offset": next_offset}


@tool("Read passages", READS)
def read_passages(caller: Caller, passage_ids: list[str], max_chars: int = SEARCH_CHARS) -> dict[str, Any]:
    """The whole passages a search pointed at (each result's `passages[].passage_id`), of several files in
    one call, each with its file, version and location, within max_chars; `left_out` lists the ids that
    did not fit (read them in another call). An id you may not read is "no such file"."""

    if not 1 <= len(passage_ids) <= 50 or not 500 <= max_chars <= 100_000:
        raise InvalidRequest("passage_ids: 1 to 50; max_chars: 500 to 100,000")
    docs = caller.c.index.get_docs(caller.tenant, passage_ids)
    out: list[dict[str, Any]] = []
    used, left_out = 0, []
    for pid in passage_ids:
        doc = docs.get(pid)
        if doc is None or doc.kind != "chunk":
            raise NotFound("no such passage")
        found = caller.record(doc.file_id)  # the caller's to read, or "no such file"
        if out and used + len(doc.text) > max_chars:
            left_out.append(pid)
            continue
        text = doc.text[: max_chars - used] if not out else doc.text
        out.append(
            {"passage_id": pid, "file_id": found.file_id, "title": found.title, "version": found.version,
             "location": doc.location.label(), "text": text}
        )  # fmt: skip
        used += len(text)
    return {"passages": out, "left_out": left_out}


@tool("Versions of a file", READS)
def versions(caller: Caller, file_id: str) -> dict[str, Any]:
    """Every version of the document a file belongs to, oldest first, with each one's change summary."""

    found = caller.record(file_id)
    seen = caller.tokens()
    lineage = [
        v
        for v in caller.c.repo.lineage(caller.tenant, found.lineage_id)
        if v.deleted_at is None and can_read(v.readers, seen)
    ]
    return {"versions": [{**_brief(v), "change_summary": v.change_summary} for v in lineage]}


@tool("Files like this one", READS)
def similar(caller: Caller, file_id: str, limit: int = 10) -> dict[str, Any]:
    """Other files nearest to this one by meaning (latest versions, its own versions left out)."""
    from semfs.pipeline.query.similar import similar as run_similar

    if not 1 <= limit <= 50:
        raise InvalidRequest("limit: 1 to 50")
    caller.record(file_id)
    found = run_similar(caller.c, caller.tenant, file_id, limit, readers=caller.tokens())
    return {"files": [f.model_dump(mode="json") for f in found]}


@tool("Note on a file", WRITES)
def add_note(caller: Caller, file_id: str, text: str, agent: str) -> dict[str, Any]:
    """Leave a short note on a file (what you checked, what it is for, a caveat): people see it on the
    file's page, signed with your agent name, and search finds the file by it. Plain text, at most 2,000
    characters; for a longer text, save an artifact instead."""
    from semfs.pipeline.catalogue.notes import add_note as run_add_note

    caller.record(file_id)
    if not agent.strip():
        raise InvalidRequest("agent: say which agent writes the note")
    noted = run_add_note(caller.c, caller.tenant, file_id, text, author=f"agent {' '.join(agent.split())[:80]}")
    return {**_brief(noted), "notes": [n.model_dump(mode="json") for n in noted.notes]}


@tool("A file's history", READS)
def history(caller: Caller, file_id: str) -> dict[str, Any]:
    """What happened to a file, oldest first: received (and from where), a new version of which file,
    processed, then what people and agents did (tags, notes, trash, restore, version links), and who."""
    from semfs.pipeline.catalogue.notes import history as run_history

    return {"entries": [e.model_dump(mode="json") for e in run_history(caller.c, caller.record(file_id))]}


@tool("Save an artifact", WRITES_IDEMPOTENT)
def save_artifact(
    caller: Caller,
    content: str,
    filename: str,
    agent: str,
    run_id: str,
    derived_from: list[str] | None = None,
    tags: list[str] | None = None,
) -> dict[str, Any]:
    """Store a text you produced (a report, a summary, a draft) as a file of its own, searchable like any
    other, with the agent, the run and the file ids it was made from as its provenance. Saving the same
    content under the same name in the same run again changes nothing."""
    from semfs.agents import ingest_agent_file

    raw = content.encode("utf-8")
    if not content.strip():
        raise InvalidRequest("content: empty; save the text you produced")
    if not filename.strip() or filename.strip(" .") == "":
        raise InvalidRequest("filename: say what to call it (report.md, reply-draft.txt)")
    if len(raw) > MAX_ARTIFACT_BYTES:
        raise InvalidRequest(f"content: at most {MAX_ARTIFACT_BYTES // (1024 * 1024)} MB")
    if not agent.strip() or not run_id.strip():
        raise InvalidRequest("agent and run_id: say which agent and which run produced it")
    sources = [caller.record(s) for s in derived_from or []]  # another tenant's id is "no such file"
    stored = ingest_agent_file(
        raw,
        filename,
        agent=agent,
        run_id=run_id,
        tenant=caller.tenant,
        derived_from=derived_from or [],
        tags=tags or [],
        container=caller.c,
        access=artifact_access(caller.c, caller.principal(), sources),
        viewer=caller.tokens(),
    )
    return {**_brief(stored), "status": stored.status.value, "outcome": stored.outcome}
