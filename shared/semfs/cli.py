"""``semfs …`` — the local command line. Honours ``SEMFS_DATA_DIR`` and ``--tenant``."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.domain.errors import NotFound, SemfsError
from semfs.domain.models import SearchFilters, SearchMode, SearchRequest, SearchResponse, SourceType
from semfs.pipeline import manage
from semfs.pipeline.ingest import ingest_bytes, resume
from semfs.pipeline.register import Provenance, Registered
from semfs.pipeline.search import search as run_search
from semfs.ports import Container

app = typer.Typer(add_completion=False, no_args_is_help=True, help="semfs — a semantic file system.")
out = Console()
err = Console(stderr=True)

Tenant = Annotated[str, typer.Option("--tenant", help="Tenant to act in.")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _container() -> Container:
    from semfs.observability import configure

    try:
        settings = Settings()
    except Exception as e:  # pydantic's ValidationError: show the message, not a traceback
        err.print(f"[red]configuration error:[/red] {e}")
        raise typer.Exit(2) from e
    configure()
    return build_container(settings)


@contextmanager
def _opened(tenant: str | None = None) -> Iterator[Container]:
    """The container for one command, closed (its worker stopped) however the command ends. A file
    that is not there, or a refused request, ends the command with one line and exit code 1."""
    c = _container()
    try:
        yield c
    except NotFound as e:
        err.print(f"[red]{e.reason}{f' in tenant {tenant}' if tenant else ''}[/red]")
        raise typer.Exit(1) from None
    except SemfsError as e:
        err.print(f"[red]{e.reason}[/red]")
        raise typer.Exit(1) from None
    finally:
        c.close()


def _files(paths: list[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
                )
            )
        elif path.is_file():
            found.append(path)
        else:
            err.print(f"[yellow]not found:[/yellow] {path}")
    return found


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders (recursive).")],
    tenant: Tenant = "default",
    contact: Annotated[list[str] | None, typer.Option("--contact", help="Contact name or email.")] = None,
    thread: Annotated[str | None, typer.Option("--thread", help="Thread subject.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Manual tag.")] = None,
    previous_version: Annotated[str | None, typer.Option("--previous-version", help="FILE_ID this replaces.")] = None,
    source_type: Annotated[str, typer.Option("--source-type", help="upload | agent_generated")] = "upload",
    as_json: Json = False,
) -> None:
    """Ingest files: extract, enrich, embed and index each, then print a table of outcomes."""
    if source_type not in ("upload", "agent_generated"):
        err.print("[red]--source-type must be upload or agent_generated[/red]")
        raise typer.Exit(2)
    c = _container()
    files = _files(paths)
    outcomes: Counter[str] = Counter()
    rows: list[dict[str, Any]] = []
    st: SourceType = "agent_generated" if source_type == "agent_generated" else "upload"
    prov = Provenance(
        source_type=st,
        thread_subject=thread,
        contacts=contact or [],
        tags=tag or [],
        previous_version_id=previous_version,
    )
    try:
        with (
            Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=err,
                transient=True,
                disable=as_json,
            ) as progress,
            c.index.batch(),
        ):  # keyword-index commits every few seconds, not per file
            task = progress.add_task("ingesting", total=len(files))
            for path in files:
                progress.update(task, description=f"ingesting {path.name[:40]}")
                try:
                    regs = _ingest_one(c, tenant, path, prov)
                except NotFound as e:
                    err.print(f"[red]{path}: {e.reason}[/red]")
                    raise typer.Exit(1) from e
                for reg in regs:
                    record = reg.record
                    created = reg.created
                    key = (record.outcome.value if record.outcome else record.status.value) if created else "UNCHANGED"
                    outcomes[key] += 1
                    rows.append(
                        {
                            "path": str(path)
                            if record.source_type != "email_attachment"
                            else f"{path}#{record.filename}",
                            "file_id": record.file_id,
                            "outcome": key,
                            "version": record.version,
                            "reason": record.error,
                        }
                    )
                progress.advance(task)
    finally:
        c.close()
    if as_json:
        print(json.dumps({"files": rows, "outcomes": dict(outcomes)}, indent=2))
        return
    table = Table(title=f"{len(files)} file(s) ingested into tenant '{tenant}'")
    table.add_column("outcome")
    table.add_column("files", justify="right")
    for key, n in sorted(outcomes.items()):
        table.add_row(key, str(n))
    out.print(table)
    for row in rows:
        if row["outcome"] not in ("OK", "UNCHANGED") and row["reason"]:
            out.print(f"  {row['outcome']}: {row['path']} — {row['reason']}")


MAIL_SUFFIXES = {".eml", ".mbox"}


def _ingest_one(c: Container, tenant: str, path: Path, prov: Provenance) -> list[Registered]:
    """A file, or — for .eml and .mbox — every attachment of every message in it."""
    from semfs.pipeline.mail import ingest_mail

    suffix = path.suffix.lower()
    if suffix == ".eml":
        return ingest_mail(c, tenant, path.read_bytes(), source="file").files
    if suffix == ".mbox":
        import mailbox

        regs: list[Registered] = []
        for message in mailbox.mbox(path, create=False):
            regs += ingest_mail(c, tenant, message.as_bytes(), source="file").files
        return regs
    # a file's identity and "same document" key is its absolute path: README.md in two folders are two files
    where = f"path:{path.resolve()}"
    return [ingest_bytes(c, tenant, path.read_bytes(), path.name, replace(prov, source_key=where, version_key=where))]


def _search_json(resp: SearchResponse) -> dict[str, Any]:
    return {
        "results": [
            {
                "file_id": r.file_id,
                "filename": r.filename,
                "title": r.title,
                "summary": r.summary,
                "score": r.score,
                "version": r.version,
                "tags": r.tags,
                "origin": r.origin,
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
    }


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for, in words.")],
    tenant: Tenant = "default",
    mode: Annotated[str, typer.Option("--mode", help="hybrid | keyword | semantic")] = "hybrid",
    limit: Annotated[int, typer.Option("--limit", min=1, max=100)] = 10,
    tag: Annotated[list[str] | None, typer.Option("--tag")] = None,
    source_type: Annotated[str | None, typer.Option("--source-type")] = None,
    contact: Annotated[str | None, typer.Option("--contact", help="Contact name, email or id.")] = None,
    thread: Annotated[str | None, typer.Option("--thread", help="Thread subject or id.")] = None,
    mime: Annotated[str | None, typer.Option("--mime")] = None,
    since: Annotated[str | None, typer.Option("--since", help="YYYY-MM-DD")] = None,
    until: Annotated[str | None, typer.Option("--until", help="YYYY-MM-DD")] = None,
    include_history: Annotated[bool, typer.Option("--include-history")] = False,
    as_json: Json = False,
) -> None:
    """Hybrid (BM25 + vectors), keyword or semantic search, grouped by file."""
    from pydantic import ValidationError

    from semfs.domain.ids import thread_id_for
    from semfs.pipeline.register import contact_id_for

    try:
        request = SearchRequest(
            query=query,
            limit=limit,
            mode=mode,
            filters=SearchFilters(
                tags=tag or [],
                source_type=source_type,
                contact_id=(contact if contact is None or contact.startswith("c_") else contact_id_for(contact)),
                thread_id=(thread if thread is None or thread.startswith("t_") else thread_id_for(tenant, thread)),
                mime_type=mime,
                date_from=date.fromisoformat(since) if since else None,
                date_to=date.fromisoformat(until) if until else None,
                include_history=include_history,
            ),
        )
    except (ValidationError, ValueError) as e:
        err.print(f"[red]invalid search:[/red] {e}")
        raise typer.Exit(2) from e
    with _opened() as c:
        resp = run_search(c, tenant, request)
    if as_json:
        print(json.dumps(_search_json(resp), indent=2, default=str))
        return
    if resp.degraded:
        out.print("[yellow]embeddings unavailable: keyword results only[/yellow]")
    if not resp.results:
        out.print("no results")
    for rank, r in enumerate(resp.results, start=1):
        badge = "" if r.is_latest else f" [dim](v{r.version}, not latest)[/dim]"
        out.print(
            f"[bold]{rank}. {r.title or r.filename}[/bold]{badge}  [dim]{r.filename} · {r.file_id} · "
            f"score {r.score:.4f}[/dim]"
        )
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
def show(file_id: str, tenant: Tenant = "default", as_json: Json = False) -> None:
    """A file's record: identity, provenance, meaning and outcome."""
    with _opened(tenant) as c:
        record = c.repo.get(tenant, file_id)
    data = record.model_dump(mode="json")
    if as_json:
        print(json.dumps(data, indent=2))
        return
    for key in (
        "file_id",
        "filename",
        "title",
        "summary",
        "tags",
        "auto_tags",
        "version",
        "is_latest",
        "previous_version_id",
        "change_summary",
        "source_type",
        "thread_id",
        "contact_ids",
        "status",
        "outcome",
        "error",
        "mime_type",
        "size_bytes",
        "pages",
        "chunk_count",
        "embedding_model",
        "created_at",
    ):
        value = data.get(key)
        if value not in (None, [], ""):
            out.print(f"[bold]{key}[/bold]: {value}")


