"""What every command shares: the app, the consoles, the options and the container a command opens."""

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from semfs.domain.vocabulary import SearchMode, SourceType

if TYPE_CHECKING:  # imported when a command runs, not when `semfs --help` lists the commands
    from rich.console import Console

    from semfs.domain.access import Principal
    from semfs.domain.models import FileRecord, SearchFilters
    from semfs.ports import Container

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: no boxes, no <bool> type column, readable when piped
    help="semfs — a semantic file system. Exit codes: 0 done, 1 a file or path failed, 2 a usage error.",
)


class _Console:
    """A rich console made on first use (rich costs a twentieth of a second to import, which `semfs
    --version` need not pay). A terminal gets its own width; a pipe gets lines that are never hard-wrapped
    at 80 columns."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Console | None = None

    @property
    def console(self) -> "Console":
        if self._console is None:
            from rich.console import Console

            stream = sys.stderr if self._stderr else sys.stdout
            tty = stream.isatty()
            self._console = Console(stderr=self._stderr, width=None if tty else 10_000, soft_wrap=not tty)
        return self._console

    def print(self, *objects: Any, **kwargs: Any) -> None:
        self.console.print(*objects, **kwargs)


out = _Console(stderr=False)


err = _Console(stderr=True)


def tenant_option(value: str | None) -> str | None:
    """``--tenant`` (and a tenant argument) checked by the one rule every entry point uses: a usage error
    naming it, before anything is opened (``purge-tenant 'default/'`` once erased tenant ``default``'s files)."""
    from semfs.domain.tenants import TENANT_ID_RULE, is_tenant_id

    if value is not None and not is_tenant_id(value):
        raise typer.BadParameter(f"{value!r} is not a tenant id: a tenant id is {TENANT_ID_RULE}")
    return value


Tenant = Annotated[str, typer.Option("--tenant", help="Tenant to act in.", callback=tenant_option)]


Json = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


def container(background_workers: int = 0, log_level: str = "WARNING", **overrides: Any) -> "Container":
    """The container a command works with (an ingesting command steps back for searches on threads of its own:
    ``semfs.priority.each_lowered``)."""
    from semfs.bootstrap import build_container
    from semfs.config import Settings
    from semfs.observability import configure

    try:
        settings = Settings(**overrides)
    except Exception as e:  # pydantic's ValidationError: show the message, not a traceback
        err.print(f"[red]configuration error:[/red] {one_line(e)}")
        raise typer.Exit(2) from e
    configure(log_level)
    return build_container(settings, background_workers=background_workers)


def existing_data() -> None:
    """End a command that reads semfs's data where there is none, saying where it looked. Before, it
    created an empty ``.semfs/`` in whatever folder it ran from and answered "no results"."""
    from semfs.config import Settings

    try:
        settings = Settings()
    except Exception:  # a configuration error: container() says it
        return
    data_dir = settings.data_dir
    if settings.backend == "local" and not Path(data_dir).is_dir():
        err.print(
            f"[red]no semfs data in {Path(data_dir).resolve()}[/red]: nothing was ingested with this data folder. "
            "Run from the folder where you ran `semfs ingest`, or set SEMFS_DATA_DIR to its data folder."
        )
        raise typer.Exit(1)


@contextmanager
def opened(tenant: str | None = None, create: bool = False) -> Iterator["Container"]:
    """The container for one command, closed (its worker stopped) however the command ends. A file
    that is not there ends the command with one line and exit code 1, a request that cannot be done as
    asked (an invalid tag, two files already in one lineage) with exit code 2. Only a command that
    stores something (``create``) makes the data folder; the others need one (``existing_data``)."""
    from semfs.domain.errors import InvalidRequest, NotFound, SemfsError

    if not create:
        existing_data()
    c = container()
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
        from semfs import __version__  # importlib.metadata costs a thirtieth of a second; a test ties the two

        print(f"semfs {__version__}")
        raise typer.Exit()


# who a command acts as (``--user``, or SEMFS_USER): None, the tenant's first admin (``domain/access.py``)
ACTING: dict[str, str | None] = {"user": None}


@app.callback()
def _main(
    show_version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
    user: Annotated[
        str | None,
        typer.Option(
            "--user",
            envvar="SEMFS_USER",
            help="Act as this user of the tenant: see and share what they may (default: the tenant's first admin).",
        ),
    ] = None,
) -> None:
    """semfs — a semantic file system."""
    ACTING["user"] = user


def acting(c: "Container", tenant: str) -> "Principal":
    """The principal this command acts as in ``tenant`` (``--user``; none: the tenant's first admin)."""
    from semfs.pipeline.principals import principal_for

    return principal_for(c, tenant, ACTING["user"])


def reader_tokens(c: "Container", tenant: str) -> tuple[str, ...] | None:
    """What this command reads as: every listing, search and answer filters by it."""
    return acting(c, tenant).tokens()


def visible_record(c: "Container", tenant: str, file_id: str) -> "FileRecord":
    """The file, when the acting user may see it; ``NotFound`` ("no such file") otherwise, as for none."""
    from semfs.domain.access import can_read
    from semfs.domain.errors import NotFound

    record = c.repo.get(tenant, file_id)
    if not can_read(record.readers, reader_tokens(c, tenant)):
        raise NotFound("no such file")
    return record


def failed(outcome: str) -> bool:
    return outcome.startswith(("FAILED", "REJECTED"))


def one_line(e: Exception) -> str:
    """A pydantic error as one line ("query: String should have at least 1 character")."""
    from pydantic import ValidationError

    if isinstance(e, ValidationError):
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"] if x not in ("filters",))
        return f"{where}: {first['msg']}" if where else str(first["msg"])
    return str(e)


ModeOpt = Annotated[
    SearchMode,
    typer.Option("--mode", help="hybrid (BM25 and vectors, fused; the default), keyword or semantic."),
]


TagOpt = Annotated[
    list[str] | None, typer.Option("--tag", help="Only files with this tag (repeatable: all must match).")
]


SourceOpt = Annotated[
    SourceType | None,
    typer.Option("--source-type", help="Only files from this source."),
]


ContactOpt = Annotated[str | None, typer.Option("--contact", help="Only files with this contact: name, email or id.")]
EntityOpt = Annotated[
    str | None,
    typer.Option("--entity", help="Only files naming this: a person, organisation, amount, identifier… or its id."),
]


ThreadOpt = Annotated[str | None, typer.Option("--thread", help="Only files of this thread: its subject or id.")]


MimeOpt = Annotated[str | None, typer.Option("--mime", help="Only files of this MIME type (application/pdf, …).")]


SinceOpt = Annotated[str | None, typer.Option("--since", help="Only files from this date on (YYYY-MM-DD).")]


UntilOpt = Annotated[str | None, typer.Option("--until", help="Only files up to this date (YYYY-MM-DD).")]


HistoryOpt = Annotated[bool, typer.Option("--include-history", help="Also older versions, not only the latest.")]


def day(value: str | None, option: str) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        err.print(f"[red]{option}: give a date as YYYY-MM-DD, not {value!r}[/red]")
        raise typer.Exit(2) from None


def search_filters(
    c: "Container",
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
    entity: str | None = None,
) -> "SearchFilters":
    """The search filters from what a person typed: names resolve to ids (``pipeline/names``)."""
    from semfs.domain.models import SearchFilters
    from semfs.pipeline import names

    return SearchFilters(
        tags=tag or [],
        source_type=source_type,
        contact_id=names.contact_id(c, tenant, contact),
        thread_id=names.thread_id(c, tenant, thread),
        mime_type=mime,
        date_from=day(since, "--since"),
        date_to=day(until, "--until"),
        include_history=include_history,
        entity=entity,
    ).read_as(reader_tokens(c, tenant))


def caller() -> str | None:
    """Who runs the CLI, for a file's history and a note's author: the login name, when the system has one."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name and no passwd entry (a bare container)
        return None


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def admins_only(c: "Container", tenant: str, what: str) -> None:
    """Exit 1 unless the caller is an admin of the tenant, or the tenant has no users yet (its first user,
    or a single-person setup, makes itself): ``what`` names what only an admin may change."""
    if c.principals.users(tenant) and not acting(c, tenant).is_admin:
        err.print(f"[red]only an admin of the tenant may change {what} (--user NAME)[/red]")
        raise typer.Exit(1)
