"""Finding things: search, grounded answers, agent context, contacts and entities."""

import json
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from semfs.cli.common import (
    ContactOpt,
    EntityOpt,
    HistoryOpt,
    Json,
    MimeOpt,
    ModeOpt,
    SinceOpt,
    SourceOpt,
    TagOpt,
    Tenant,
    ThreadOpt,
    UntilOpt,
    app,
    err,
    opened,
    out,
    reader_tokens,
    search_filters,
    visible_record,
)
from semfs.domain.vocabulary import EntityKind

if TYPE_CHECKING:
    from semfs.domain.models import SearchResponse


def _search_json(resp: "SearchResponse") -> dict[str, Any]:
    return {
        "results": [
            {
                "file_id": r.file_id,
                "filename": r.filename,
                "title": r.title,
                "summary": r.summary,
                "score": r.score,
                "relevance": r.relevance,
                "weak": r.weak,
                "version": r.version,
                "tags": r.tags,
                "origin": r.origin,
                "came_from": r.came_from,
                "document_date": r.document_date.isoformat() if r.document_date else None,
                "ingested_at": r.ingested_at.isoformat() if r.ingested_at else None,
                "snippets": [
                    {
                        "text": s.text,
                        "location": s.location.model_dump(exclude_none=True),
                        "highlights": s.highlights,
                    }
                    for s in r.snippets
                ],
            }
            for r in resp.results
        ],
        "degraded": resp.degraded,
        "left_out": resp.left_out,
        "note": resp.note,
    }


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for, in words.")],
    tenant: Tenant = "default",
    mode: ModeOpt = "hybrid",
    limit: Annotated[int, typer.Option("--limit", min=1, max=100, help="How many files (1-100).")] = 10,
    tag: TagOpt = None,
    source_type: SourceOpt = None,
    contact: ContactOpt = None,
    entity: EntityOpt = None,
    thread: ThreadOpt = None,
    mime: MimeOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    include_history: HistoryOpt = False,
    as_json: Json = False,
) -> None:
    """Hybrid (BM25 + vectors), keyword or semantic search, grouped by file."""
    from rich.text import Text

    from semfs.domain.models import SearchRequest
    from semfs.pipeline.query.search import search as run_search

    if not query.strip():
        err.print("[red]the query is empty: say what you are looking for[/red]")
        raise typer.Exit(2)
    if len(query) > 2000:
        err.print("[red]the query is longer than 2,000 characters[/red]")
        raise typer.Exit(2)
    with opened() as c:
        request = SearchRequest(
            query=query,
            limit=limit,
            mode=mode,
            filters=search_filters(
                c,
                tenant,
                tag=tag,
                source_type=source_type,
                contact=contact,
                thread=thread,
                mime=mime,
                since=since,
                until=until,
                include_history=include_history,
                entity=entity,
            ),
        )
        resp = run_search(c, tenant, request)
    if as_json:
        print(json.dumps(_search_json(resp), indent=2, default=str))
        return
    if resp.degraded:
        out.print("[yellow]embeddings unavailable: keyword results only[/yellow]")
    if not resp.results:
        out.print(f"no results: {resp.note}", highlight=False)
    elif resp.note:  # every result is weak: said before them, not hidden
        out.print(f"[yellow]{resp.note}[/yellow]", highlight=False)
    for rank, r in enumerate(resp.results, start=1):
        badge = "" if r.is_latest else f" [dim](v{r.version}, not latest)[/dim]"
        weak = " [yellow](weak match)[/yellow]" if r.weak else ""
        dated = f"dated {r.document_date:%Y-%m-%d} · " if r.document_date else ""
        added = f"added {r.ingested_at:%Y-%m-%d} · " if r.ingested_at else ""
        out.print(
            f"[bold]{rank}. {r.title or r.filename}[/bold]{badge}{weak}  [dim]{r.filename} · {r.file_id} · "
            f"{dated}{added}relevance {r.relevance:.2f}[/dim]"
        )
        if r.came_from:
            out.print(f"   [dim]from {r.came_from}[/dim]", highlight=False)
        for s in r.snippets[:2]:
            line = Text("   ")
            pos = 0
            for a, b in s.highlights:
                line.append(s.text[pos:a])
                line.append(s.text[a:b], style="bold yellow")
                pos = b
            line.append(s.text[pos:])
            line.append(f"  ({s.location.label()})", style="dim")
            out.print(line)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A question the files should answer.")],
    tenant: Tenant = "default",
    file: Annotated[str | None, typer.Option("--file", help="Only this file (its id).")] = None,
    tag: TagOpt = None,
    contact: ContactOpt = None,
    entity: EntityOpt = None,
    thread: ThreadOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=20, help="Passages to consider (1-20).")] = 6,
    as_json: Json = False,
) -> None:
    """A grounded answer: every sentence cited to a passage of a file in scope, or no answer."""
    from rich.text import Text

    from semfs.domain.models import Location
    from semfs.pipeline.query.ask import ask as run_ask

    if len(" ".join(question.split())) < 10:
        err.print("[red]the question is too short: ask in a sentence[/red]")
        raise typer.Exit(2)
    with opened(tenant) as c:
        filters = search_filters(c, tenant, tag=tag, contact=contact, thread=thread, entity=entity)
        if file:
            filters = filters.model_copy(update={"file_ids": [visible_record(c, tenant, file).file_id]})
        answer = run_ask(c, tenant, question, filters, limit)
        names = {x.file_id: c.repo.get(tenant, x.file_id).filename for x in answer.citations}
    if as_json:
        print(answer.model_dump_json(indent=2, exclude_none=True))
        return
    if answer.status != "answered":
        out.print(Text(f"no answer: {answer.reason}"))
        raise typer.Exit(1)
    # as text, never markup: "[link removed]" (and a file named "[bold]x") would be read as a style and vanish
    out.print(Text(answer.answer or ""))
    out.print()
    for n, cite in enumerate(answer.citations, start=1):
        where = Location.model_validate(cite.location).label()
        out.print(Text(f"[{n}] {names[cite.file_id]} v{cite.version}, {where} ({cite.file_id})"))
        out.print(Text(f"    “{cite.quote}”", style="dim"))


