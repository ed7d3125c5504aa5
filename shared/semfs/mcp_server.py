"""semfs as an agent's context over the Model Context Protocol (the official ``mcp`` SDK's ``MCPServer``).

``semfs mcp`` serves one tenant's files over stdio to a local agent (a desktop assistant, a coding agent):
the tenant is ``--tenant`` (the local default), or the one an API key names (``--key`` or
``SEMFS_API_KEY``), so an agent handed a key sees exactly what that key sees over HTTP.

Every tool takes its inputs through the same models as the HTTP API (``SearchRequest``, ``AskRequest``, …),
so the same rules refuse the same inputs; what a tool cannot do comes back as an MCP tool error with the
API's wording ("no such file" for another tenant's id as for none), never a traceback. Files are also
resources, ``semfs://files/{file_id}`` (their extracted text).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from semfs.api.models import AskRequest, ContextRequest
from semfs.domain.access import Principal, can_read
from semfs.domain.errors import InvalidRequest, NotFound, SemfsError
from semfs.domain.models import SearchFilters, SearchRequest, SearchResultItem
from semfs.domain.outcomes import Status
from semfs.domain.tenants import checked_tenant_id
from semfs.observability import get_logger
from semfs.pipeline import names, vocabulary
from semfs.pipeline.documents import load_document
from semfs.pipeline.principals import artifact_access, principal_for, principal_from_claims
from semfs.ports.repository import RecordQuery

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from semfs.domain.models import FileRecord
    from semfs.ports import Container

log = get_logger(__name__)
T = TypeVar("T")

TEXT_PAGE_CHARS = 20_000  # a tool result a model can take in one read
MAX_ARTIFACT_BYTES = 5 * 1024 * 1024

INSTRUCTIONS = (
    "semfs holds this organisation's files (uploads, mail attachments, agents' artifacts), extracted, "
    "summarised and indexed. Use `search` to find files by meaning or keyword, `ask` for an answer quoted from "
    "them with citations, `context` for what to know before replying to a message, `entity` for everything the "
    "files say about a person, organisation or invoice number, `read_passages` to read what a search found, "
    "`read_file` to read one, "
    "and `save_artifact` to store what you produced with where it came from."
)


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


def _failure(e: Exception) -> str:
    """The API's wording for what went wrong (``api/resolver.py`` answers the same families)."""
    if isinstance(e, NotFound):
        return "no such file"
    if isinstance(e, ValidationError):
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "input"
        return f"{where}: {first['msg']}"
    if isinstance(e, SemfsError):
        return e.reason
    return "semfs could not do that (an internal error; the server log has the details)"