@app.command()
def versions(
    file_id: str,
    tenant: Tenant = "default",
    as_json: Json = False,
    detach: Annotated[
        bool, typer.Option("--detach", help="Take this file out of its lineage: it becomes a document of its own.")
    ] = False,
    link_to: Annotated[
        str | None, typer.Option("--link-to", help="Make this file the next version of that file's lineage.")
    ] = None,
) -> None:
    """Every version of the file's lineage, oldest first, with change summaries (or detach/re-link it)."""
    if detach and link_to:
        err.print("[red]give --detach or --link-to, not both[/red]")
        raise typer.Exit(2)
    with _opened(tenant) as c:
        if detach:
            manage.detach_version(c, tenant, file_id)
        elif link_to:
            manage.link_version(c, tenant, file_id, link_to)
        record = c.repo.get(tenant, file_id)
        lineage = [v for v in c.repo.lineage(tenant, record.lineage_id) if v.deleted_at is None]
    if as_json:
        print(
            json.dumps(
                [
                    v.model_dump(
                        mode="json",
                        include={
                            "file_id",
                            "version",
                            "is_latest",
                            "filename",
                            "status",
                            "outcome",
                            "change_summary",
                            "created_at",
                        },
                    )
                    for v in lineage
                ],
                indent=2,
            )
        )
        return
    for v in lineage:
        latest = " [green]latest[/green]" if v.is_latest else ""
        out.print(f"v{v.version} {v.file_id} {v.filename} {v.status.value}{latest} {v.created_at:%Y-%m-%d %H:%M}")
        if v.change_summary:
            out.print(Text("   " + v.change_summary.replace("\n", "\n   "), style="dim"))