@app.command()
def context(
    subject: Annotated[str, typer.Option("--subject", help="The message's subject.")] = "",
    body: Annotated[str, typer.Option("--body", help="The message's text ('-' reads standard input).")] = "",
    tenant: Tenant = "default",
    contact: ContactOpt = None,
    thread: ThreadOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=20, help="How many files (1-20).")] = 5,
    as_json: Json = False,
) -> None:
    """The files an agent should know about when it answers this message, and why each matched."""
    from rich.text import Text

    from semfs.pipeline.query.ask import context as run_context

    if body == "-":
        body = sys.stdin.read()
    with opened(tenant) as c:
        items = run_context(c, tenant, subject, body, search_filters(c, tenant, contact=contact, thread=thread), limit)
    if as_json:
        print(json.dumps({"items": [item.model_dump() for item in items]}, indent=2))
        return
    if not items:
        out.print("nothing relevant (or the message is under 10 characters)")
    for item in items:
        out.print(f"[bold]{item.title or item.filename}[/bold]  [dim]{item.filename} · {item.file_id}[/dim]")
        out.print(Text(f"   {item.why}", style="dim"))


@app.command()
def entities(
    tenant: Tenant = "default",
    kind: Annotated[
        EntityKind | None, typer.Option("--kind", help="Only this kind: person, organisation, email, phone, money…")
    ] = None,
    q: Annotated[str | None, typer.Option("--q", help="Only entities whose name holds this.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="At most this many.")] = 50,
    as_json: Json = False,
) -> None:
    """The people, organisations, amounts, dates and identifiers your files name, in the most files first."""
    from rich.table import Table
    from rich.text import Text

    from semfs.pipeline.query.entities import list_entities

    with opened(tenant) as c:
        found = list_entities(c, tenant, kind, q, limit, readers=reader_tokens(c, tenant))
    if as_json:
        print(json.dumps([e.model_dump() for e in found], indent=2))
        return
    if not found:
        out.print(f"no entities in tenant '{tenant}'" + (f" of kind {kind}" if kind else ""))
        return
    table = Table(title=f"entities in tenant '{tenant}'")
    for col in ("entity", "kind", "files", "id"):
        table.add_column(col, overflow="fold")
    for e in found:
        kind_label = f"{e.kind} ({e.detail})" if e.detail else e.kind
        table.add_row(Text(e.label), kind_label, str(e.files), Text(e.entity_id, style="dim"))
    out.print(table)


@app.command()
def entity(
    name: Annotated[str, typer.Argument(help="The entity as a file writes it (Acme Corp, INV-2024-0042) or its id.")],
    tenant: Tenant = "default",
    as_json: Json = False,
) -> None:
    """One entity: the contact it is, the files that name it and where, and their mail threads."""
    from rich.text import Text

    from semfs.domain.errors import NotFound
    from semfs.pipeline.query.entities import entity_page

    with opened(tenant) as c:
        try:
            page = entity_page(c, tenant, name, readers=reader_tokens(c, tenant))
        except NotFound:
            err.print(f"[red]no file in tenant '{tenant}' names {name!r}[/red] (semfs entities lists what they name)")
            raise typer.Exit(1) from None
    if as_json:
        print(page.model_dump_json(indent=2))
        return
    e = page.entity
    out.print(
        Text.assemble(
            (e.label, "bold"), f"  {e.kind}" + (f" ({e.detail})" if e.detail else ""), (f"  {e.entity_id}", "dim")
        )
    )
    if page.contact:
        who = page.contact.name or page.contact.email
        address = f" <{page.contact.email}>" if page.contact.email and page.contact.name else ""
        org = f", {page.contact.organisation}" if page.contact.organisation else ""
        out.print(Text(f"contact: {who}{address}{org}"))
    out.print(f"named in {len(page.files)} file(s):")
    for f in page.files:
        out.print(
            Text.assemble(
                "  ", (f.title or f.filename, "bold"), (f"  {f.filename} · {f.file_id} · {f.location}", "dim")
            )
        )
    for t in page.threads:
        out.print(Text(f"thread: {t.subject} ({t.files} file(s))"))


@app.command()
def contacts(tenant: Tenant = "default", as_json: Json = False) -> None:
    """Contacts seen in mail, with how many files each is on (those you may read; a contact on none of them
    is not shown)."""
    from rich.table import Table

    from semfs.ports.repository import RecordQuery

    with opened(tenant) as c:
        rows = []
        tokens = reader_tokens(c, tenant)
        for contact in sorted(c.mail.contacts(tenant), key=lambda x: x.email):
            query = RecordQuery(tenant_id=tenant, readers=tokens, contact_id=contact.contact_id, limit=1000)
            files = c.repo.query(query)
            if tokens is not None and not files:
                continue  # a contact known only from files the caller may not read
            rows.append(
                {
                    "contact_id": contact.contact_id,
                    "email": contact.email,
                    "name": contact.name,
                    "organisation": contact.organisation,
                    "messages": contact.messages,
                    "files": len(files),
                }
            )
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        out.print(f"no contacts in tenant '{tenant}' (contacts come from ingested mail and --contact)")
        return
    table = Table(title=f"contacts in tenant '{tenant}'")
    for col in ("contact id", "name", "organisation", "messages", "files"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            *(str(r[k] or "") for k in ("contact_id", "name", "organisation")), str(r["messages"]), str(r["files"])
        )
    out.print(table)