def build_server(
    c: Container,
    tenant: str,
    user: str | None = None,
    agent: str | None = None,
    groups: tuple[str, ...] | None = None,
) -> MCPServer:
    """The MCP server over ``c`` for ``tenant``: every tool and resource reads and writes that tenant only,
    as ``user`` (or, for an agent's key, as ``agent`` acting for ``user``) sees it: a file not shared with
    them is "no such file" and no search, answer or list holds it (``domain/access.py``). ``groups``: the
    signed-in user's groups from a JWT (AWS); none, the user is one of the tenant's own (a local key)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError

    tenant = checked_tenant_id(tenant)  # every host hands a checked one; a caller in code is held to it too
    from mcp.types import ToolAnnotations

    from semfs import __version__

    server = MCPServer("semfs", instructions=INSTRUCTIONS, version=__version__)
    reads = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    def run(tool: str, fn: Callable[[], T]) -> T:
        """``fn()``, what it cannot do answered as a tool error in the API's words, never a traceback."""
        try:
            return fn()
        except ToolError:
            raise
        except (SemfsError, ValidationError, ValueError) as e:
            raise ToolError(_failure(e)) from None
        except Exception as e:  # a crash is logged here by its type, and the model told plainly
            log.error("mcp tool failed", tool=tool, error=type(e).__name__)
            raise ToolError(_failure(e)) from None

    def caller() -> Principal:
        """Who calls, looked up on each call (a user's groups may change while the server runs)."""
        if groups is not None:  # a signed-in user (AWS): ``user`` is their email, or their user name
            return principal_from_claims(c, tenant, user, groups, user if user and "@" in user else None)
        return principal_for(c, tenant, user, agent=agent)

    def tokens() -> tuple[str, ...] | None:
        return caller().tokens()

    def record(file_id: str) -> FileRecord:
        found = c.repo.get(tenant, file_id)
        if found.deleted_at is not None or not can_read(found.readers, tokens()):
            raise NotFound("no such file")
        return found

    def filters(
        tags: list[str] | None, source_type: str | None, thread: str | None, contact: str | None, entity: str | None
    ) -> SearchFilters:
        """The filters, each one that names nothing of this tenant's refused as such: "no thread named …"
        tells a model to look the name up, where "no file matches" told it there was nothing to find."""
        base = SearchFilters.model_validate({"tags": tags or [], "source_type": source_type, "entity": entity})
        thread_id, contact_id = names.thread_id(c, tenant, thread), names.contact_id(c, tenant, contact)
        everything = RecordQuery(tenant_id=tenant, limit=1, readers=tokens())
        asked = [("thread", thread, replace(everything, thread_id=thread_id)) if thread_id else None]
        asked += [("contact", contact, replace(everything, contact_id=contact_id)) if contact_id else None]
        asked += [("tags", t, replace(everything, tag=vocabulary.named(c, tenant, t))) for t in tags or []]
        for shown, given, query in filter(None, asked):  # (among what the caller may read: no existence leaks)
            if not c.repo.query(query):
                raise InvalidRequest(f"{shown}: no file you can read is filed under {given!r}")
        return base.model_copy(update={"thread_id": thread_id, "contact_id": contact_id}).read_as(tokens())

    @server.tool(title="Search files", annotations=reads)
    def search(
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

        def go() -> dict[str, Any]:
            if not 1 <= limit <= 50 or not 0.0 <= min_relevance <= 1.0 or not 500 <= max_chars <= 100_000:
                raise InvalidRequest("limit: 1 to 50; min_relevance: 0 to 1; max_chars: 500 to 100,000")
            if cursor is not None and not (cursor.isdigit() and int(cursor) < 100):
                raise InvalidRequest("cursor: pass the next_cursor of the previous answer as it came")
            offset = int(cursor or 0)
            scope = filters(tags, source_type, thread, contact, entity)
            asked = {"query": query, "mode": mode, "limit": min(100, offset + limit)}
            request = SearchRequest.model_validate(asked).model_copy(update={"filters": scope})  # (keeps readers)
            resp = run_search(c, tenant, request)
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

        return run("search", go)

    @server.tool(title="Answer from the files", annotations=reads)
    def ask(
        question: str, file_id: str | None = None, thread: str | None = None, include_agent_files: bool = False
    ) -> dict[str, Any]:
        """A short answer quoted from the files, each sentence cited (file id, location, quote), or
        `no_answer` with the reason when the files do not support one. Scope it to one file (file_id) or one
        mail thread (its subject or id). Files agents saved (drafts, summaries) are left out unless
        include_agent_files: an answer should rest on the sources, not on an earlier draft of it."""
        from semfs.pipeline.query.ask import ask as run_ask

        def go() -> dict[str, Any]:
            request = AskRequest.model_validate({"question": question, "file_id": file_id})
            scope = SearchFilters(include_agent_files=include_agent_files).read_as(tokens())
            if request.file_id:
                scope = scope.model_copy(update={"file_ids": [record(request.file_id).file_id]})
            if thread:
                scope = scope.model_copy(update={"thread_id": names.thread_id(c, tenant, thread)})
            return run_ask(c, tenant, request.question, scope, request.limit).model_dump(mode="json")

        return run("ask", go)

    @server.tool(title="Context for a message", annotations=reads)
    def context(subject: str, body: str = "", limit: int = 5) -> dict[str, Any]:
        """The files to know about before answering a message (its subject and body): each with its title,
        summary, relevance and the passage that shows why it matters. Files that name what the message
        names (an invoice number, an organisation, a person) come first, with those names in `entities`.
        Files agents saved are left out: a briefing is about the sources."""
        from semfs.pipeline.query.ask import context as run_context

        def go() -> dict[str, Any]:
            request = ContextRequest.model_validate({"subject": subject, "body": body, "limit": limit})
            scope = SearchFilters().read_as(tokens())
            items = run_context(c, tenant, request.subject, request.body, scope, request.limit)
            return {"items": [i.model_dump(mode="json") for i in items]}

        return run("context", go)

    @server.tool(title="Who or what the files name", annotations=reads)
    def entity(name: str) -> dict[str, Any]:
        """Look up a person, organisation, email address, phone number, amount, date or identifier (an
        invoice or order number) as the files write it, or by its id from another answer: what it is, the
        contact it belongs to, the files that name it (latest versions, with where) and their mail threads.
        Use it to gather everything about a customer, a supplier or an invoice before answering."""
        from semfs.pipeline.query.entities import entity_page

        def go() -> dict[str, Any]:
            if not 1 <= len(name.strip()) <= 200:
                raise InvalidRequest("name: 1 to 200 characters")
            try:
                return entity_page(c, tenant, name, readers=tokens()).model_dump(mode="json")
            except NotFound:
                raise ToolError("no file names this (search finds files by their words)") from None

        return run("entity", go)

    @server.tool(title="List files", annotations=reads)
    def list_files(limit: int = 20, offset: int = 0, tag: str | None = None, sort: str = "newest") -> dict[str, Any]:
        """The latest version of each file, newest first (sort: newest, oldest, name, size), optionally with
        one tag; page with offset."""

        def go() -> dict[str, Any]:
            if sort not in ("newest", "oldest", "name", "size"):
                raise InvalidRequest("sort: one of newest, oldest, name, size")
            if not 1 <= limit <= 200 or offset < 0:
                raise InvalidRequest("limit: 1 to 200; offset: 0 or more")
            query = RecordQuery(
                tenant_id=tenant,
                readers=tokens(),
                tag=vocabulary.named(c, tenant, tag),
                latest_only=True,
                exclude_duplicates=True,
                order=sort,  # type: ignore[arg-type]
                offset=offset,
                limit=limit + 1,
            )
            found = c.repo.query(query)
            return {
                "files": [_brief(r) for r in found[:limit]],
                "next_offset": offset + limit if len(found) > limit else None,
            }

        return run("list_files", go)

    @server.tool(title="Read a file", annotations=reads)
    def read_file(file_id: str, offset: int = 0) -> dict[str, Any]:
        """A file's extracted text, a page at a time: blocks with their locations (page, sheet, slide,
        section) from `offset`; `next_offset` is where the next page starts (none: the end)."""

        def go() -> dict[str, Any]:
            if offset < 0:
                raise InvalidRequest("offset: 0 or more")
            found = record(file_id)
            doc = load_document(c, found)
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

        return run("read_file", go)

    @server.tool(title="Read passages", annotations=reads)
    def read_passages(passage_ids: list[str], max_chars: int = SEARCH_CHARS) -> dict[str, Any]:
        """The whole passages a search pointed at (each result's `passages[].passage_id`), of several files in
        one call, each with its file, version and location, within max_chars; `left_out` lists the ids that
        did not fit (read them in another call). An id you may not read is "no such file"."""

        def go() -> dict[str, Any]:
            if not 1 <= len(passage_ids) <= 50 or not 500 <= max_chars <= 100_000:
                raise InvalidRequest("passage_ids: 1 to 50; max_chars: 500 to 100,000")
            docs = c.index.get_docs(tenant, passage_ids)
            out: list[dict[str, Any]] = []
            used, left_out = 0, []
            for pid in passage_ids:
                doc = docs.get(pid)
                if doc is None or doc.kind != "chunk":
                    raise NotFound("no such passage")
                found = record(doc.file_id)  # the caller's to read, or "no such file"
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

        return run("read_passages", go)

    @server.tool(title="Versions of a file", annotations=reads)
    def versions(file_id: str) -> dict[str, Any]:
        """Every version of the document a file belongs to, oldest first, with each one's change summary."""

        def go() -> dict[str, Any]:
            found = record(file_id)
            seen = tokens()
            lineage = [
                v
                for v in c.repo.lineage(tenant, found.lineage_id)
                if v.deleted_at is None and can_read(v.readers, seen)
            ]
            return {"versions": [{**_brief(v), "change_summary": v.change_summary} for v in lineage]}

        return run("versions", go)

    @server.tool(title="Files like this one", annotations=reads)
    def similar(file_id: str, limit: int = 10) -> dict[str, Any]:
        """Other files nearest to this one by meaning (latest versions, its own versions left out)."""
        from semfs.pipeline.query.similar import similar as run_similar

        def go() -> dict[str, Any]:
            if not 1 <= limit <= 50:
                raise InvalidRequest("limit: 1 to 50")
            record(file_id)
            found = run_similar(c, tenant, file_id, limit, readers=tokens())
            return {"files": [f.model_dump(mode="json") for f in found]}

        return run("similar", go)

    @server.tool(title="Note on a file", annotations=writes)
    def add_note(file_id: str, text: str, agent: str) -> dict[str, Any]:
        """Leave a short note on a file (what you checked, what it is for, a caveat): people see it on the
        file's page, signed with your agent name, and search finds the file by it. Plain text, at most 2,000
        characters; for a longer text, save an artifact instead."""
        from semfs.pipeline.catalogue.notes import add_note as run_add_note

        def go() -> dict[str, Any]:
            record(file_id)
            if not agent.strip():
                raise InvalidRequest("agent: say which agent writes the note")
            noted = run_add_note(c, tenant, file_id, text, author=f"agent {' '.join(agent.split())[:80]}")
            return {**_brief(noted), "notes": [n.model_dump(mode="json") for n in noted.notes]}

        return run("add_note", go)

    @server.tool(title="A file's history", annotations=reads)
    def history(file_id: str) -> dict[str, Any]:
        """What happened to a file, oldest first: received (and from where), a new version of which file,
        processed, then what people and agents did (tags, notes, trash, restore, version links), and who."""
        from semfs.pipeline.catalogue.notes import history as run_history

        def go() -> dict[str, Any]:
            return {"entries": [e.model_dump(mode="json") for e in run_history(c, record(file_id))]}

        return run("history", go)

    @server.tool(title="Save an artifact", annotations=writes.model_copy(update={"idempotent_hint": True}))
    def save_artifact(
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

        def go() -> dict[str, Any]:
            raw = content.encode("utf-8")
            if not content.strip():
                raise InvalidRequest("content: empty; save the text you produced")
            if not filename.strip() or filename.strip(" .") == "":
                raise InvalidRequest("filename: say what to call it (report.md, reply-draft.txt)")
            if len(raw) > MAX_ARTIFACT_BYTES:
                raise InvalidRequest(f"content: at most {MAX_ARTIFACT_BYTES // (1024 * 1024)} MB")
            if not agent.strip() or not run_id.strip():
                raise InvalidRequest("agent and run_id: say which agent and which run produced it")
            sources = [record(s) for s in derived_from or []]  # another tenant's id is "no such file"
            stored = ingest_agent_file(
                raw,
                filename,
                agent=agent,
                run_id=run_id,
                tenant=tenant,
                derived_from=derived_from or [],
                tags=tags or [],
                container=c,
                access=artifact_access(c, caller(), sources),
                viewer=tokens(),
            )
            return {**_brief(stored), "status": stored.status.value, "outcome": stored.outcome}

        return run("save_artifact", go)

    @server.resource("semfs://files/{file_id}", title="A file's text", mime_type="text/plain")
    def file_resource(file_id: str) -> str:
        """The extracted text of one file of this tenant."""
        try:
            found = record(file_id)
            return load_document(c, found).text
        except NotFound:
            raise ResourceNotFoundError("no such file") from None

    return server


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


def wsgi_environ(event: dict[str, Any]) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) request as the WSGI environ ``McpOverHttp.answer`` takes."""
    import base64
    import io

    raw = event.get("body") or ""
    body = base64.b64decode(raw) if event.get("isBase64Encoded") else raw.encode("utf-8")
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    http = (event.get("requestContext") or {}).get("http") or {}
    environ: dict[str, Any] = {
        "REQUEST_METHOD": http.get("method", "POST"),
        "SCRIPT_NAME": "",
        "PATH_INFO": "/mcp",
        "QUERY_STRING": event.get("rawQueryString") or "",
        "SERVER_NAME": headers.get("host", "lambda"),
        "SERVER_PORT": "443",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "CONTENT_TYPE": headers.get("content-type", ""),
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": io.StringIO(),
        "wsgi.url_scheme": "https",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for name, value in headers.items():
        if name not in ("content-type", "content-length"):
            environ["HTTP_" + name.upper().replace("-", "_")] = value
    return environ


def serve_stdio(c: Container, tenant: str, user: str | None = None, agent: str | None = None) -> None:
    """Speak MCP on this process's stdin and stdout until the client closes them, as ``user`` sees the files
    (none: the tenant's first admin)."""
    build_server(c, tenant, user, agent).run("stdio")


_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers", "transfer-encoding",
     "upgrade"}
)  # fmt: skip


