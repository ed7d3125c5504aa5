"""``semfs mail …``: the tenant's own mailboxes (IMAP), their rules, polling and a rule's preview
(``pipeline/intake/mailboxes.py``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from semfs.cli.common import Json, Tenant, admins_only, app, err, opened, out
from semfs.domain.access import SHARE_HELP

if TYPE_CHECKING:
    from semfs.domain.mail_accounts import MailAccount

mail_app = typer.Typer(
    help="Mail accounts: read a mailbox you already have (IMAP, Gmail, Microsoft 365) into semfs, by rules."
)
rule_app = typer.Typer(help="An account's rules, in order: the first whose conditions all hold decides.")
app.add_typer(mail_app, name="mail")
mail_app.add_typer(rule_app, name="rule")

Name = Annotated[str, typer.Argument(help="The account's name (lowercase letters, digits, . _ -).")]


def _checked(model: type[Any], **values: Any) -> Any:
    """A model built from options; a value it refuses is a usage error naming the option."""
    from pydantic import ValidationError

    try:
        return model(**values)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the account"
        err.print(f"[red]{where.replace('_', '-')}: {first['msg']}[/red]")
        raise typer.Exit(2) from None


def _secret(password_stdin: bool, oauth_file: str | None, required: bool) -> str | None:
    """The password (stdin, or a hidden prompt at a terminal) or the OAuth grant file's text."""
    from pathlib import Path

    if oauth_file:
        return Path(oauth_file).read_text()
    if password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if not required:
        return None
    if not sys.stdin.isatty():
        err.print("[red]give the password with --password-stdin (or an OAuth grant with --oauth-file)[/red]")
        raise typer.Exit(2)
    return str(typer.prompt("Password", hide_input=True))


@mail_app.command("add")
def mail_add(
    name: Name,
    host: Annotated[str, typer.Option(help="The IMAP server, e.g. imap.gmail.com or outlook.office365.com.")],
    username: Annotated[str, typer.Option(help="The login, usually the mailbox's address.")],
    tenant: Tenant = "default",
    port: Annotated[int | None, typer.Option(help="Default: 993 for tls, 143 for starttls.")] = None,
    security: Annotated[str, typer.Option(help="tls | starttls | none (none: loopback only).")] = "tls",
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the password from stdin.")] = False,
    oauth_file: Annotated[
        str | None,
        typer.Option(help="XOAUTH2: a JSON file with token_url, client_id, refresh_token (and client_secret)."),
    ] = None,
    folder: Annotated[list[str] | None, typer.Option("--folder", help="A folder to read (default INBOX).")] = None,
    after: Annotated[str, typer.Option(help="What to do to a processed message: none | seen | flag | move.")] = "seen",
    move_to: Annotated[str | None, typer.Option(help="With --after move: the folder to move it to.")] = None,
    address: Annotated[
        str | None, typer.Option(help="The mailbox's own address: its mail is read by the user it belongs to.")
    ] = None,
    ca_file: Annotated[str | None, typer.Option(help="A CA bundle for a server with its own certificate.")] = None,
    disabled: Annotated[bool, typer.Option("--disabled", help="Store it, but do not poll it.")] = False,
) -> None:
    """Add a mail account, or change one (a secret not given keeps the stored one). Nothing is read until
    `semfs mail poll` or `semfs serve`."""
    from semfs.domain.mail_accounts import MailAccount
    from semfs.pipeline.intake.mailboxes import save_account

    with opened(tenant, create=True) as c:
        admins_only(c, tenant, "its mail accounts")
        known = c.mail_accounts.account(tenant, name)
        account = _checked(
            MailAccount,
            name=name,
            host=host,
            port=port or (993 if security == "tls" else 143),
            security=security,
            username=username,
            auth="xoauth2" if oauth_file else ("password" if password_stdin or known is None else known.auth),
            folders=folder or (known.folders if known else ["INBOX"]),
            after=after,
            move_to=move_to,
            address=address,
            ca_file=ca_file,
            rules=known.rules if known else [],
            enabled=not disabled,
        )
        secret = _secret(password_stdin, oauth_file, required=known is None)  # asked once the rest is valid
        saved = save_account(c, tenant, account, secret)
    out.print(f"{saved.name}: {saved.username} at {saved.host}:{saved.port} ({saved.security})", highlight=False)