@app.command(context_settings={"ignore_unknown_options": True})
def tag(
    file_id: str,
    changes: Annotated[list[str], typer.Argument(help="+tag to add, -tag to remove")],
    tenant: Tenant = "default",
) -> None:
    """Add (+a) or remove (-b) manual tags."""
    add = [c[1:] for c in changes if c.startswith("+")]
    remove = [c[1:] for c in changes if c.startswith("-")]
    bad = [c for c in changes if not c.startswith(("+", "-"))]
    if bad:
        err.print(f"[red]each change must start with + or -: {' '.join(bad)}[/red]")
        raise typer.Exit(2)
    with _opened(tenant) as c:
        record = manage.set_tags(c, tenant, file_id, add, remove)
    out.print(f"tags: {', '.join(record.tags) or '(none)'}")


@app.command()
def rm(
    file_id: str,
    tenant: Tenant = "default",
    all_versions: Annotated[bool, typer.Option("--all-versions")] = False,
) -> None:
    """Delete a file: tombstone its record and remove it from the index."""
    with _opened(tenant) as c:
        removed = manage.delete_file(c, tenant, file_id, all_versions=all_versions)
    out.print(f"deleted {len(removed)} version(s)")


@app.command()
def status(tenant: Annotated[str | None, typer.Option("--tenant")] = None, as_json: Json = False) -> None:
    """Counts of files by status and outcome."""
    from semfs.pipeline.reembed import progress

    with _opened() as c:
        rows = manage.status_rows(c, tenant)
        reembedding = progress(c)
        active = c.index.active_model()
    if as_json:
        print(
            json.dumps(
                [{"status": s, "outcome": o, "count": n} for s, o, n in rows],
                indent=2,
            )
        )
        return
    table = Table(title="files by status and outcome" + (f" (tenant {tenant})" if tenant else ""))
    for col in ("status", "outcome", "files"):
        table.add_column(col)
    for s, o, n in rows:
        table.add_row(s, o or "-", str(n))
    out.print(table)
    out.print(f"searchable embedding model: {active or '(none yet)'}")
    if reembedding and reembedding["done"] < reembedding["total"]:
        out.print(
            f"re-embedding to {reembedding['model']}: {reembedding['done']}/{reembedding['total']}, "
            f"{reembedding['rate_per_s']} files/s, ETA {reembedding['eta_s']:.0f} s"
        )


@app.command()
def reindex() -> None:
    """Rebuild the search index from the records and stored blobs."""
    with _opened() as c:
        n = manage.reindex(c)
    out.print(f"reindexed {n} file(s)")