def _within(asgi: Callable[..., Any], deadline_s: float) -> Callable[..., Any]:
    """``asgi`` with the request's deadline around each exchange: past it the exchange is cancelled and
    answered 504 (or its answer ended, if it had begun), so no MCP request holds the host's thread longer
    than any other route. Every exchange also gets the deadline the API's routes run under
    (``deadlines.request_deadline``), so a tool's outbound calls (the LLM, embeddings) share it. A tool
    running in a worker thread when its exchange is cancelled finishes there, bounded by those calls."""
    import anyio

    from semfs.deadlines import request_deadline

    async def app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope.get("type") != "http":
            await asgi(scope, receive, send)
            return
        sent = {"started": False, "ended": False}

        async def watched(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                sent["started"] = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                sent["ended"] = True
            await send(message)

        with request_deadline(deadline_s), anyio.move_on_after(deadline_s) as scope_:
            await asgi(scope, receive, watched)
        if not scope_.cancelled_caught:
            return
        log.warning("mcp request past its deadline", deadline_s=deadline_s)
        if not sent["started"]:
            message = f"the request took longer than its {deadline_s:g} s deadline"
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}})
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 504, "headers": headers})
            await send({"type": "http.response.body", "body": body.encode(), "more_body": False})
        elif not sent["ended"]:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


