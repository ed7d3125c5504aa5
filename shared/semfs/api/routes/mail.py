"""A tenant's mail accounts (admins): add or change one, its rules, poll it now, preview what its rules do
(``pipeline/intake/mailboxes.py``). A secret goes in and never comes back out."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.params import Path
from pydantic import ValidationError

from semfs.api.models import (
    MailAccountIn,
    MailAccountOut,
    MailAccountsOut,
    MailPollOut,
    MailPreviewIn,
    MailPreviewOut,
    MailRulesIn,
)
from semfs.api.request import admin_only, container, current_tenant, new_router, ok
from semfs.domain.errors import InvalidRequest
from semfs.domain.mail_accounts import ACCOUNT_NAME_PATTERN, MailAccount
from semfs.pipeline.intake import mailboxes

router = new_router()
Name = Annotated[
    str, Path(min_length=1, max_length=64, pattern=f"^{ACCOUNT_NAME_PATTERN}$", description="The account's name")
]
API_POLL_LIMIT = 25  # messages a folder in one request: the rest wait for the next poll (the request's deadline)


def _out(account: MailAccount) -> MailAccountOut:
    return MailAccountOut.model_validate(account.model_dump(exclude={"secret_ref", "ca_file", "created_at"}))


def _accounts() -> MailAccountsOut:
    return MailAccountsOut(accounts=[_out(a) for a in container().mail_accounts.accounts(current_tenant())])


def _built(**values: object) -> MailAccount:
    """The account a request describes; what it refuses (a move without its folder) is a 400 naming the field."""
    try:
        return MailAccount.model_validate(values)
    except ValidationError as e:
        first = e.errors()[0]
        raise InvalidRequest(f"{'.'.join(str(p) for p in first['loc']) or 'account'}: {first['msg']}") from e


@router.get("/mail/accounts", summary="The tenant's mail accounts (admins)", responses=ok(MailAccountsOut))
def list_accounts() -> MailAccountsOut:
    """Each account's server, folders, what is done to a processed message, its rules, its last poll and the
    error it ended with, if any. No secret is ever in an answer."""
    admin_only()
    return _accounts()


@router.put("/mail/accounts/<name>", summary="Add or change a mail account (admins)", responses=ok(MailAccountsOut))
def put_account(name: Name, request: MailAccountIn) -> MailAccountsOut:
    """A new account needs its ``secret``; a changed one keeps its stored secret unless a new one is given.
    Its rules stay as they are (``PUT /mail/accounts/{name}/rules`` sets them)."""
    admin_only()
    c, tenant = container(), current_tenant()
    known = c.mail_accounts.account(tenant, name)
    fields = request.model_dump(exclude={"secret", "port"})
    port = request.port or (993 if request.security == "tls" else 143)
    kept = {"rules": known.rules if known else [], "ca_file": known.ca_file if known else None}  # a host's file
    account = _built(name=name, port=port, **kept, **fields)
    mailboxes.save_account(c, tenant, account, request.secret)
    return _accounts()


@router.put("/mail/accounts/<name>/rules", summary="Set an account's rules (admins)", responses=ok(MailAccountsOut))
def put_rules(name: Name, request: MailRulesIn) -> MailAccountsOut:
    """The account's rules become these, in this order (the first whose conditions all hold decides)."""
    admin_only()
    c, tenant = container(), current_tenant()
    known = c.mail_accounts.account(tenant, name)
    if known is None:
        raise NotFoundError("no such mail account")
    checked = mailboxes.checked_rules(request.rules)
    c.mail_accounts.save(tenant, known.model_copy(update={"rules": checked}))
    return _accounts()


@router.delete("/mail/accounts/<name>", summary="Remove a mail account (admins)", responses=ok(MailAccountsOut))
def delete_account(name: Name) -> MailAccountsOut:
    """The account, its folders' cursors and its secret go; the files it brought stay."""
    admin_only()
    if not mailboxes.remove_account(container(), current_tenant(), name):
        raise NotFoundError("no such mail account")
    return _accounts()


@router.post("/mail/accounts/<name>/poll", summary="Read an account's new mail now (admins)", responses=ok(MailPollOut))
def poll(name: Name) -> MailPollOut:
    """What is new in each folder, at most 25 messages a folder in this request (``more``: poll again, or let
    the schedule read the rest). A server that cannot be reached or refuses the login is the answer's
    ``error``, not a failed request."""
    admin_only()
    report = mailboxes.poll_account(container(), current_tenant(), name, limit=API_POLL_LIMIT)
    return MailPollOut.model_validate(asdict(report))


@router.post(
    "/mail/accounts/<name>/preview",
    summary="What the rules would do to the newest messages (admins)",
    responses=ok(MailPreviewOut),
)
def preview(name: Name, request: MailPreviewIn) -> MailPreviewOut:
    """The saved rules, or ``rules`` not yet saved, applied to the newest messages of the first folder, newest
    first: which rule takes each and what it makes of it. Nothing is marked read and nothing is ingested."""
    admin_only()
    lines = mailboxes.preview(container(), current_tenant(), name, rules=request.rules, count=request.count)
    return MailPreviewOut.model_validate({"messages": [asdict(x) for x in lines]})
