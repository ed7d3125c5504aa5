"""Files: ingest, list, show, read, fetch, version, tag and delete them."""

import json
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from semfs.cli.common import (
    ContactOpt,
    EntityOpt,
    Json,
    SinceOpt,
    SourceOpt,
    Tenant,
    ThreadOpt,
    UntilOpt,
    acting,
    app,
    caller,
    day,
    err,
    failed,
    human_size,
    opened,
    out,
    reader_tokens,
    visible_record,
)
from semfs.domain.access import SHARE_HELP

if TYPE_CHECKING:  # the commands import what they use when they run: `semfs --help` stays fast
    from semfs.pipeline.intake.register import Provenance, Registered
    from semfs.ports import Container


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
            err.print(f"[red]no such path: {path}[/red]")
    return found, missing


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders (recursive).")],
    tenant: Tenant = "default",
    contact: Annotated[list[str] | None, typer.Option("--contact", help="Contact name or email.")] = None,
    thread: Annotated[str | None, typer.Option("--thread", help="Thread subject.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Manual tag.")] = None,
    previous_version: Annotated[str | None, typer.Option("--previous-version", help="FILE_ID this replaces.")] = None,
    source_type: Annotated[str, typer.Option("--source-type", help="upload | agent_generated")] = "upload",
    share_with: Annotated[
        list[str] | None, typer.Option("--share-with", help="Who else may read them: " + SHARE_HELP)
    ] = None,
    as_json: Json = False,
) -> None:
    """Ingest files: extract, enrich, embed and index each, then print a table of outcomes.

    The files are the acting user's (``--user``), shared with what ``--share-with`` names, or with the
    tenant's default (SEMFS_DEFAULT_SHARE: private); in a tenant without users, with everyone.

    A file's identity is its absolute path: the same path with new content is its next version (if
    the text is plausibly a revision), the same name elsewhere is another document. On a terminal a
    progress bar runs; piped, a line per finished file. Exit code 1 when a path does not exist or a
    file ended FAILED_* or REJECTED_* (see the table), else 0 (a folder with no files in it included)."""
    from semfs.domain.errors import InvalidRequest
    from semfs.pipeline.intake.register import Provenance

    try:  # checked before any file is read: the same check as POST /files and ingest_agent_file
        prov = Provenance.from_caller(
            source_type=source_type,
            tags=tag or [],
            thread_subject=thread,
            contacts=contact or [],
            previous_version_id=previous_version,
        )
    except InvalidRequest as e:  # said with the option's name: "--tag: …", "--source-type must be …"
        err.print(f"[red]{e.reason.replace('tags:', '--tag:').replace('source_type', '--source-type')}[/red]")
        raise typer.Exit(2) from None
    prov = _shared(tenant, prov, share_with or [])
    files, missing = _files(paths)
    if not files:  # nothing to do: said, not an empty table ("0 of 0 file(s)")
        _nothing_found(paths, missing, as_json)
    rows = _ingest_all(tenant, files, prov, quiet=as_json)
    outcomes = Counter(str(row["outcome"]) for row in rows)
    code = 1 if missing or any(failed(k) for k in outcomes) else 0
    if as_json:
        from semfs.domain.text import encodable

        report = {
            "files": rows,
            "outcomes": dict(outcomes),
            "missing": [encodable(str(p)) for p in missing],
            "exit_code": code,
        }
        print(json.dumps(report, indent=2))
        raise typer.Exit(code)
    _summary(tenant, rows, outcomes, missing)
    raise typer.Exit(code)


def _shared(tenant: str, prov: "Provenance", share_with: list[str]) -> "Provenance":
    """The provenance with who may read the files: the acting user's, and what ``--share-with`` names."""
    from dataclasses import replace

    from semfs.domain.access import parse_share
    from semfs.pipeline.principals import new_file_access

    with opened(tenant, create=True) as c:
        shared = parse_share(share_with)
        principal = acting(c, tenant)
        return replace(prov, access=new_file_access(c, principal, shared), viewer=principal.tokens())