def _describe(a: MailAccount) -> str:
    state = "off" if not a.enabled else (f"error: {a.last_error}" if a.last_error else "ok")
    polled = a.last_poll_at.strftime("%Y-%m-%d %H:%M") if a.last_poll_at else "never"
    after = f"move to {a.move_to}" if a.after == "move" else a.after
    return (
        f"{a.name}  {a.username} at {a.host}:{a.port}  folders {', '.join(a.folders)}  then {after}  "
        f"{len(a.rules)} rule(s)  polled {polled}  {state}"
    )


@mail_app.command("list")
def mail_list(tenant: Tenant = "default", as_json: Json = False) -> None:
    """The tenant's mail accounts: server, folders, action, rules, last poll and its error."""
    import json

    with opened(tenant) as c:
        accounts = c.mail_accounts.accounts(tenant)
    if as_json:
        print(json.dumps([a.model_dump(mode="json", exclude={"secret_ref"}) for a in accounts], indent=2))
        return
    if not accounts:
        out.print(f"no mail accounts in tenant {tenant} (semfs mail add NAME --host … --username … adds one)")
    for a in accounts:
        out.print(_describe(a), highlight=False)


@mail_app.command("rm")
def mail_rm(name: Name, tenant: Tenant = "default") -> None:
    """Remove an account, its cursors and its secret. The files it brought stay."""
    from semfs.pipeline.intake.mailboxes import remove_account

    with opened(tenant) as c:
        admins_only(c, tenant, "its mail accounts")
        if not remove_account(c, tenant, name):
            err.print(f"[red]no mail account {name!r} in tenant {tenant}[/red]")
            raise typer.Exit(1)
    out.print(f"removed {name}")


@mail_app.command("poll")
def mail_poll(
    name: Annotated[str | None, typer.Argument(help="The account (default: every account of the tenant).")] = None,
    tenant: Tenant = "default",
    limit: Annotated[int, typer.Option(min=1, max=10_000, help="At most this many messages per folder.")] = 200,
    as_json: Json = False,
) -> None:
    """Read what is new in the account's folders now. Exit code 1 if a server could not be read."""
    import json
    from dataclasses import asdict

    from semfs.pipeline.intake.mailboxes import poll_account

    with opened(tenant) as c:
        names = [name] if name else [a.name for a in c.mail_accounts.accounts(tenant) if a.enabled]
        reports = [poll_account(c, tenant, n, limit=limit) for n in names]
    if as_json:
        print(json.dumps([asdict(r) for r in reports], indent=2))
    for r in reports if not as_json else []:
        if r.error:
            err.print(f"[red]{r.account}: {r.error}[/red]", highlight=False)
        for f in r.folders:
            more = " (more wait: poll again)" if f.more else ""
            again = ", folder renumbered: read again" if f.restarted else ""
            out.print(
                f"{r.account} {f.folder}: {f.read} read, {f.files} files, {f.duplicates} already here, "
                f"{f.skipped} skipped by rules{again}{more}",
                highlight=False,
            )
    if any(r.error for r in reports):
        raise typer.Exit(1)


@mail_app.command("preview")
def mail_preview(
    name: Name,
    tenant: Tenant = "default",
    count: Annotated[int, typer.Option(min=1, max=200, help="How many of the newest messages.")] = 50,
    as_json: Json = False,
) -> None:
    """What the account's rules would do to its newest messages (first folder). Reads without marking
    anything read and ingests nothing."""
    import json
    from dataclasses import asdict

    from semfs.pipeline.intake.mailboxes import preview

    with opened(tenant) as c:
        lines = preview(c, tenant, name, count=count)
    if as_json:
        print(json.dumps([asdict(x) for x in lines], indent=2))
        return
    for x in lines:
        rule = f"rule {x.rule!r}" if x.rule else "no rule"
        files = f"  [{', '.join(x.attachments)}]" if x.attachments else ""
        out.print(f"{x.uid:>6}  {x.take:<11} {rule}  {x.sender or '?'}: {x.subject}{files}", highlight=False)


Opt = Annotated[str | None, typer.Option()]


