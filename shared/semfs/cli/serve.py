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
    """Run semfs locally: the HTTP API and web page, and the SMTP listener for your mailboxes."""
    import time

    from semfs.domain.features import FEATURES, enabled
    from semfs.pipeline.intake.ingest import STRANDED_AFTER, restart_stranded
    from semfs.server import ApiKeys, start_http, start_inbox, start_smtp

    overrides: dict[str, Any] = {"http_port": port} if port else {}
    if smtp_port:
        overrides["smtp_port"] = smtp_port
    # uploads, mail and the drop folder queue their files for these workers: no request waits on one
    c = container(background_workers=workers, log_level="INFO", **overrides)  # a server's log is its output
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
    http_port = port or settings.http.port
    static = Path(__file__).parent.parent / "web"
    server = start_http(c, keys, settings.http.host, http_port, static if static.is_dir() else None)
    features = settings.features
    # mail off: no listener at all; ingest off: the listener answers 451, so senders retry later
    controller = start_smtp(c, settings.mail.smtp_host, smtp_port or settings.mail.smtp_port) if features.mail else None
    inbox = start_inbox(c, settings.inbox_dir, settings.default_tenant) if features.ingest else None
    out.print(f"API and web page: http://{settings.http.host}:{http_port}/  (OpenAPI: /docs)")
    if features.mcp:
        out.print(f"MCP for agents: http://{settings.http.host}:{http_port}/mcp (streamable HTTP, the same API keys)")
    if inbox is not None:
        out.print(f"Drop folder: {settings.inbox_dir}/ (files appear in tenant '{settings.default_tenant}')")
    if controller is not None:
        out.print(
            f"SMTP: {settings.mail.smtp_host}:{smtp_port or settings.mail.smtp_port} for "
            + (
                ", ".join(f"{a} → {t}" for a, t in settings.mail.mailbox_tenants.items())
                or "no mailboxes (set SEMFS_MAILBOXES='files@localhost=default'; other recipients are refused)"
            )
        )
    off = [name for name in FEATURES if not enabled(settings, name)]
    if off:
        out.print("Switched off: " + ", ".join(off) + " (GET /capabilities says so too)")
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
        server.shutdown()
        if controller is not None:
            controller.stop()
        c.close()


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