def _nothing_found(paths: list[Path], missing: list[Path], as_json: bool) -> None:
    """End an ingest that found no file: exit 1 when a path is not there, 0 for folders that are empty
    (an inbox folder a scheduled job ingests is often empty, and that is no failure)."""
    from semfs.domain.text import encodable

    folders = [encodable(str(p)) for p in paths if p not in missing]
    if as_json:
        report = {"files": [], "outcomes": {}, "missing": [encodable(str(p)) for p in missing]}
        print(json.dumps({**report, "exit_code": 1 if missing else 0}, indent=2))
    elif folders:
        err.print(f"no files found in {', '.join(folders)} (names starting with a dot are skipped): nothing ingested")
    raise typer.Exit(1 if missing else 0)


def _ingest_all(tenant: str, files: list[Path], prov: "Provenance", *, quiet: bool) -> list[dict[str, Any]]:
    """Ingest each file, one row per stored file. On a terminal a progress bar (on stderr) follows it;
    piped, a line per finished file is written as it finishes (`semfs ingest DIR > log` is not silent)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from semfs.domain.features import require
    from semfs.domain.text import encodable
    from semfs.priority import each_lowered

    lines = not quiet and not sys.stdout.isatty()
    with (
        opened(tenant, create=True) as c,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err.console,
            transient=True,
            disable=quiet or lines,
        ) as progress,
        c.index.batch(),
    ):  # keyword-index commits every few seconds, not per file
        require(c.settings, "ingest")  # switched off: one line and exit 1 (opened), before any file is read
        task = progress.add_task("ingesting", total=len(files))
        width = len(str(len(files)))
        by_file: dict[int, list[dict[str, Any]]] = {}
        # a few files at once (SEMFS_INGEST_FILES_AT_ONCE), on threads at SEMFS_INGEST_NICE: while one file's
        # chunks are in the embedding model, which cannot keep both cores busy on a file's short passes and
        # lets go of the GIL, the next file is read, enriched and chunked
        limits = c.settings.limits
        each = each_lowered(
            limits.ingest_nice,
            lambda i: _ingest_path(c, tenant, files[i], prov),
            range(len(files)),
            _at_once(files, prov, limits.ingest_files_at_once),
        )
        shown = 0  # piped, the lines come in the files' order: a file's line waits at most for the one beside it
        for i, done in each:
            by_file[i] = done
            while lines and shown in by_file:
                shown += 1
                for row in by_file[shown - 1]:
                    out.print(f"[{shown:>{width}}/{len(files)}] {row['outcome']:<18} {row['path']}", highlight=False)
            progress.update(task, description=f"ingested {encodable(files[i].name)[:40]}")
            progress.advance(task)
    return [row for i in range(len(files)) for row in by_file.get(i, [])]  # the report in the files' order


def _at_once(files: list[Path], prov: "Provenance", most: int) -> int:
    """How many files may be in flight: one where the order they are registered in decides what they become.
    Every file named with ``--previous-version`` becomes the lineage's next version, and a mail's attachments
    join their thread's files of the same name: those go in the order given, as they did one at a time. Any
    other file is a document of its own path (its next version is the same path again), whatever finishes first."""
    ordered = prov.previous_version_id or any(p.suffix.lower() in MAIL_SUFFIXES for p in files)
    return 1 if ordered else most


def _ingest_path(c: "Container", tenant: str, path: Path, prov: "Provenance") -> list[dict[str, Any]]:
    """One path's rows: a file, or a mail's attachments. An unreadable file is that file's outcome,
    not the batch's end; a previous version that is not there ends the command (exit 1)."""
    from semfs.domain.errors import NotFound, RequestError, SemfsError
    from semfs.domain.outcomes import Outcome
    from semfs.domain.text import encodable

    shown = encodable(str(path))  # a name the file system cannot decode is shown as ls -b would
    try:
        # on a thread at SEMFS_INGEST_NICE: a search beside it gets the cores first, and the caller's
        # process (semfs used as a library) keeps its own priority
        regs = _ingest_one(c, tenant, path, prov)
    except NotFound as e:
        err.print(f"[red]{shown}: {e.reason}[/red]")
        raise typer.Exit(1) from e
    except (OSError, SemfsError) as e:
        reason = e.reason if isinstance(e, RequestError) else f"could not be read ({type(e).__name__})"
        failed_row = {"path": shown, "file_id": None, "version": None, "reason": reason}
        return [{**failed_row, "outcome": Outcome.FAILED_INTERNAL.value}]
    rows: list[dict[str, Any]] = []
    for reg in regs:
        record = reg.record
        outcome = record.outcome.value if record.outcome else record.status.value
        key = outcome if reg.created else "RESTORED" if reg.restored else "UNCHANGED"
        rows.append(
            {
                "path": shown if record.source_type != "email_attachment" else f"{shown}#{record.filename}",
                "file_id": record.file_id,
                "outcome": key,
                "version": record.version,
                "reason": record.error,
            }
        )
    return rows