@rule_app.command("add")
def rule_add(
    account: Annotated[str, typer.Argument(help="The mail account.")],
    rule: Annotated[str, typer.Argument(help="The rule's name (replaces a rule of that name in place).")],
    tenant: Tenant = "default",
    sender: Annotated[str | None, typer.Option("--from", help="From contains this (name or address).")] = None,
    recipient: Annotated[str | None, typer.Option("--to", help="To or Cc contains this.")] = None,
    subject: Annotated[str | None, typer.Option(help="The subject contains this.")] = None,
    body: Annotated[str | None, typer.Option(help="The body contains this.")] = None,
    attachment: Annotated[str | None, typer.Option(help="An attachment's name matches this pattern (*.pdf).")] = None,
    attachment_type: Annotated[str | None, typer.Option(help="An attachment's type starts with this.")] = None,
    min_bytes: Annotated[int | None, typer.Option(min=0)] = None,
    max_bytes: Annotated[int | None, typer.Option(min=0)] = None,
    take: Annotated[
        str, typer.Option(help="mail (attachments and body) | attachments | body | message (.eml) | skip.")
    ] = "mail",
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag its files get.")] = None,
    share_with: Annotated[
        list[str] | None, typer.Option("--share-with", help="Also readable by: " + SHARE_HELP)
    ] = None,
    position: Annotated[int | None, typer.Option(min=1, help="Its place in the order (default: last).")] = None,
) -> None:
    """Add a rule to an account (or replace the rule of that name)."""
    from semfs.domain.mail_accounts import MailRule
    from semfs.pipeline.intake.mailboxes import checked_rules

    new = _checked(
        MailRule,
        name=rule,
        sender=sender,
        recipient=recipient,
        subject=subject,
        body=body,
        attachment_name=attachment,
        attachment_type=attachment_type,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        take=take,
        tags=tag or [],
        share_with=share_with or [],
    )
    with opened(tenant) as c:
        admins_only(c, tenant, "its mail accounts")
        known = c.mail_accounts.account(tenant, account)
        if known is None:
            err.print(f"[red]no mail account {account!r} in tenant {tenant}[/red]")
            raise typer.Exit(1)
        rules = list(known.rules)
        at = next((i for i, r in enumerate(rules) if r.name == rule), None)
        if at is not None:
            rules[at] = new
        else:
            rules.insert(position - 1 if position else len(rules), new)
        c.mail_accounts.save(tenant, _checked(type(known), **(known.model_dump() | {"rules": checked_rules(rules)})))
    out.print(f"{account}: {', '.join(r.name for r in rules)}", highlight=False)


@rule_app.command("rm")
def rule_rm(account: str, rule: str, tenant: Tenant = "default") -> None:
    """Remove a rule from an account."""
    with opened(tenant) as c:
        admins_only(c, tenant, "its mail accounts")
        known = c.mail_accounts.account(tenant, account)
        if known is None or not any(r.name == rule for r in known.rules):
            err.print(f"[red]no rule {rule!r} on mail account {account!r}[/red]")
            raise typer.Exit(1)
        c.mail_accounts.save(tenant, known.model_copy(update={"rules": [r for r in known.rules if r.name != rule]}))
    out.print(f"removed {rule}")


@rule_app.command("list")
def rule_list(account: str, tenant: Tenant = "default", as_json: Json = False) -> None:
    """An account's rules, in order, with their conditions and what they do."""
    import json

    with opened(tenant) as c:
        known = c.mail_accounts.account(tenant, account)
    if known is None:
        err.print(f"[red]no mail account {account!r} in tenant {tenant}[/red]")
        raise typer.Exit(1)
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in known.rules], indent=2))
        return
    if not known.rules:
        out.print(f"{account} has no rules: every message is ingested as mail (attachments and body)")
    for n, r in enumerate(known.rules, 1):
        when = ", ".join(f"{k.replace('_', ' ')} {v!r}" for k, v in r.conditions().items()) or "every message"
        extra = "".join(
            [
                f"  tags {', '.join(r.tags)}" if r.tags else "",
                f"  shared {', '.join(r.share_with)}" if r.share_with else "",
            ]
        )
        out.print(f"{n}. {r.name}: {when} → {r.take}{extra}", highlight=False)