@app.command(name="reembed")
def reembed_cmd(
    file: Annotated[list[str] | None, typer.Option("--file", help="Only this file id (repeatable).")] = None,
    tag: Annotated[str | None, typer.Option("--tag", help="Only files with this tag.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="At most N files this run.")] = None,
) -> None:
    """Re-embed with the configured model (SEMFS_EMBEDDER / SEMFS_EMBEDDING_MODEL); searches switch to
    the new vectors in one step once every file has them."""
    from semfs.pipeline.reembed import reembed

    with _opened() as c:
        result = reembed(c, file_ids=file or [], tag=tag, limit=limit)
    out.print(
        f"{result['done']} of {result['total']} file(s) re-embedded with {result['model']}"
        + (f"; switched from {result['from_model']}" if result["switched"] else "")
        + (f"; {result['remaining']} remaining" if result["remaining"] else "")
    )


@app.command(name="reconcile")
def reconcile_cmd(
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only report what drifted.")] = False,
    as_json: Json = False,
) -> None:
    """Compare stored objects, records and the index; repair drift and report the counts."""
    from semfs.pipeline.reconcile import reconcile

    with _opened() as c:
        report = reconcile(c, repair=not dry_run)
    if as_json:
        print(json.dumps(report, indent=2))
        return
    for kind, counts in report.items():
        out.print(f"{kind.replace('_', ' ')}: found {counts['found']}, fixed {counts['fixed']}")


@app.command(name="resume")
def resume_cmd() -> None:
    """Finish files a crash left mid-pipeline."""
    with _opened() as c:
        done = resume(c)
    counts = Counter(r.outcome.value if r.outcome else r.status.value for r in done)
    out.print(f"resumed {len(done)} file(s): {dict(counts) or '{}'}")


@app.command(name="eval")
def eval_cmd(
    beir_dir: Annotated[Path, typer.Argument(help="A BEIR folder: corpus.jsonl[.gz], queries.jsonl, qrels/test.tsv")],
    mode: Annotated[str, typer.Option("--mode", help="hybrid | keyword | semantic | all")] = "hybrid",
    run_out: Annotated[Path | None, typer.Option("--run-out", help="Write a TREC run file.")] = None,
    max_docs: Annotated[int | None, typer.Option("--max-docs", help="Only the first N documents (smoke runs).")] = None,
    as_json: Json = False,
) -> None:
    """Retrieval quality on a BEIR set: nDCG@10, MRR@10, R@10, R@100."""
    from semfs.evaluation import evaluate

    modes: list[SearchMode] = ["keyword", "semantic", "hybrid"] if mode == "all" else [mode]  # type: ignore[list-item]
    try:
        settings = Settings()
    except Exception as e:
        err.print(f"[red]configuration error:[/red] {e}")
        raise typer.Exit(2) from e
    if not (beir_dir / "queries.jsonl").exists():
        err.print(f"[red]{beir_dir} is not a BEIR folder (no queries.jsonl)[/red]")
        raise typer.Exit(2)
    results = evaluate(settings, beir_dir, modes, run_out=run_out, max_docs=max_docs, progress=None if as_json else err)
    if as_json:
        print(json.dumps(results, indent=2))
        return
    table = Table(title=f"{beir_dir.name}: {results[0]['queries']} queries, {results[0]['documents']} documents")
    for col in ("mode", "nDCG@10", "MRR@10", "R@10", "R@100", "p50 ms", "p95 ms"):
        table.add_column(col)
    for r in results:
        table.add_row(
            r["mode"],
            f"{r['ndcg@10']:.4f}",
            f"{r['mrr@10']:.4f}",
            f"{r['recall@10']:.4f}",
            f"{r['recall@100']:.4f}",
            f"{r['latency_ms_p50']:.1f}",
            f"{r['latency_ms_p95']:.1f}",
        )
    out.print(table)


@app.command()
def demo(
    folder: Annotated[Path, typer.Option("--dir", help="Where to write the demo corpus.")] = Path(".semfs/demo"),
    tenant: Tenant = "default",
    ingest_it: Annotated[bool, typer.Option("--ingest/--no-ingest")] = True,
) -> None:
    """Generate the demo corpus (a fictional organisation's files) and ingest it."""
    from semfs.demo import ingest_demo, write_demo_corpus

    written = write_demo_corpus(folder)
    out.print(f"wrote {len(written)} demo files to {folder}")
    if not ingest_it:
        return
    with _opened() as c:
        counts = ingest_demo(c, tenant, folder, progress=err)
    out.print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


@app.command()
def serve(
    port: Annotated[int | None, typer.Option("--port", help="HTTP port (default SEMFS_HTTP_PORT, 8080).")] = None,
    smtp_port: Annotated[int | None, typer.Option("--smtp-port", help="Default SEMFS_SMTP_PORT (2525).")] = None,
) -> None:
    """Run semfs locally: the HTTP API and web page, and the SMTP listener for your mailboxes."""
    import time

    from semfs.server import ApiKeys, start_http, start_inbox, start_smtp

    c = _container()
    settings = c.settings
    keys = ApiKeys(settings.api_keys_file)
    if settings.default_tenant not in keys.tenants():
        key = keys.create(settings.default_tenant)
        out.print(f"API key for tenant '{settings.default_tenant}' (shown once): [bold]{key}[/bold]")
    http_port = port or settings.http_port
    static = Path(__file__).parent / "web"
    server = start_http(c, keys, settings.http_host, http_port, static if static.is_dir() else None)
    controller = start_smtp(c, settings.smtp_host, smtp_port or settings.smtp_port)
    inbox = start_inbox(c, settings.inbox_dir, settings.default_tenant)
    out.print(f"API and web page: http://{settings.http_host}:{http_port}/  (OpenAPI: /docs)")
    out.print(f"Drop folder: {settings.inbox_dir}/ (files appear in tenant '{settings.default_tenant}')")
    out.print(
        f"SMTP: {settings.smtp_host}:{smtp_port or settings.smtp_port} for "
        + (
            ", ".join(f"{a} → {t}" for a, t in settings.mailbox_tenants.items())
            or "no mailboxes (set SEMFS_MAILBOXES='files@localhost=default'; other recipients are refused)"
        )
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        inbox.set()
        server.shutdown()
        controller.stop()
        c.close()


tags_app = typer.Typer(help="The tag vocabulary: counts, merge suggestions, merges.", invoke_without_command=True)
app.add_typer(tags_app, name="tags")


@tags_app.callback()
def tags_list(
    ctx: typer.Context,
    tenant: Tenant = "default",
    suggest: Annotated[bool, typer.Option("--suggest", help="Show tags that probably mean the same.")] = False,
    as_json: Json = False,
) -> None:
    """Every tag with its manual and auto counts (or, with --suggest, merge candidates with evidence)."""
    if ctx.invoked_subcommand is not None:
        return
    from semfs.pipeline.tags import suggest_merges, vocabulary

    with _opened() as c:
        rows: list[dict[str, Any]] = (
            suggest_merges(c, tenant)
            if suggest
            else [{"tag": t.tag, "manual": t.manual, "auto": t.auto} for t in vocabulary(c, tenant)]
        )
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    for row in rows:
        if suggest:
            out.print(f"{row['merge']} → {row['into']}  ({'; '.join(row['reasons'])})")
        else:
            out.print(f"{row['tag']}  manual {row['manual']}  auto {row['auto']}")


@tags_app.command("merge")
def tags_merge(source: str, target: str, tenant: Tenant = "default") -> None:
    """Merge tag SOURCE into TARGET on every file; SOURCE keeps working as a search filter."""
    from semfs.pipeline.tags import merge

    c = _container()
    try:
        changed = merge(c, tenant, source, target)
    except SemfsError as e:
        err.print(f"[red]{e.reason}[/red]")
        raise typer.Exit(2) from None
    finally:
        c.close()
    out.print(f"merged '{source}' into '{target}' on {changed} file(s)")


keys_app = typer.Typer(help="Local API keys (each maps to one tenant).")
app.add_typer(keys_app, name="keys")


@keys_app.command("create")
def keys_create(tenant: Tenant = "default") -> None:
    """Create an API key for a tenant and print it (it is stored hashed; this is the only time it shows)."""
    from semfs.server import ApiKeys

    print(ApiKeys(Settings().api_keys_file).create(tenant))


@app.command()
def contacts(tenant: Tenant = "default", as_json: Json = False) -> None:
    """Contacts seen in mail, with how many files each is on."""
    from semfs.ports.repository import RecordQuery

    with _opened(tenant) as c:
        rows = []
        for contact in sorted(c.mail.contacts(tenant), key=lambda x: x.email):
            files = c.repo.query(RecordQuery(tenant_id=tenant, contact_id=contact.contact_id, limit=1000))
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
    table = Table(title=f"contacts in tenant '{tenant}'")
    for col in ("contact id", "name", "organisation", "messages", "files"):
        table.add_column(col)
    for r in rows:
        table.add_row(*(str(r[k] or "") for k in ("contact_id", "name", "organisation", "messages", "files")))
    out.print(table)


def main() -> None:
    app(prog_name="semfs")


if __name__ == "__main__":
    main()