def _summary(tenant: str, rows: list[dict[str, Any]], outcomes: Counter[str], missing: list[Path]) -> None:
    """What happened, not how many were tried: "3 file(s) ingested" when all three were skipped."""
    from rich.table import Table

    stored = sum(n for k, n in outcomes.items() if k.startswith("OK") or k == "RESTORED")
    title = f"{stored} of {len(rows)} file(s) stored and searchable in tenant '{tenant}'"
    if outcomes.get("UNCHANGED"):
        title += f" ({outcomes['UNCHANGED']} already there)"
    if outcomes.get("RESTORED"):
        title += f" ({outcomes['RESTORED']} back from the trash)"
    table = Table(title=title)
    table.add_column("outcome")
    table.add_column("files", justify="right")
    for key, n in sorted(outcomes.items()):
        table.add_row(key, str(n))
    if missing:
        table.add_row("NOT_FOUND", str(len(missing)))
    out.print(table)
    for row in rows:
        if row["outcome"] not in ("OK", "UNCHANGED", "RESTORED") and row["reason"]:
            out.print(f"  {row['outcome']}: {row['path']} — {row['reason']}")


MAIL_SUFFIXES = {".eml", ".mbox", ".msg"}


def _ingest_one(c: "Container", tenant: str, path: Path, prov: "Provenance") -> list["Registered"]:
    """A file, or — for .eml, .mbox and Outlook .msg — every attachment of every message in it."""
    from dataclasses import replace

    from semfs.pipeline.intake.ingest import ingest_bytes
    from semfs.pipeline.intake.mail import ingest_mail

    suffix = path.suffix.lower()
    if suffix == ".eml":
        return ingest_mail(c, tenant, path.read_bytes(), source="file").files
    if suffix == ".msg":  # Outlook's container, read as the MIME message it holds: same threads and contacts
        from semfs.extractors.email import msg_to_mime

        return ingest_mail(c, tenant, msg_to_mime(path.read_bytes()), source="file").files
    if suffix == ".mbox":
        import mailbox

        regs = []
        for message in mailbox.mbox(path, create=False):
            regs += ingest_mail(c, tenant, message.as_bytes(), source="file").files
        return regs
    # a file's identity and "same document" key is its absolute path: README.md in two folders are two files
    where = f"path:{path.resolve()}"
    return [ingest_bytes(c, tenant, path.read_bytes(), path.name, replace(prov, source_key=where, version_key=where))]


