"""Mail read from a tenant's own mailboxes (``domain/mail_accounts.py``): accounts, their rules, polling.

A poll reads each folder from its cursor: the UIDs above the last one read, oldest first, at most ``limit``
messages a poll (the rest wait for the next). For each message it writes the UID as ``pending``, ingests the
message through the same path as pushed mail (``mail.ingest_mail``: threads, contacts, per-user access from
its recipients, idempotent per Message-ID and part), does the account's action on the server, then moves the
cursor past it. A poll killed at any point reads the pending message again and ingests nothing twice; a
message that another path already brought (the same Message-ID by SMTP, SES or another account) is not
ingested again, but is still marked, flagged or moved. A changed ``UIDVALIDITY`` starts the folder again.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from semfs.domain.access import parse_share
from semfs.domain.errors import InvalidRequest, MailboxRefused, MailboxUnavailable, NotFound, SemfsError
from semfs.domain.ids import sha256_hex
from semfs.domain.mail_accounts import FolderCursor, MailAccount, MailRule
from semfs.domain.models import utcnow
from semfs.domain.tags import manual_tag
from semfs.extractors.email import ParsedMail, parse_mail
from semfs.observability import get_logger
from semfs.pipeline.intake.mail import ingest_mail

if TYPE_CHECKING:
    from semfs.ports import Container
    from semfs.ports.mail_accounts import Mailbox

log = get_logger(__name__)
POLL_LIMIT = 200  # messages per folder per poll: a poll stays bounded, the rest wait for the next
PREVIEW_COUNT = 50


@dataclass
class FolderReport:
    folder: str
    read: int = 0
    ingested: int = 0  # messages that became files (or were already files of this account)
    duplicates: int = 0  # already brought by another path: not ingested again
    skipped: int = 0  # a rule said skip
    files: int = 0
    restarted: bool = False  # the folder's UIDVALIDITY changed
    more: bool = False  # stopped at the limit: more wait


@dataclass
class PollReport:
    account: str
    folders: list[FolderReport] = field(default_factory=list)
    error: str | None = None


@dataclass
class PreviewLine:
    uid: int
    subject: str
    sender: str | None
    attachments: list[str]
    rule: str | None  # the rule that takes it (None: no rule; it is ingested as mail)
    take: str


def _lower(value: str | None) -> str:
    return (value or "").casefold()


def rule_matches(rule: MailRule, mail: ParsedMail, size: int) -> bool:
    """Whether every condition ``rule`` sets holds for the message."""
    sender = f"{mail.sender.name} <{mail.sender.address}>" if mail.sender else ""
    checks = [
        rule.sender is None or _lower(rule.sender) in _lower(sender),
        rule.recipient is None
        or any(_lower(rule.recipient) in _lower(f"{a.name} <{a.address}>") for a in mail.to + mail.cc),
        rule.subject is None or _lower(rule.subject) in _lower(mail.subject),
        rule.body is None or _lower(rule.body) in _lower(mail.body),
        rule.attachment_name is None
        or any(fnmatch.fnmatch(_lower(a.filename), _lower(rule.attachment_name)) for a in mail.attachments),
        rule.attachment_type is None
        or any(_lower(a.content_type).startswith(_lower(rule.attachment_type)) for a in mail.attachments),
        rule.min_bytes is None or size >= rule.min_bytes,
        rule.max_bytes is None or size <= rule.max_bytes,
    ]
    return all(checks)


def first_rule(rules: Sequence[MailRule], mail: ParsedMail, size: int) -> MailRule | None:
    """The first rule, in order, whose conditions all hold."""
    return next((r for r in rules if rule_matches(r, mail, size)), None)


def checked_rules(rules: Sequence[MailRule]) -> list[MailRule]:
    """Rules whose tags and sharing are valid, names unique (``InvalidRequest`` naming the rule otherwise)."""
    seen: set[str] = set()
    for rule in rules:
        if rule.name in seen:
            raise InvalidRequest(f"two rules are called {rule.name!r}: a rule's name is unique in its account")
        seen.add(rule.name)
        try:
            [manual_tag(t) for t in rule.tags]
        except ValueError as e:
            raise InvalidRequest(f"rule {rule.name!r}: tags: {e}") from e
        parse_share(rule.share_with)
    return list(rules)


def save_account(c: Container, tenant: str, account: MailAccount, secret: str | None) -> MailAccount:
    """Store a new account (its secret sealed in the secret store) or change one (a secret of None keeps
    the stored one). ``InvalidRequest`` for a new account without a secret or rules that do not check."""
    checked_rules(account.rules)
    known = c.mail_accounts.account(tenant, account.name)
    ref = known.secret_ref if known else ""
    if secret:
        ref = c.secrets.put(tenant, f"mail/{account.name}", secret)
    elif not ref:
        raise InvalidRequest("a new account needs its password or OAuth secret")
    saved = account.model_copy(
        update={"secret_ref": ref, "created_at": known.created_at if known else account.created_at}
    )
    c.mail_accounts.save(tenant, saved)
    log.info("mail account saved", account=account.name, host_port=account.port, auth=account.auth)
    return saved


def remove_account(c: Container, tenant: str, name: str) -> bool:
    """Forget the account, its cursors and its secret (files it brought stay)."""
    account = c.mail_accounts.account(tenant, name)
    if account is None:
        return False
    if account.secret_ref:
        c.secrets.delete(account.secret_ref)
    return c.mail_accounts.delete(tenant, name)


def _account(c: Container, tenant: str, name: str) -> MailAccount:
    account = c.mail_accounts.account(tenant, name)
    if account is None:
        raise NotFound(f"no mail account called {name!r}")
    return account


def _secret_keeper(c: Container, tenant: str, account: MailAccount) -> tuple[str, Callable[[str], None]]:
    def store(rotated: str) -> None:
        c.secrets.put(tenant, f"mail/{account.name}", rotated)

    return c.secrets.get(account.secret_ref), store


def _delivered(account: MailAccount) -> list[str]:
    """The addresses a message in this mailbox counts as delivered to: the mailbox's own."""
    return [account.address] if account.address else []


