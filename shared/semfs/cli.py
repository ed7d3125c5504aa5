"""``semfs …`` — the local command line. Honours ``SEMFS_DATA_DIR`` and ``--tenant``."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from semfs.bootstrap import build_container
from semfs.config import Settings
from semfs.domain.errors import InvalidRequest, NotFound, SemfsError
from semfs.domain.models import Location, SearchFilters, SearchMode, SearchRequest, SearchResponse, SourceType
from semfs.domain.outcomes import Outcome
from semfs.domain.text import encodable
from semfs.pipeline import manage
from semfs.pipeline.ingest import ingest_bytes, resume
from semfs.pipeline.register import Provenance, Registered
from semfs.pipeline.search import search as run_search
from semfs.ports import Container

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: no boxes, no <bool> type column, readable when piped
    help="semfs — a semantic file system. Exit codes: 0 done, 1 a file or path failed, 2 a usage error.",
)


def _console(stderr: bool = False) -> Console:
    """A terminal gets its own width; a pipe gets lines that are never hard-wrapped at 80 columns."""
    stream = sys.stderr if stderr else sys.stdout
    return Console(stderr=stderr, width=None if stream.isatty() else 10_000, soft_wrap=not stream.isatty())


out = _console()
err = _console(stderr=True)

Tenant = Annotated[str, typer.Option("--tenant", help="Tenant to act in.")]
Json = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def _container(background_workers: int = 0, log_level: str = "WARNING", **overrides: Any) -> Container:
    from semfs.observability import configure

    try:
        settings = Settings(**overrides)
    except Exception as e:  # pydantic's ValidationError: show the message, not a traceback
        err.print(f"[red]configuration error:[/red] {_one_line(e)}")
        raise typer.Exit(2) from e
    configure(log_level)
    return build_container(settings, background_workers=background_workers)


@contextmanager
def _opened(tenant: str | None = None) -> Iterator[Container]:
    """The container for one command, closed (its worker stopped) however the command ends. A file
    that is not there ends the command with one line and exit code 1, a request that cannot be done as
    asked (an invalid tag, two files already in one lineage) with exit code 2."""
    c = _container()
    try:
        yield c
    except NotFound as e:
        err.print(f"[red]{e.reason}{f' in tenant {tenant}' if tenant else ''}[/red]")
        raise typer.Exit(1) from None
    except InvalidRequest as e:  # what was asked cannot be done as asked: a usage error
        err.print(f"[red]{e.reason}[/red]")
        raise typer.Exit(2) from None
    except SemfsError as e:
        err.print(f"[red]{e.reason}[/red]")
        raise typer.Exit(1) from None
    finally:
        c.close()


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        print(f"semfs {version('semfs')}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """semfs — a semantic file system."""


def _files(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """(files to ingest, paths that do not exist). Folders are walked recursively; dotfiles are
    skipped, and a symlink is followed only when its target stays inside the folder given."""
    found: list[Path] = []
    missing: list[Path] = []
    for path in paths:
        if path.is_dir():
            root = path.resolve()
            for p in sorted(path.rglob("*")):
                if any(part.startswith(".") for part in p.relative_to(path).parts) or not p.is_file():
                    continue
                if p.resolve().is_relative_to(root):
                    found.append(p)
                else:
                    err.print(f"[yellow]skipped: {p} links outside {path}[/yellow]")
        elif path.is_file():
            found.append(path)  # named on the command line: the caller means it
        else:
            missing.append(path)
            err.print(f"[red]not found: {path}[/red]")
    return found, missing


def _failed(outcome: str) -> bool:
    return outcome.startswith(("FAILED", "REJECTED"))


def _one_line(e: Exception) -> str:
    """A pydantic error as one line ("query: String should have at least 1 character")."""
    from pydantic import ValidationError

    if isinstance(e, ValidationError):
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"] if x not in ("filters",))
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return str(e)


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
    """Ingest files: extract, enrich, embed and index each, then print a table of outcomes.

    A file's identity is its absolute path: the same path with new content is its next version (if
    the text is plausibly a revision), the same name elsewhere is another document. Exit code 1 when
    a path does not exist or a file ended FAILED_* or REJECTED_* (see the table), else 0."""
    if source_type not in ("upload", "agent_generated"):
        err.print("[red]--source-type must be upload or agent_generated[/red]")
        raise typer.Exit(2)
    from semfs.domain.tags import manual_tag

    for t in tag or []:
        try:
            manual_tag(t)
        except ValueError as e:
            err.print(f"[red]--tag: {e}[/red]")
            raise typer.Exit(2) from None
    files, missing = _files(paths)
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
    with (
        _opened(tenant) as c,
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
            progress.update(task, description=f"ingesting {encodable(path.name)[:40]}")
            shown = encodable(str(path))  # a name the file system cannot decode is shown as ls -b would
            try:
                regs = _ingest_one(c, tenant, path, prov)
            except NotFound as e:
                err.print(f"[red]{shown}: {e.reason}[/red]")
                raise typer.Exit(1) from e
            except (OSError, SemfsError) as e:  # one unreadable file is that file's outcome, not the batch's end
                outcomes[Outcome.FAILED_INTERNAL.value] += 1
                reason = f"could not be read ({type(e).__name__})"
                rows.append(
                    {"path": shown, "file_id": None, "outcome": "FAILED_INTERNAL", "version": None, "reason": reason}
                )
                progress.advance(task)
                continue
            for reg in regs:
                record = reg.record
                created = reg.created
                key = (record.outcome.value if record.outcome else record.status.value) if created else "UNCHANGED"
                outcomes[key] += 1
                rows.append(
                    {
                        "path": shown if record.source_type != "email_attachment" else f"{shown}#{record.filename}",
                        "file_id": record.file_id,
                        "outcome": key,
                        "version": record.version,
                        "reason": record.error,
                    }
                )
            progress.advance(task)
    code = 1 if missing or any(_failed(k) for k in outcomes) else 0
    if as_json:
        report = {
            "files": rows,
            "outcomes": dict(outcomes),
            "missing": [encodable(str(p)) for p in missing],
            "exit_code": code,
        }
        print(json.dumps(report, indent=2))
        raise typer.Exit(code)
    table = Table(title=f"{len(files)} file(s) ingested into tenant '{tenant}'")
    table.add_column("outcome")
    table.add_column("files", justify="right")
    for key, n in sorted(outcomes.items()):
        table.add_row(key, str(n))
    if missing:
        table.add_row("NOT_FOUND", str(len(missing)))
    out.print(table)
    for row in rows:
        if row["outcome"] not in ("OK", "UNCHANGED") and row["reason"]:
            out.print(f"  {row['outcome']}: {row['path']} — {row['reason']}")
    raise typer.Exit(code)


MAIL_SUFFIXES = {".eml", ".mbox", ".msg"}


def _ingest_one(c: Container, tenant: str, path: Path, prov: Provenance) -> list[Registered]:
    """A file, or — for .eml, .mbox and Outlook .msg — every attachment of every message in it."""
    from semfs.pipeline.mail import ingest_mail

    suffix = path.suffix.lower()
    if suffix == ".eml":
        return ingest_mail(c, tenant, path.read_bytes(), source="file").files
    if suffix == ".msg":  # Outlook's container, read as the MIME message it holds: same threads and contacts
        from semfs.extractors.email import msg_to_mime

        return ingest_mail(c, tenant, msg_to_mime(path.read_bytes()), source="file").files
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
    }


ModeOpt = Annotated[
    Literal["hybrid", "keyword", "semantic"],
    typer.Option("--mode", help="hybrid (BM25 and vectors, fused; the default), keyword or semantic."),
]
TagOpt = Annotated[
    list[str] | None, typer.Option("--tag", help="Only files with this tag (repeatable: all must match).")
]
SourceOpt = Annotated[
    Literal["upload", "email_attachment", "agent_generated"] | None,
    typer.Option("--source-type", help="Only files from this source."),
]
ContactOpt = Annotated[str | None, typer.Option("--contact", help="Only files with this contact: name, email or id.")]
ThreadOpt = Annotated[str | None, typer.Option("--thread", help="Only files of this thread: its subject or id.")]
MimeOpt = Annotated[str | None, typer.Option("--mime", help="Only files of this MIME type (application/pdf, …).")]
SinceOpt = Annotated[str | None, typer.Option("--since", help="Only files from this date on (YYYY-MM-DD).")]
UntilOpt = Annotated[str | None, typer.Option("--until", help="Only files up to this date (YYYY-MM-DD).")]
HistoryOpt = Annotated[bool, typer.Option("--include-history", help="Also older versions, not only the latest.")]


def _day(value: str | None, option: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        err.print(f"[red]{option}: give a date as YYYY-MM-DD, not {value!r}[/red]")
        raise typer.Exit(2) from None


def _filters(
    c: Container,
    tenant: str,
    *,
    tag: list[str] | None = None,
    source_type: str | None = None,
    contact: str | None = None,
    thread: str | None = None,
    mime: str | None = None,
    since: str | None = None,
    until: str | None = None,
    include_history: bool = False,
) -> SearchFilters:
    """The search filters from what a person typed: names resolve to ids (``pipeline/names``)."""
    from semfs.pipeline import names

    return SearchFilters(
        tags=tag or [],
        source_type=source_type,
        contact_id=names.contact_id(c, tenant, contact),
        thread_id=names.thread_id(c, tenant, thread),
        mime_type=mime,
        date_from=_day(since, "--since"),
        date_to=_day(until, "--until"),
        include_history=include_history,
    )


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for, in words.")],
    tenant: Tenant = "default",
    mode: ModeOpt = "hybrid",
    limit: Annotated[int, typer.Option("--limit", min=1, max=100, help="How many files (1-100).")] = 10,
    tag: TagOpt = None,
    source_type: SourceOpt = None,
    contact: ContactOpt = None,
    thread: ThreadOpt = None,
    mime: MimeOpt = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    include_history: HistoryOpt = False,
    as_json: Json = False,
) -> None:
    """Hybrid (BM25 + vectors), keyword or semantic search, grouped by file."""
    if not query.strip():
        err.print("[red]the query is empty: say what you are looking for[/red]")
        raise typer.Exit(2)
    if len(query) > 2000:
        err.print("[red]the query is longer than 2,000 characters[/red]")
        raise typer.Exit(2)
    with _opened() as c:
        request = SearchRequest(
            query=query,
            limit=limit,
            mode=mode,
            filters=_filters(
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
            ),
        )
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
        dated = f"dated {r.document_date:%Y-%m-%d} · " if r.document_date else ""
        added = f"added {r.ingested_at:%Y-%m-%d} · " if r.ingested_at else ""
        out.print(
            f"[bold]{rank}. {r.title or r.filename}[/bold]{badge}  [dim]{r.filename} · {r.file_id} · "
            f"{dated}{added}score {r.score:.4f}[/dim]"
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
    all_versions: Annotated[
        bool, typer.Option("--all-versions", help="Every version of the document, not only this one.")
    ] = False,
) -> None:
    """Delete a file: tombstone its record and remove it from the index."""
    with _opened(tenant) as c:
        removed = manage.delete_file(c, tenant, file_id, all_versions=all_versions)
    out.print(f"deleted {len(removed)} version(s)")


@app.command()
def status(
    tenant: Annotated[str | None, typer.Option("--tenant", help="Only this tenant (default: all).")] = None,
    as_json: Json = False,
) -> None:
    """Counts of files by status and outcome."""
    from semfs.pipeline.reembed import progress

    with _opened() as c:
        rows = manage.status_rows(c, tenant)
        reembedding = progress(c)
        active = c.index.active_model()
        queue = {t: manage.jobs_view(c, t) for t in ([tenant] if tenant else c.repo.tenants())}
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
    for t, view in queue.items():
        if view["jobs"]:
            counts = ", ".join(f"{k} {n}" for k, n in view["counts"].items())
            out.print(f"in the queue for tenant {t}: {counts} (semfs cancel FILE_ID takes a queued file out)")
    out.print(f"searchable embedding model: {active or '(none yet)'}")
    walk = (reembedding or {}).get("walk") or {}
    if reembedding and walk and not walk.get("finished"):
        eta = f", ETA {reembedding['eta_s']:.0f} s" if reembedding.get("eta_s") is not None else ""
        out.print(
            f"re-embedding to {reembedding['model']}: {walk.get('walked', 0)} of {walk.get('total', 0)} files "
            f"walked, {reembedding['done']} re-embedded in the last pass ({reembedding['rate_per_s']} files/s{eta})"
        )


@app.command()
def retry(file_id: str, tenant: Tenant = "default") -> None:
    """Run a failed file through the pipeline again (a new attempt)."""
    from semfs.pipeline.ingest import retry as run_again

    with _opened(tenant) as c:
        record = run_again(c, tenant, file_id)
    outcome = record.outcome.value if record.outcome else record.status.value
    out.print(f"{record.file_id} {record.filename}: {outcome}" + (f" — {record.error}" if record.error else ""))
    if outcome.startswith(("FAILED", "REJECTED")):
        raise typer.Exit(1)


@app.command()
def cancel(file_id: str, tenant: Tenant = "default") -> None:
    """Take a file that semfs serve has queued, and not started, out of the queue."""
    with _opened(tenant) as c:
        record = manage.cancel(c, tenant, file_id)
    out.print(f"cancelled {record.file_id} ({record.filename})")


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
        f"{result['done']} file(s) re-embedded with {result['model']}"
        + (f"; switched from {result['from_model']}" if result["switched"] else "")
        + (f"; {result['remaining']} remaining" if result["remaining"] else "")
        + (
            "; more to do (the walk over the archive stopped at --limit): run it again to go on"
            if result["remaining"] is None
            else ""
        )
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
    """Finish files a crash left mid-pipeline (every stage is idempotent, so they restart safely)."""
    with _opened() as c:
        done = resume(c)
    if not done:
        out.print("nothing to resume: no file was left mid-pipeline")
        return
    counts = Counter(r.outcome.value if r.outcome else r.status.value for r in done)
    out.print(f"resumed {len(done)} file(s): " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    for r in done:
        out.print(f"  {r.file_id} {r.filename}: {r.outcome.value if r.outcome else r.status.value}")


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
    workers: Annotated[int, typer.Option("--workers", min=1, max=16, help="Files processed at once.")] = 2,
) -> None:
    """Run semfs locally: the HTTP API and web page, and the SMTP listener for your mailboxes."""
    import time

    from semfs.server import ApiKeys, start_http, start_inbox, start_smtp

    overrides: dict[str, Any] = {"http_port": port} if port else {}
    if smtp_port:
        overrides["smtp_port"] = smtp_port
    # uploads, mail and the drop folder queue their files for these workers: no request waits on one
    c = _container(background_workers=workers, log_level="INFO", **overrides)  # a server's log is its output
    settings = c.settings
    keys = ApiKeys(settings.api_keys_file)
    if settings.default_tenant not in keys.tenants():
        key = keys.create(settings.default_tenant)
        out.print(f"API key for tenant '{settings.default_tenant}' (shown once): [bold]{key}[/bold]")
    else:
        out.print(
            f"API keys exist for tenant '{settings.default_tenant}' (stored hashed): "
            f"semfs keys create --tenant {settings.default_tenant} makes a new one, semfs keys list shows them"
        )
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

    with _opened(tenant) as c:
        changed = merge(c, tenant, source, target)
    out.print(f"merged '{source}' into '{target}' on {changed} file(s)")


keys_app = typer.Typer(help="Local API keys (each maps to one tenant).")
app.add_typer(keys_app, name="keys")


@keys_app.command("list")
def keys_list() -> None:
    """Every local API key by fingerprint and tenant (the keys themselves are stored hashed)."""
    from semfs.server import ApiKeys

    rows = ApiKeys(Settings().api_keys_file).list()
    if not rows:
        out.print("no API keys yet: semfs serve creates one, or semfs keys create --tenant NAME")
    for fingerprint, tenant in rows:
        out.print(f"{fingerprint}  {tenant}")


@keys_app.command("revoke")
def keys_revoke(
    key: Annotated[str, typer.Argument(help="The key, or its fingerprint from 'semfs keys list'.")],
) -> None:
    """Revoke an API key: requests with it get 401 from now on."""
    from semfs.server import ApiKeys

    if not ApiKeys(Settings().api_keys_file).revoke(key):
        err.print("[red]no such key (give the key or at least 8 characters of its fingerprint)[/red]")
        raise typer.Exit(1)
    out.print("revoked")


@keys_app.command("create")
def keys_create(tenant: Tenant = "default") -> None:
    """Create an API key for a tenant and print it (it is stored hashed; this is the only time it shows)."""
    from semfs.server import ApiKeys

    print(ApiKeys(Settings().api_keys_file).create(tenant))


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="A question the files should answer.")],
    tenant: Tenant = "default",
    file: Annotated[str | None, typer.Option("--file", help="Only this file (its id).")] = None,
    tag: TagOpt = None,
    contact: ContactOpt = None,
    thread: ThreadOpt = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=20, help="Passages to consider (1-20).")] = 6,
    as_json: Json = False,
) -> None:
    """A grounded answer: every sentence cited to a passage of a file in scope, or no answer."""
    from semfs.pipeline.ask import ask as run_ask

    if len(" ".join(question.split())) < 10:
        err.print("[red]the question is too short: ask in a sentence[/red]")
        raise typer.Exit(2)
    with _opened(tenant) as c:
        filters = _filters(c, tenant, tag=tag, contact=contact, thread=thread)
        if file:
            filters = filters.model_copy(update={"file_ids": [c.repo.get(tenant, file).file_id]})
        answer = run_ask(c, tenant, question, filters, limit)
        names = {x["file_id"]: c.repo.get(tenant, x["file_id"]).filename for x in answer.get("citations", [])}
    if as_json:
        print(json.dumps(answer, indent=2))
        return
    if answer["status"] != "answered":
        out.print(f"no answer: {answer['reason']}")
        raise typer.Exit(1)
    out.print(answer["answer"])
    out.print()
    for n, cite in enumerate(answer["citations"], start=1):
        where = Location.model_validate(cite["location"]).label()
        out.print(f"[{n}] {names[cite['file_id']]} v{cite['version']}, {where} ({cite['file_id']})")
        out.print(Text(f"    “{cite['quote']}”", style="dim"))


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
    from semfs.pipeline.ask import context as run_context

    if body == "-":
        body = sys.stdin.read()
    with _opened(tenant) as c:
        items = run_context(c, tenant, subject, body, _filters(c, tenant, contact=contact, thread=thread), limit)
    if as_json:
        print(json.dumps({"items": items}, indent=2))
        return
    if not items:
        out.print("nothing relevant (or the message is under 10 characters)")
    for item in items:
        out.print(
            f"[bold]{item['title'] or item['filename']}[/bold]  [dim]{item['filename']} · {item['file_id']}[/dim]"
        )
        out.print(Text(f"   {item['why']}", style="dim"))


@app.command(name="ls")
def ls_cmd(
    tenant: Tenant = "default",
    tag: Annotated[str | None, typer.Option("--tag", help="Only files with this tag.")] = None,
    source_type: SourceOpt = None,
    contact: ContactOpt = None,
    thread: ThreadOpt = None,
    status: Annotated[
        Literal["received", "indexed", "failed", "skipped", "deleted"] | None,
        typer.Option("--status", help="Only files in this status."),
    ] = None,
    since: SinceOpt = None,
    until: UntilOpt = None,
    sort: Annotated[
        Literal["newest", "oldest", "name", "size"], typer.Option("--sort", help="Order of the list.")
    ] = "newest",
    limit: Annotated[int, typer.Option("--limit", min=1, max=10_000, help="At most this many.")] = 50,
    all_versions: Annotated[bool, typer.Option("--all-versions", help="Older versions too.")] = False,
    as_json: Json = False,
) -> None:
    """List files (latest versions, newest first), with the same filters as search."""
    from datetime import UTC, datetime

    from semfs.domain.outcomes import Status
    from semfs.pipeline import names
    from semfs.ports.repository import RecordQuery

    day_from, day_to = _day(since, "--since"), _day(until, "--until")
    with _opened(tenant) as c:
        query = RecordQuery(
            tenant_id=tenant,
            statuses=[Status(status)] if status else [],
            tag=tag,
            source_type=source_type,
            contact_id=names.contact_id(c, tenant, contact),
            thread_id=names.thread_id(c, tenant, thread),
            latest_only=not all_versions,
            include_deleted=status == "deleted",
            created_from=datetime(day_from.year, day_from.month, day_from.day, tzinfo=UTC) if day_from else None,
            created_to=datetime(day_to.year, day_to.month, day_to.day, 23, 59, 59, tzinfo=UTC) if day_to else None,
            order=sort,
            limit=limit,
        )
        records = c.repo.query(query)
    if as_json:
        keep = {"file_id", "filename", "title", "version", "is_latest", "status", "outcome", "size_bytes", "created_at"}
        print(json.dumps([r.model_dump(mode="json", include=keep) for r in records], indent=2))
        return
    if not records:
        out.print("no files")
    for r in records:
        outcome = r.outcome.value if r.outcome else r.status.value
        out.print(
            f"{r.file_id}  {r.created_at:%Y-%m-%d %H:%M}  {_size(r.size_bytes):>8}  v{r.version}  {outcome:<18} "
            f"{r.filename}" + (f"  [dim]{r.title}[/dim]" if r.title and r.title != r.filename else "")
        )


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


@app.command(name="cat")
def cat_cmd(file_id: str, tenant: Tenant = "default") -> None:
    """The text semfs extracted from a file (OCR included), block by block."""
    from semfs.pipeline.state import load_document

    with _opened(tenant) as c:
        doc = load_document(c, c.repo.get(tenant, file_id))
    print(doc.text)


@app.command(name="get")
def get_cmd(
    file_id: str,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Where to write it (default: its filename here; - = stdout).")
    ] = None,
    tenant: Tenant = "default",
) -> None:
    """The original file as it was ingested."""
    with _opened(tenant) as c:
        record = c.repo.get(tenant, file_id)
        if not record.blob_key:
            why = record.outcome.value if record.outcome else "-"
            err.print(f"[red]the original of {file_id} was not stored ({why})[/red]")
            raise typer.Exit(1)
        data = c.blobs.get(record.blob_key)
    if output is not None and str(output) == "-":
        sys.stdout.buffer.write(data)
        return
    target = output or Path(record.filename)
    if target.is_dir():
        target = target / record.filename
    target.write_bytes(data)
    err.print(f"wrote {len(data)} bytes to {target}")


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