@app.command()
def show(file_id: str, tenant: Tenant = "default", as_json: Json = False) -> None:
    """A file's record: identity, provenance, meaning and outcome."""
    from rich.text import Text

    with opened(tenant) as c:
        record = visible_record(c, tenant, file_id)
    data = {**record.model_dump(mode="json"), "came_from": record.came_from}
    if as_json:
        print(json.dumps(data, indent=2))
        return
    for key in (
        "file_id",
        "filename",
        "came_from",
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
        "keyword_chunks",
        "embedding_model",
        "created_at",
    ):
        value = data.get(key)
        if value not in (None, [], "") and not (key == "keyword_chunks" and value == 0):
            out.print(f"[bold]{key}[/bold]: {value}")
    for n in record.notes:
        out.print(Text.assemble(("note", "bold"), f": {n.text} ({n.author or 'unsigned'}, {n.at:%Y-%m-%d})"))


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
    from rich.text import Text

    from semfs.pipeline.catalogue.versions import detach_version, link_version

    if detach and link_to:
        err.print("[red]give --detach or --link-to, not both[/red]")
        raise typer.Exit(2)
    with opened(tenant) as c:
        if detach:
            detach_version(c, tenant, file_id, by=caller())
        elif link_to:
            link_version(c, tenant, file_id, link_to, by=caller())
        record = visible_record(c, tenant, file_id)
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
    from semfs.pipeline.catalogue.files import set_tags

    add = [c[1:] for c in changes if c.startswith("+")]
    remove = [c[1:] for c in changes if c.startswith("-")]
    bad = [c for c in changes if not c.startswith(("+", "-"))]
    if bad:
        err.print(f"[red]each change must start with + or -: {' '.join(bad)}[/red]")
        raise typer.Exit(2)
    with opened(tenant) as c:
        record = set_tags(c, tenant, file_id, add, remove, by=caller())
    out.print(f"tags: {', '.join(record.tags) or '(none)'}")


@app.command()
def note(
    file_id: str,
    text: Annotated[str | None, typer.Argument(help="The note (plain text); leave out to list the notes.")] = None,
    remove: Annotated[str | None, typer.Option("--remove", help="Remove the note with this id.")] = None,
    tenant: Tenant = "default",
) -> None:
    """Add a note to a file, list its notes, or remove one; search finds a file by its notes."""
    from rich.text import Text

    from semfs.pipeline.catalogue import notes

    with opened(tenant) as c:
        if remove:
            record = notes.remove_note(c, tenant, file_id, remove, by=caller())
        elif text is not None:
            record = notes.add_note(c, tenant, file_id, text, author=caller())
        else:
            record = visible_record(c, tenant, file_id)
    if not record.notes:
        out.print("no notes")
    for n in record.notes:
        out.print(Text(f"{n.note_id}  {n.at:%Y-%m-%d %H:%M}  {n.author or ''}", style="dim"))
        out.print(Text("  " + n.text.replace("\n", "\n  ")))


@app.command()
def history(file_id: str, tenant: Tenant = "default", as_json: Json = False) -> None:
    """What happened to a file, newest first: received, versions, processed, tags, notes, trash."""
    from rich.text import Text

    from semfs.pipeline.catalogue import notes

    with opened(tenant) as c:
        entries = notes.history(c, visible_record(c, tenant, file_id))
    if as_json:
        print(json.dumps([e.model_dump(mode="json") for e in entries], indent=2))
        return
    for e in entries:
        by = f"  ({e.by})" if e.by else ""
        out.print(Text(f"{e.at:%Y-%m-%d %H:%M}  {e.action:<10} {e.detail}{by}"))


@app.command()
def rm(
    file_id: str,
    tenant: Tenant = "default",
    all_versions: Annotated[
        bool, typer.Option("--all-versions", help="Every version of the document, not only this one.")
    ] = False,
    purge: Annotated[
        bool, typer.Option("--purge", help="Erase it for good now instead of moving it to the trash.")
    ] = False,
) -> None:
    """Delete a file: move it to the trash (restorable with `semfs restore`), or with --purge erase it."""
    from semfs.pipeline.catalogue.files import delete_file

    with opened(tenant) as c:
        removed = delete_file(c, tenant, file_id, all_versions=all_versions, purge=purge, by=caller())
        days = c.settings.trash_days
    if not removed:
        out.print("nothing deleted: it was in the trash or deleted already (`semfs trash` lists the trash)")
    elif purge or days == 0:
        out.print(f"erased {len(removed)} version(s) for good")
    else:
        out.print(
            f"moved {len(removed)} version(s) to the trash: `semfs restore {file_id}` brings them back;"
            f" purged after {days} days",
            highlight=False,
        )


