"""``semfs serve``: the local HTTP API and web page, the SMTP listener and the drop folder."""

from pathlib import Path
from typing import Annotated, Any

import typer

from semfs.cli.common import (
    app,
    container,
    out,
    tenant_option,
)


@app.command()
def serve(
    port: Annotated[int | None, typer.Option("--port", help="HTTP port (default SEMFS_HTTP_PORT, 8080).")] = None,
    smtp_port: Annotated[int | None, typer.Option("--smtp-port", help="Default SEMFS_SMTP_PORT (2525).")] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, max=16, help="Files processed at once.")] = 2,
) -> None:
    """Run semfs locally: the HTTP API and web page, the SMTP listener, the drop folder, and polling of the
    mail accounts (`semfs mail add`) every SEMFS_MAIL_POLL_INTERVAL_S seconds."""
    import time

    from semfs.pipeline.intake.ingest import STRANDED_AFTER, restart_stranded
    from semfs.server import ApiKeys, start_http, start_inbox, start_smtp

    overrides: dict[str, Any] = {"http_port": port} if port else {}
    if smtp_port:
        overrides["smtp_port"] = smtp_port
    # uploads, mail and the drop folder queue their files for these workers: no request waits on one
    c = container(background_workers=workers, log_level="INFO", **overrides)  # a server's log is its output
    settings = c.settings
    keys = ApiKeys(settings.api_keys_file)
    _first_key(keys, settings.default_tenant)
    http_port = port or settings.http.port
    smtp = smtp_port or settings.mail.smtp_port
    static = Path(__file__).parent.parent / "web"
    server = start_http(c, keys, settings.http.host, http_port, static if static.is_dir() else None)
    # mail off: no listener at all; ingest off: the listener answers 451, so senders retry later
    controller = start_smtp(c, settings.mail.smtp_host, smtp) if settings.features.mail else None
    inbox = start_inbox(c, settings.inbox_dir, settings.default_tenant) if settings.features.ingest else None
    _say_where(c, http_port, smtp if controller is not None else None, inbox is not None)
    mail_poll = _mail_polling(c)
    try:
        while True:  # files a killed process registered but never queued: picked up within a minute or two
            restarted = restart_stranded(c)
            if restarted:
                out.print(f"started {len(restarted)} file(s) registered but never queued (a crash)")
            time.sleep(STRANDED_AFTER.total_seconds())
    except KeyboardInterrupt:
        pass
    finally:
        if inbox is not None:
            inbox.set()
        if mail_poll is not None:
            mail_poll.set()
        server.shutdown()
        if controller is not None:
            controller.stop()
        c.close()


def _mail_polling(c: Any) -> Any:
    """Poll the mail accounts in the background (unless mail or ingest is off, or the interval is 0), and say so;
    the event that stops it, or None."""
    from semfs.server import start_mail_polling

    settings = c.settings
    if not (settings.features.mail and settings.features.ingest and settings.mail.poll_interval_s > 0):
        return None
    accounts = sum(1 for _ in c.mail_accounts.all_accounts())
    out.print(
        f"Mail accounts: {accounts}, read every {settings.mail.poll_interval_s} s"
        + ("" if accounts else " (semfs mail add NAME --host … --username … adds one)")
    )
    return start_mail_polling(c, settings.mail.poll_interval_s)


def _first_key(keys: Any, tenant: str) -> None:
    """On the first start, the default tenant's key, shown once; after, where keys come from."""
    if tenant not in keys.tenants():
        out.print(f"API key for tenant '{tenant}' (shown once): [bold]{keys.create(tenant)}[/bold]")
    else:
        out.print(
            f"API keys exist for tenant '{tenant}' (stored hashed): "
            f"semfs keys create --tenant {tenant} makes a new one, semfs keys list shows them"
        )


def _say_where(c: Any, http_port: int, smtp_port: int | None, inbox: bool) -> None:
    """Where each door is: the API and page, MCP, the drop folder, SMTP; and what is switched off."""
    from semfs.domain.features import FEATURES, enabled

    settings = c.settings
    out.print(f"API and web page: http://{settings.http.host}:{http_port}/  (OpenAPI: /docs)")
    if settings.features.mcp:
        out.print(f"MCP for agents: http://{settings.http.host}:{http_port}/mcp (streamable HTTP, the same API keys)")
    if inbox:
        out.print(f"Drop folder: {settings.inbox_dir}/ (files appear in tenant '{settings.default_tenant}')")
    if smtp_port is not None:
        mailboxes = ", ".join(f"{a} → {t}" for a, t in settings.mail.mailbox_tenants.items())
        out.print(
            f"SMTP: {settings.mail.smtp_host}:{smtp_port} for "
            + (
                mailboxes
                or "no mailboxes (set SEMFS_MAILBOXES='files@localhost=default'; other recipients are refused)"
            )
        )
    off = [name for name in FEATURES if not enabled(settings, name)]
    if off:
        out.print("Switched off: " + ", ".join(off) + " (GET /capabilities says so too)")


@app.command()
def mcp(
    tenant: Annotated[
        str | None,
        typer.Option(
            "--tenant", help="The tenant whose files the agent sees (default: the local one).", callback=tenant_option
        ),
    ] = None,
    key: Annotated[
        str | None,
        typer.Option("--key", envvar="SEMFS_API_KEY", help="An API key (semfs keys create): its tenant, as over HTTP."),
    ] = None,
) -> None:
    """Serve your files to an agent over MCP on stdin/stdout (add `semfs mcp` to the agent's MCP servers)."""
    import sys

    from semfs.domain.features import OFF
    from semfs.mcp_server import serve_stdio
    from semfs.server import ApiKeys

    c = container()
    try:
        if not c.settings.features.mcp:
            print(f"semfs mcp: {OFF['mcp']}", file=sys.stderr)
            raise typer.Exit(1)
        chosen = tenant or c.settings.default_tenant
        if key:
            found = ApiKeys(c.settings.api_keys_file).tenant_for(key)
            if found is None:
                print("semfs mcp: that API key is not valid (semfs keys create makes one)", file=sys.stderr)
                raise typer.Exit(2)
            if tenant and tenant != found:
                print("semfs mcp: --tenant and the key's tenant differ; leave one out", file=sys.stderr)
                raise typer.Exit(2)
            chosen = found
        serve_stdio(c, chosen)
    finally:
        c.close()