def _one(c: Container, tenant: str, account: MailAccount, box: Mailbox, uid: int, resuming: bool) -> tuple[str, int]:
    """Ingest one message (what happened to it, and how many files it made)."""
    raw = box.fetch(uid)
    if raw is None:  # expunged since the search
        return "gone", 0
    try:
        parsed = parse_mail(raw, c.settings.mail.min_inline_image_bytes)
    except RecursionError:
        parsed = None
    rule = first_rule(account.rules, parsed, len(raw)) if parsed else None
    if rule is not None and rule.take == "skip":
        return "skipped", 0
    message_id = (parsed.message_id if parsed else None) or f"<{sha256_hex(raw)[:32]}@semfs.invalid>"
    if not resuming and c.mail.thread_of_message(tenant, message_id) is not None:
        return "duplicate", 0  # brought by SMTP, SES or another account already
    result = ingest_mail(c, tenant, raw, recipients=_delivered(account), source="imap", rule=rule)
    return "ingested", len(result.files)


def _poll_folder(
    c: Container, tenant: str, account: MailAccount, box: Mailbox, folder: str, limit: int
) -> FolderReport:
    report = FolderReport(folder=folder)
    validity = box.select(folder)
    cursor = c.mail_accounts.cursor(tenant, account.name, folder)
    if cursor is None or cursor.uidvalidity != validity:
        report.restarted = cursor is not None
        cursor = FolderCursor(folder=folder, uidvalidity=validity)
    uids = box.uids_after(cursor.last_uid)
    report.more = len(uids) > limit
    for uid in uids[:limit]:
        resuming = cursor.pending == uid
        cursor = cursor.model_copy(update={"pending": uid})
        c.mail_accounts.save_cursor(tenant, account.name, cursor)
        what, files = _one(c, tenant, account, box, uid, resuming)
        if what != "gone":
            box.after(uid, account.after, account.move_to)
        report.read += 1
        report.files += files
        report.ingested += what == "ingested"
        report.duplicates += what == "duplicate"
        report.skipped += what == "skipped"
        cursor = cursor.model_copy(update={"last_uid": uid, "pending": None})
        c.mail_accounts.save_cursor(tenant, account.name, cursor)
    if not uids:
        c.mail_accounts.save_cursor(tenant, account.name, cursor)
    return report