@app.command()
def restore(
    file_id: str,
    tenant: Tenant = "default",
    all_versions: Annotated[
        bool, typer.Option("--all-versions", help="Every version of the document in the trash.")
    ] = False,
) -> None:
    """Bring a file back from the trash, searchable as it was."""
    from semfs.pipeline.catalogue.trash import restore as run_restore

    with opened(tenant, create=False) as c:
        back = run_restore(c, tenant, file_id, all_versions=all_versions, by=caller())
    out.print(f"restored {len(back)} version(s): " + ", ".join(f"{r.filename} ({r.status.value})" for r in back))


@app.command(name="trash")
def trash_cmd(
    tenant: Tenant = "default",
    empty: Annotated[bool, typer.Option("--empty", help="Erase everything in the trash for good.")] = False,
    older_than: Annotated[
        float | None, typer.Option("--older-than", min=0, help="With --empty: only what was deleted N+ days ago.")
    ] = None,
    as_json: Json = False,
) -> None:
    """List the trash (newest first), or empty it."""
    from rich.table import Table

    from semfs.pipeline.catalogue import trash

    with opened(tenant, create=False) as c:
        if empty:
            gone = trash.empty_trash(c, tenant, older_than)
            if as_json:
                print(json.dumps({"purged": [r.file_id for r in gone]}, indent=2))
            else:
                out.print(f"erased {len(gone)} file(s) for good")
            return
        if older_than is not None:
            err.print("[red]--older-than goes with --empty[/red]")
            raise typer.Exit(2)
        items = [(r, trash.purge_date(c, r)) for r in trash.in_trash(c, tenant, limit=1000)]
    if as_json:
        rows = [
            {"file_id": r.file_id, "filename": r.filename, "title": r.title, "deleted_at": r.deleted_at, "purge_on": d}
            for r, d in items
        ]
        print(json.dumps({"trash": rows}, indent=2, default=str))
        return
    if not items:
        out.print("the trash is empty")
        return
    table = Table(title=f"{len(items)} file(s) in the trash")
    for col in ("file id", "name", "deleted", "purged on"):
        table.add_column(col)
    for r, d in items:
        table.add_row(r.file_id, r.filename, f"{r.deleted_at:%Y-%m-%d %H:%M}" if r.deleted_at else "", d or "")
    out.print(table)


@app.command(name="ls")
def ls_cmd(
    tenant: Tenant = "default",
    tag: Annotated[str | None, typer.Option("--tag", help="Only files with this tag.")] = None,
    source_type: SourceOpt = None,
    contact: ContactOpt = None,
    entity: EntityOpt = None,
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
    view: Annotated[
        str | None,
        typer.Option("--view", help="A saved view (the web page's Saved view): its filters and sort, under these."),
    ] = None,
    as_json: Json = False,
) -> None:
    """List files (latest versions, newest first), with the same filters as search."""
    from datetime import UTC, datetime

    from semfs.domain.outcomes import Status
    from semfs.pipeline import names, vocabulary
    from semfs.ports.repository import RecordQuery

    with opened(tenant) as c:
        given = {
            "tag": tag,
            "source": source_type,
            "thread": thread,
            "contact": contact,
            "since": since,
            "until": until,
        }
        asked = _with_view(c, tenant, view, {**given, "sort": sort if sort != "newest" else None})
        day_from, day_to = day(asked["since"], "--since"), day(asked["until"], "--until")
        query = RecordQuery(
            tenant_id=tenant,
            readers=reader_tokens(c, tenant),
            statuses=[Status(status)] if status else [],
            tag=vocabulary.named(c, tenant, asked["tag"]),
            source_type=asked["source"],
            mime_type=asked["type"],
            contact_id=names.contact_id(c, tenant, asked["contact"]),
            thread_id=names.thread_id(c, tenant, asked["thread"]),
            entity=_entity_named(c, tenant, entity),
            latest_only=not all_versions,
            include_deleted=status == "deleted",
            created_from=datetime(day_from.year, day_from.month, day_from.day, tzinfo=UTC) if day_from else None,
            created_to=datetime(day_to.year, day_to.month, day_to.day, 23, 59, 59, tzinfo=UTC) if day_to else None,
            order=asked["sort"] or "newest",  # type: ignore[arg-type]  # a saved view's sort was checked when saved
            limit=limit,
        )
        records = c.repo.query(query)
    if as_json:
        keep = {"file_id", "filename", "title", "version", "is_latest", "status", "outcome", "size_bytes", "created_at"}
        print(
            json.dumps(
                [{**r.model_dump(mode="json", include=keep), "came_from": r.came_from} for r in records], indent=2
            )
        )
        return
    if not records:
        out.print("no files")
    for r in records:
        outcome = r.outcome.value if r.outcome else r.status.value
        out.print(
            f"{r.file_id}  {r.created_at:%Y-%m-%d %H:%M}  {human_size(r.size_bytes):>8}  v{r.version}  {outcome:<18} "
            f"{r.filename}"
            + (f"  [dim]{r.title}[/dim]" if r.title and r.title != r.filename else "")
            + (f"  [dim]from {r.came_from}[/dim]" if r.came_from else ""),
            highlight=False,
        )


