"""``semfs users``, ``semfs groups`` and ``semfs share``: who is in a tenant, and who may read a file
(``domain/access.py``)."""

from typing import Annotated, Any

import typer

from semfs.cli.common import Json, Tenant, acting, admins_only, app, caller, err, opened, out, visible_record
from semfs.domain.access import SHARE_HELP

users_app = typer.Typer(help="A tenant's users: who may read what (mail to a user's address is theirs).")
groups_app = typer.Typer(help="A tenant's groups: files shared with a group, mail to a group's address.")
app.add_typer(users_app, name="users")
app.add_typer(groups_app, name="groups")

Addresses = Annotated[list[str] | None, typer.Option("--address", help="A mail address that is theirs.")]


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="The user's name (lowercase letters, digits, . _ -).")],
    tenant: Tenant = "default",
    group: Annotated[list[str] | None, typer.Option("--group", help="A group they are in (made if new).")] = None,
    address: Addresses = None,
    admin: Annotated[bool, typer.Option("--admin", help="May see and manage every file of the tenant.")] = False,
) -> None:
    """Add a user, or change one (its groups and addresses become these). The first user is an admin."""
    from semfs.pipeline.principals import add_user

    with opened(tenant, create=True) as c:
        admins_only(c, tenant, "its users and groups")
        user = add_user(
            c, tenant, name, groups=group or [], role="admin" if admin else "member", addresses=address or []
        )
    groups = f", groups {', '.join(user.groups)}" if user.groups else ""
    out.print(f"{user.name}: {user.role}{groups}", highlight=False)


@users_app.command("list")
def users_list(tenant: Tenant = "default", as_json: Json = False) -> None:
    """The tenant's users, oldest first: role, groups and mail addresses."""
    import json

    with opened(tenant) as c:
        users = c.principals.users(tenant)
    if as_json:
        print(json.dumps([u.model_dump(mode="json") for u in users], indent=2))
        return
    if not users:
        out.print(f"no users in tenant {tenant}: every file is everyone's (semfs users add NAME adds one)")
    for u in users:
        extra = "  ".join(x for x in (", ".join(u.groups), ", ".join(u.addresses)) if x)
        out.print(f"{u.name}  {u.role}  {extra}".rstrip(), highlight=False)


@users_app.command("rm")
def users_rm(name: str, tenant: Tenant = "default") -> None:
    """Remove a user (not the last admin). Their files stay, readable by whom they were shared with."""
    from semfs.pipeline.principals import remove_user

    with opened(tenant) as c:
        admins_only(c, tenant, "its users and groups")
        if not remove_user(c, tenant, name):
            err.print(f"[red]no user {name!r} in tenant {tenant}[/red]")
            raise typer.Exit(1)
    out.print(f"removed {name}")


@groups_app.command("add")
def groups_add(
    name: Annotated[str, typer.Argument(help="The group's name.")],
    tenant: Tenant = "default",
    address: Annotated[
        list[str] | None, typer.Option("--address", help="A list or shared mailbox address: its mail is the group's.")
    ] = None,
    member: Annotated[list[str] | None, typer.Option("--member", help="A user to put in it.")] = None,
) -> None:
    """Add a group (or set its addresses), and put users in it."""
    from semfs.pipeline.principals import add_group, set_membership

    with opened(tenant, create=True) as c:
        admins_only(c, tenant, "its users and groups")
        group = add_group(c, tenant, name, addresses=address or [])
        set_membership(c, tenant, group.name, add=member or [])
        members = [u.name for u in c.principals.users(tenant) if group.name in u.groups]
    out.print(f"{group.name}: {', '.join(members) or 'no members'}", highlight=False)


@groups_app.command("list")
def groups_list(tenant: Tenant = "default", as_json: Json = False) -> None:
    """The tenant's groups with their members and addresses."""
    import json

    with opened(tenant) as c:
        groups = c.principals.groups(tenant)
        users = c.principals.users(tenant)
    members = {g.name: [u.name for u in users if g.name in u.groups] for g in groups}
    if as_json:
        print(json.dumps([{**g.model_dump(mode="json"), "members": members[g.name]} for g in groups], indent=2))
        return
    if not groups:
        out.print(f"no groups in tenant {tenant} (semfs groups add NAME adds one)")
    for g in groups:
        out.print(f"{g.name}  {', '.join(members[g.name]) or '-'}  {', '.join(g.addresses)}".rstrip(), highlight=False)


@groups_app.command("rm")
def groups_rm(name: str, tenant: Tenant = "default") -> None:
    """Remove a group; its members leave it, files shared with it are no longer shared through it."""
    from semfs.pipeline.principals import remove_group

    with opened(tenant) as c:
        admins_only(c, tenant, "its users and groups")
        if not remove_group(c, tenant, name):
            err.print(f"[red]no group {name!r} in tenant {tenant}[/red]")
            raise typer.Exit(1)
    out.print(f"removed {name}")


@app.command("share")
def share_cmd(
    file_id: str,
    tenant: Tenant = "default",
    with_: Annotated[list[str] | None, typer.Option("--with", help="Share with: " + SHARE_HELP)] = None,
    revoke: Annotated[list[str] | None, typer.Option("--revoke", help="Stop sharing with: " + SHARE_HELP)] = None,
    link: Annotated[
        int | None, typer.Option("--link", min=1, max=90, help="Make a read-only link that needs no account, for DAYS.")
    ] = None,
    revoke_link: Annotated[str | None, typer.Option("--revoke-link", help="Revoke a share link by its id.")] = None,
    as_json: Json = False,
) -> None:
    """Show who may read a file and its share links, or change them (its owner or an admin). Sharing applies to
    every version of the document; a link opens this version only, at `semfs serve`'s /s/… address."""
    import json

    from rich.text import Text

    from semfs.domain.access import describe, parse_share, readers_of
    from semfs.domain.models import utcnow
    from semfs.pipeline.catalogue import links
    from semfs.pipeline.catalogue.sharing import share

    made = None
    with opened(tenant) as c:
        record = visible_record(c, tenant, file_id)
        principal = acting(c, tenant)
        if with_ or revoke:
            record = share(c, principal, record, parse_share(with_ or []), parse_share(revoke or []), by=caller())
        if revoke_link:
            record = links.revoke_link(c, principal, record, revoke_link, by=caller())
        if link:
            record, _, token = links.create_link(c, principal, record, link, by=caller())
            made = f"http://{c.settings.http.host}:{c.settings.http.port}/s/{token}"
    readers, now = readers_of(record.readers), utcnow()
    shown: list[dict[str, Any]] = [
        {"link_id": x.link_id, "expires_at": x.expires_at.isoformat(), "live": x.live(now)} for x in record.links
    ]
    if as_json:
        body = {"file_id": record.file_id, "owner": record.owner, "readers": list(readers), "links": shown}
        print(json.dumps(body | ({"new_link": made} if made else {}), indent=2))
        return
    out.print(Text(f"{record.filename}: owner {record.owner or '(none: the tenant)'}"), highlight=False)
    for token in readers:
        out.print(f"  {describe(token)}", highlight=False)
    for x in shown:
        state = "until " + x["expires_at"][:16].replace("T", " ") if x["live"] else "expired or revoked"
        out.print(f"  link {x['link_id']}  {state}", highlight=False)
    if made:
        out.print(f"new link (shown once): {made}", highlight=False, soft_wrap=True)
