"""``semfs keys``: local API keys, each mapped to one tenant."""

from typing import Annotated

import typer

from semfs.cli.common import (
    Tenant,
    app,
    err,
    out,
)

keys_app = typer.Typer(help="Local API keys (each maps to one tenant).")


app.add_typer(keys_app, name="keys")


@keys_app.command("list")
def keys_list() -> None:
    """Every local API key by fingerprint and tenant (the keys themselves are stored hashed)."""
    from semfs.config import Settings
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
    from semfs.config import Settings
    from semfs.server import ApiKeys

    if not ApiKeys(Settings().api_keys_file).revoke(key):
        err.print("[red]no such key (give the key or at least 8 characters of its fingerprint)[/red]")
        raise typer.Exit(1)
    out.print("revoked")


@keys_app.command("create")
def keys_create(
    tenant: Tenant = "default",
    user: Annotated[
        str | None, typer.Option("--user", help="The user the key is (none: the tenant's first admin).")
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", help="An agent's key: it acts for --user and sees what they see.")
    ] = None,
) -> None:
    """Create an API key for a tenant (and one of its users) and print it (stored hashed; shown this once)."""
    from semfs.config import Settings
    from semfs.server import ApiKeys

    if user is not None or agent is not None:
        from semfs.cli.common import opened
        from semfs.pipeline.principals import principal_for

        if agent is not None and user is None:
            err.print("[red]--agent: an agent acts for a user (--user NAME)[/red]")
            raise typer.Exit(2)
        with opened(tenant) as c:
            user = principal_for(c, tenant, user).user  # the user must exist: NotFound otherwise
    print(ApiKeys(Settings().api_keys_file).create(tenant, user, agent))