def _entity_named(c: "Container", tenant: str, entity: str | None) -> str | None:
    if entity is None:  # the entity scanner (and its phone and IBAN libraries) loads only when one is named
        return None
    from semfs.pipeline.file_entities import entity_named

    return entity_named(c, tenant, entity)


def _with_view(c: "Container", tenant: str, view: str | None, given: dict[str, str | None]) -> dict[str, str | None]:
    """The listing asked for: the options given, over a saved view's filters and sort (the web page's Saved
    view). A view that is not there ends the command, naming the ones that are."""
    asked: dict[str, str | None] = {**given, "type": None}
    if view is None:
        return asked
    from semfs.pipeline.catalogue.views import visible_views

    mine = visible_views(c, tenant, acting(c, tenant))
    saved = {v.name.casefold(): v for v in mine}.get(" ".join(view.split()).casefold())
    if saved is None:
        known = ", ".join(v.name for v in mine) or "none yet"
        err.print(f"[red]no saved view {view!r} (saved: {known})[/red]")
        raise typer.Exit(2)
    return {key: value or saved.params.get(key) for key, value in asked.items()}


@app.command(name="similar")
def similar_cmd(
    file_id: str,
    tenant: Tenant = "default",
    limit: Annotated[int, typer.Option("--limit", min=1, max=50, help="At most this many.")] = 10,
    as_json: Json = False,
) -> None:
    """Files like this one by meaning (its other versions left out), nearest first."""
    from semfs.pipeline.query.similar import similar

    with opened(tenant) as c:
        visible_record(c, tenant, file_id)
        found = similar(c, tenant, file_id, limit, readers=reader_tokens(c, tenant))
    if as_json:
        print(json.dumps([f.model_dump() for f in found], indent=2))
        return
    if not found:
        out.print("no other file is like this one")
    for rank, f in enumerate(found, start=1):
        out.print(
            f"{rank}. {f.title or f.filename}  [dim]{f.filename} · {f.file_id} · similarity {f.score:.2f}"
            + (f" · from {f.came_from}" if f.came_from else "")
            + "[/dim]",
            highlight=False,
        )


@app.command(name="cat")
def cat_cmd(file_id: str, tenant: Tenant = "default") -> None:
    """The text semfs extracted from a file (OCR included), block by block."""
    from semfs.pipeline.documents import load_document

    with opened(tenant) as c:
        doc = load_document(c, visible_record(c, tenant, file_id))
    print(doc.text)


@app.command(name="get")
def get_cmd(
    file_id: str,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="Where to write it (default: its filename here; - = stdout).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace a file that is already there.")] = False,
    tenant: Tenant = "default",
) -> None:
    """The original file as it was ingested (an existing file is never replaced without --force)."""
    with opened(tenant) as c:
        record = visible_record(c, tenant, file_id)
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
    if target.exists() and not force:  # (it silently overwrote a file of the same name here)
        err.print(f"[red]{target} exists: not replaced (use --force, or -o PATH)[/red]")
        raise typer.Exit(1)
    target.write_bytes(data)
    err.print(f"wrote {len(data)} bytes to {target}")