def poll_account(c: Container, tenant: str, name: str, *, limit: int = POLL_LIMIT) -> PollReport:
    """Read what is new in each of the account's folders (module docstring). A server that cannot be reached
    or refuses the login is the report's ``error`` and the account's ``last_error``; nothing read is lost."""
    account = _account(c, tenant, name)
    report = PollReport(account=name)
    try:
        secret, store = _secret_keeper(c, tenant, account)
        with c.open_mailbox(account, secret, store) as box:
            for folder in account.folders:
                report.folders.append(_poll_folder(c, tenant, account, box, folder, limit))
    except (MailboxUnavailable, MailboxRefused, NotFound) as e:
        report.error = str(e)
    except SemfsError as e:  # a message the pipeline refused to take (switched off, busy): tried next poll
        report.error = str(e)
    latest = c.mail_accounts.account(tenant, name)  # as it is now: changed, or removed, while it was read
    if latest is not None:
        c.mail_accounts.save(tenant, latest.model_copy(update={"last_poll_at": utcnow(), "last_error": report.error}))
    log.info(
        "mail account polled",
        account=name,
        read=sum(f.read for f in report.folders),
        files=sum(f.files for f in report.folders),
        failed=report.error is not None,
    )
    return report


def poll_all(c: Container, *, limit: int = POLL_LIMIT, deadline: float | None = None) -> list[PollReport]:
    """Poll every enabled account of every tenant (``semfs serve``'s interval; in AWS the maintenance
    function's schedule), starting none after ``deadline`` (monotonic): the rest wait for the next round."""
    import time

    reports = []
    for tenant, account in list(c.mail_accounts.all_accounts()):
        if deadline is not None and time.monotonic() >= deadline:
            log.info("mail polling stopped at its deadline", left=1)
            break
        if account.enabled:
            reports.append(poll_account(c, tenant, account.name, limit=limit))
    return reports


def preview(
    c: Container, tenant: str, name: str, *, rules: Sequence[MailRule] | None = None, count: int = PREVIEW_COUNT
) -> list[PreviewLine]:
    """What the account's rules (or ``rules``, not yet saved) would do to the newest ``count`` messages of its
    first folder, newest first. Reads without marking anything and ingests nothing. A server that refuses the
    account (its login, its certificate, the folder) is an ``InvalidRequest`` saying so: the account needs
    correcting; one that cannot be reached is retryable."""
    account = _account(c, tenant, name)
    try:
        return _preview(c, tenant, account, rules, count)
    except MailboxRefused as e:
        raise InvalidRequest(f"the mail server refused: {e.reason}") from e


def _preview(
    c: Container, tenant: str, account: MailAccount, rules: Sequence[MailRule] | None, count: int
) -> list[PreviewLine]:
    use = checked_rules(rules) if rules is not None else account.rules
    lines: list[PreviewLine] = []
    secret, store = _secret_keeper(c, tenant, account)
    with c.open_mailbox(account, secret, store) as box:
        box.select(account.folders[0])
        for uid in reversed(box.last_uids(max(1, min(count, 200)))):
            raw = box.fetch(uid)
            if raw is None:
                continue
            parsed = parse_mail(raw, c.settings.mail.min_inline_image_bytes)
            rule = first_rule(use, parsed, len(raw))
            lines.append(
                PreviewLine(
                    uid=uid,
                    subject=parsed.subject,
                    sender=parsed.sender.address if parsed.sender else None,
                    attachments=[a.filename for a in parsed.attachments],
                    rule=rule.name if rule else None,
                    take=rule.take if rule else "mail",
                )
            )
    return lines