class McpOverHttp:
    """The same server over streamable HTTP for ``semfs serve``'s ``/mcp``, one per tenant.

    The SDK's transport is an ASGI app; the local host is WSGI (waitress), so each tenant's app runs on one
    event loop in a thread of its own, reached through ``a2wsgi``. The transport is stateless with JSON
    responses (each POST a whole JSON-RPC exchange, no session to keep or resume), as a Lambda would need
    it. The caller is authenticated by the host before it gets here (the API key names the tenant, as for
    every route), so a tool never sees another tenant. A tenant's server is built on its first request.
    """

    def __init__(self, c: Container, max_body: int, host: str | None = None) -> None:
        import asyncio
        import threading

        # the host the SDK's DNS-rebinding checks guard: a loopback one turns them on (a browser on this
        # machine must not reach a local server through a hostile page); behind API Gateway there is none
        self._c, self._max_body, self._host = c, max_body, host or c.settings.http.host
        self._deadline_s = c.settings.http.request_deadline_s
        self._loop = asyncio.new_event_loop()
        self._closed = asyncio.Event()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="semfs-mcp")
        self._thread.start()
        # one server per caller: (tenant, user, agent, the JWT's groups)
        self._apps: dict[tuple[str, str | None, str | None, tuple[str, ...] | None], Callable[..., Any]] = {}
        self._held: list[Any] = []
        self._lock = threading.Lock()

    def _app(self, key: tuple[str, str | None, str | None, tuple[str, ...] | None]) -> Callable[..., Any]:
        import asyncio
        import threading

        from a2wsgi import ASGIMiddleware

        with self._lock:
            if key not in self._apps:
                server = build_server(self._c, *key)
                asgi = server.streamable_http_app(
                    streamable_http_path="/mcp",
                    stateless_http=True,
                    json_response=True,
                    max_request_body_size=self._max_body,
                    host=self._host,  # on 127.0.0.1: the SDK's DNS-rebinding checks
                )
                ready = threading.Event()

                async def hold() -> None:  # the session manager's task group, for as long as the host runs
                    async with server.session_manager.run():
                        ready.set()
                        await self._closed.wait()

                self._held.append(asyncio.run_coroutine_threadsafe(hold(), self._loop))
                if not ready.wait(60):
                    raise RuntimeError("the MCP transport did not start")
                bounded = _within(asgi, self._deadline_s)
                self._apps[key] = ASGIMiddleware(bounded, loop=self._loop)
            return self._apps[key]

    def answer(
        self,
        tenant: str,
        environ: dict[str, Any],
        *,
        user: str | None = None,
        agent: str | None = None,
        groups: tuple[str, ...] | None = None,
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """One HTTP exchange with ``tenant``'s MCP server: status, headers and the whole body.

        Only POST reaches the SDK. A stateless server has no stream for a GET to open (the SDK would hold
        one open, and the thread serving it, until the client left: eight such GETs took every thread of
        ``semfs serve``), and no session for a DELETE to end; the specification's answer to both is 405."""
        if str(environ.get("REQUEST_METHOD", "")).upper() != "POST":
            message = "semfs serves MCP statelessly: POST each JSON-RPC message (no stream to open, no session)"
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
            return 405, [("Content-Type", "application/json"), ("Allow", "POST")], json.dumps(error).encode()
        said: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
            # hop-by-hop headers are the host's to set (PEP 3333: waitress refuses an app that sets them)
            kept = [(k, v) for k, v in headers if k.lower() not in _HOP_BY_HOP]
            said[:] = [int(status.split(" ", 1)[0]), kept]

        body = b"".join(self._app((tenant, user, agent, groups))(environ, start_response))
        return said[0], said[1], body

    def close(self) -> None:
        """Stop every tenant's transport and the loop (``HttpServer.shutdown``)."""
        self._loop.call_soon_threadsafe(self._closed.set)
        for held in self._held:
            try:
                held.result(timeout=10)
            except Exception as e:  # shutting down: log what would not stop, stop the rest
                log.warning("mcp transport did not stop cleanly", error=type(e).__name__)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
