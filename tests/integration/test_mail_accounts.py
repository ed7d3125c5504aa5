"""Mail accounts against a real IMAP server (Debian's Dovecot, started per module on loopback ports): each
message read once, a poll stopped mid-batch and run again, a renumbered folder, the action on the server,
rules and their preview, TLS, a refused login, per-user access and the secret at rest.

What Dovecot cannot show here: a server without MOVE or UIDPLUS (Dovecot has both; the COPY fallback is
not exercised), and XOAUTH2 (see test_oauth_* below, against a token endpoint run by the test)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from typer.testing import CliRunner

from semfs.adapters.mailbox.imap import open_imap, refreshed_token
from semfs.bootstrap import Container, build_container
from semfs.domain.errors import MailboxRefused
from semfs.domain.mail_accounts import MailAccount, MailRule
from semfs.pipeline.intake.mailboxes import poll_account, poll_all, preview, remove_account, save_account
from semfs.pipeline.maintenance.purge import purge_tenant
from semfs.pipeline.principals import add_user
from semfs.ports.mail_accounts import Mailbox
from semfs.ports.repository import RecordQuery
from tests import mail_corpus as mc
from tests.builders import run_cli
from tests.conftest import make_settings
from tests.dovecot import Dovecot, dovecot_installed, start_dovecot

pytestmark = pytest.mark.integration
T = "acme"
PASSWORD = "correct horse battery staple"


class OAuthProvider(BaseHTTPRequestHandler):
    """An OAuth 2 provider as Gmail's and Microsoft's behave for IMAP: ``/token`` answers a refresh-token grant
    (RFC 6749 §6: a form-encoded POST with grant_type=refresh_token and the client id; a revoked or unknown
    token is 400 invalid_grant) with a fresh access token and, for a token marked to rotate, a new refresh
    token; ``/introspect`` (RFC 7662) tells Dovecot whose an access token is. What it cannot show: the
    providers' scopes, consent screens and token lifetimes."""

    grants: ClassVar[dict[str, str]] = {}  # refresh token → the mailbox it signs in to
    issued: ClassVar[dict[str, str]] = {}  # access token → the mailbox

    def do_POST(self) -> None:
        from urllib.parse import parse_qsl

        form = dict(parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))
        if self.path == "/introspect":
            user = self.issued.get(form.get("token", ""))
            self._send(200, {"active": True, "username": user} if user else {"active": False})
            return
        ok = self.headers["Content-Type"] == "application/x-www-form-urlencoded"
        refresh = form.get("refresh_token", "")
        if (
            not ok
            or form.get("grant_type") != "refresh_token"
            or form.get("client_id") != "semfs"
            or refresh not in self.grants
        ):
            self._send(400, {"error": "invalid_grant"})
            return
        user = self.grants[refresh]
        access = f"at-{len(self.issued)}"
        self.issued[access] = user
        rotated: dict[str, str] = {}
        if refresh.startswith("rotate-"):  # Microsoft's way: the old refresh token is spent
            rotated["refresh_token"] = f"{refresh}-next"
            self.grants[rotated["refresh_token"]] = self.grants.pop(refresh)
        self._send(200, {"access_token": access, "token_type": "Bearer", "expires_in": 3599, **rotated})

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture(scope="module")
def oauth() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), OAuthProvider)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def dovecot(oauth: str) -> Iterator[Dovecot]:
    assert dovecot_installed(), "Debian's dovecot-imapd is needed (.ci/run installs it)"
    server = start_dovecot({f"user{n}@northwind.example": PASSWORD for n in range(100)}, f"{oauth}/introspect")
    yield server
    server.stop()


_users = iter(range(100))


@pytest.fixture
def mailbox_user(dovecot: Dovecot) -> str:
    """A fresh mailbox per test (the server is shared by the module)."""
    return f"user{next(_users)}@northwind.example"


@pytest.fixture
def c(tmp_path: Path, shared_extractor: object) -> Iterator[Container]:
    container = build_container(make_settings(tmp_path), extractor=shared_extractor)  # type: ignore[arg-type]
    yield container
    container.close()


def account(dovecot: Dovecot, user: str, **given: Any) -> MailAccount:
    values: dict[str, Any] = {
        "name": "inbox",
        "host": "localhost",
        "port": dovecot.imap,
        "security": "starttls",
        "ca_file": str(dovecot.cert),
        "username": user,
        "after": "seen",
    }
    return MailAccount(**(values | given))


def msg(n: int, *, subject: str | None = None, attach: bool = True, **kw: Any) -> bytes:
    m = mc.message(subject=subject or f"Invoice {n} for the harbour works", msgid=f"<m{n}.{id(kw)}@acme.example>", **kw)
    if attach:
        m.add_attachment(
            mc.TERMS + f"\n\nInvoice {n}.".encode(), maintype="text", subtype="markdown", filename=f"terms-{n}.md"
        )
    return m.as_bytes()


def files_of(c: Container) -> list[Any]:
    return c.repo.query(RecordQuery(tenant_id=T, limit=1000))


def test_a_mailbox_is_read_once_and_then_only_what_is_new(c: Container, dovecot: Dovecot, mailbox_user: str) -> None:
    for n in range(3):
        dovecot.deliver(mailbox_user, msg(n))
    save_account(c, T, account(dovecot, mailbox_user), PASSWORD)

    first = poll_account(c, T, "inbox")
    assert first.error is None
    (folder,) = first.folders
    # each message's attachment (its body, "please find the figures attached", is no document of its own)
    assert (folder.read, folder.ingested, folder.duplicates, folder.files) == (3, 3, 0, 3)
    records = files_of(c)
    assert len(records) == 3 and {r.source_type for r in records} == {"email_attachment"}
    assert all(r.source_key.startswith("imap:") for r in records)
    assert all("Seen" in flags for flags in dovecot.flags(mailbox_user).values())  # the account's action

    again = poll_account(c, T, "inbox")
    assert again.folders[0].read == 0 and len(files_of(c)) == 3

    dovecot.deliver(mailbox_user, msg(3))
    third = poll_account(c, T, "inbox")
    assert (third.folders[0].read, third.folders[0].files) == (1, 1) and len(files_of(c)) == 4
    saved = c.mail_accounts.account(T, "inbox")
    assert saved is not None and saved.last_poll_at is not None and saved.last_error is None


class Killed(BaseException):
    """The process dying: no handler of semfs's catches it."""


def killing(c: Container, *, after_actions: int) -> Container:
    """The container with a mailbox that dies on the n-th action, after that message was ingested and
    before its cursor moved (the worst place to die)."""
    done = {"n": 0}
    real = c.open_mailbox

    class Dying:
        def __init__(self, box: Mailbox) -> None:
            self._box = box

        def __getattr__(self, name: str) -> Any:
            return getattr(self._box, name)

        def after(self, uid: int, action: Any, move_to: str | None) -> None:
            done["n"] += 1
            if done["n"] == after_actions:
                raise Killed
            self._box.after(uid, action, move_to)

    @contextmanager
    def opener(acc: MailAccount, secret: str, store: Any) -> Iterator[Any]:
        with real(acc, secret, store) as box:
            yield Dying(box)

    return replace(c, open_mailbox=opener)


def test_a_poll_killed_mid_batch_and_run_again_ingests_each_message_exactly_once(
    c: Container, dovecot: Dovecot, mailbox_user: str
) -> None:
    for n in range(5):
        dovecot.deliver(mailbox_user, msg(100 + n))
    save_account(c, T, account(dovecot, mailbox_user), PASSWORD)
    with pytest.raises(Killed):
        poll_account(killing(c, after_actions=3), T, "inbox")
    cursor = c.mail_accounts.cursor(T, "inbox", "INBOX")
    assert cursor is not None and cursor.last_uid == 2 and cursor.pending == 3  # the third was ingested, not marked

    report = poll_account(c, T, "inbox")
    assert report.folders[0].read == 3  # the pending one again, then the two never read
    records = files_of(c)
    per_message: dict[str | None, int] = {}
    for r in records:
        per_message[r.source_message_id] = per_message.get(r.source_message_id, 0) + 1
    assert len(per_message) == 5 and set(per_message.values()) == {1}  # each message's attachment, once
    assert all("Seen" in f for f in dovecot.flags(mailbox_user).values())  # the pending one was marked this time


def test_a_renumbered_folder_is_read_again_without_ingesting_anything_twice(
    c: Container, dovecot: Dovecot, mailbox_user: str
) -> None:
    for n in range(2):
        dovecot.deliver(mailbox_user, msg(200 + n))
    save_account(c, T, account(dovecot, mailbox_user, after="none"), PASSWORD)
    poll_account(c, T, "inbox")
    before = c.mail_accounts.cursor(T, "inbox", "INBOX")
    dovecot.renumber(mailbox_user, "INBOX", 424242)
    dovecot.deliver(mailbox_user, msg(202))

    report = poll_account(c, T, "inbox")
    (folder,) = report.folders
    assert folder.restarted and (folder.read, folder.duplicates, folder.ingested) == (3, 2, 1)
    after = c.mail_accounts.cursor(T, "inbox", "INBOX")
    assert before is not None and after is not None and after.uidvalidity == 424242 != before.uidvalidity
    assert len(files_of(c)) == 3


def test_the_same_message_by_smtp_and_by_imap_is_one_set_of_files(
    c: Container, dovecot: Dovecot, mailbox_user: str
) -> None:
    from semfs.pipeline.intake.mail import ingest_mail

    raw = msg(250)
    ingest_mail(c, T, raw, source="smtp")
    dovecot.deliver(mailbox_user, raw)
    save_account(c, T, account(dovecot, mailbox_user, after="flag"), PASSWORD)
    report = poll_account(c, T, "inbox")
    assert (report.folders[0].duplicates, len(files_of(c))) == (1, 1)
    assert all("Flagged" in f for f in dovecot.flags(mailbox_user).values())  # still acted on


def test_processed_messages_are_moved_to_the_folder_the_account_names(
    c: Container, dovecot: Dovecot, mailbox_user: str
) -> None:
    dovecot.create_folder(mailbox_user, "Filed by semfs")
    for n in range(2):
        dovecot.deliver(mailbox_user, msg(300 + n))
    save_account(c, T, account(dovecot, mailbox_user, after="move", move_to="Filed by semfs"), PASSWORD)
    assert poll_account(c, T, "inbox").folders[0].read == 2
    assert dovecot.uids(mailbox_user, "INBOX") == [] and len(dovecot.uids(mailbox_user, "Filed by semfs")) == 2


def test_rules_decide_what_a_message_becomes_and_the_preview_changes_nothing(
    c: Container, dovecot: Dovecot, mailbox_user: str
) -> None:
    dovecot.deliver(mailbox_user, msg(400, sender="Newsletter <news@promo.example>"))
    dovecot.deliver(mailbox_user, msg(401))
    dovecot.deliver(
        mailbox_user,
        msg(
            402,
            subject="Lunch on Friday?",
            attach=False,
            body="Shall we try the new place by the harbour at noon on Friday?",
        ),
    )
    rules = [
        MailRule(name="no newsletters", sender="promo.example", take="skip"),
        MailRule(name="terms", attachment_name="terms-*.md", take="attachments", tags=["contracts"]),
    ]
    save_account(c, T, account(dovecot, mailbox_user, rules=rules), PASSWORD)

    shown = preview(c, T, "inbox")
    assert [(line.rule, line.take) for line in shown] == [
        (None, "mail"),
        ("terms", "attachments"),
        ("no newsletters", "skip"),
    ]
    assert not any("Seen" in f for f in dovecot.flags(mailbox_user).values())  # read with PEEK: nothing marked
    assert files_of(c) == []
    other = [MailRule(name="all as eml", take="message")]
    assert {line.take for line in preview(c, T, "inbox", rules=other)} == {"message"}  # unsaved rules, tried

    report = poll_account(c, T, "inbox")
    assert (report.folders[0].read, report.folders[0].skipped) == (3, 1)
    records = files_of(c)
    by_name = {r.filename: r for r in records}
    assert len(records) == 2 and "terms-401.md" in by_name
    (lunch,) = [r for r in records if r.filename != "terms-401.md"]
    assert lunch.filename.endswith(".txt") and lunch.source_key.endswith(":-1")  # no rule took it: its body
    assert "contracts" in by_name["terms-401.md"].tags
    assert by_name["terms-401.md"].provenance["rule"] == "terms"


def test_tls_checks_the_certificate_and_a_wrong_password_is_reported_not_raised(
    c: Container, dovecot: Dovecot, mailbox_user: str, caplog: pytest.LogCaptureFixture
) -> None:
    dovecot.deliver(mailbox_user, msg(500))
    tls = account(dovecot, mailbox_user, name="tls", security="tls", port=dovecot.imaps)
    save_account(c, T, tls, PASSWORD)
    assert poll_account(c, T, "tls").folders[0].read == 1

    untrusted = account(dovecot, mailbox_user, name="untrusted", security="tls", port=dovecot.imaps, ca_file=None)
    save_account(c, T, untrusted, PASSWORD)
    report = poll_account(c, T, "untrusted")
    assert report.error is not None and "certificate is not trusted" in report.error

    caplog.set_level(logging.DEBUG)
    save_account(c, T, account(dovecot, mailbox_user, name="wrong"), "not the password")
    report = poll_account(c, T, "wrong")
    assert report.error == f"the server refused the login for {mailbox_user!r}"
    saved = c.mail_accounts.account(T, "wrong")
    assert saved is not None and saved.last_error == report.error
    assert "not the password" not in caplog.text and PASSWORD not in caplog.text

    clear = open_imap(account(dovecot, mailbox_user, host="imap.example.com", security="none"), PASSWORD, print)
    with pytest.raises(MailboxRefused, match="loopback"):
        clear.__enter__()


def test_mail_read_from_a_users_mailbox_is_that_users(c: Container, dovecot: Dovecot, mailbox_user: str) -> None:
    add_user(c, T, "root", role="admin")
    add_user(c, T, "alice", addresses=[mailbox_user])
    add_user(c, T, "bob", addresses=["bob@northwind.example"])
    # sent to a list alice is on: only her mailbox shows she got it
    dovecot.deliver(mailbox_user, msg(600, to="all-staff@lists.example", cc=None))
    save_account(c, T, account(dovecot, mailbox_user, address=mailbox_user), PASSWORD)
    poll_account(c, T, "inbox")
    records = files_of(c)
    assert records and all(r.readers == ["u:alice"] for r in records), [r.readers for r in records]


def test_the_secret_is_sealed_at_rest_and_goes_with_the_account_and_the_tenant(
    c: Container, dovecot: Dovecot, mailbox_user: str, tmp_path: Path
) -> None:
    saved = save_account(c, T, account(dovecot, mailbox_user), PASSWORD)
    data = c.settings.data_dir
    assert (data / "secret.key").stat().st_mode & 0o777 == 0o600
    for db in data.glob("*.db*"):
        assert PASSWORD.encode() not in db.read_bytes()
    assert saved.secret_ref and PASSWORD not in saved.model_dump_json()
    # changing the account without a secret keeps the stored one
    save_account(c, T, saved.model_copy(update={"folders": ["INBOX", "Archive"]}), None)
    assert c.secrets.get(saved.secret_ref) == PASSWORD

    assert remove_account(c, T, "inbox") and c.mail_accounts.account(T, "inbox") is None
    with pytest.raises(Exception, match="gone"):
        c.secrets.get(saved.secret_ref)

    save_account(c, T, account(dovecot, mailbox_user, name="again"), PASSWORD)
    report = purge_tenant(c, T)
    assert (report["mail_accounts"], report["secrets"]) == (1, 1)
    assert list(c.mail_accounts.all_accounts()) == []


def test_poll_all_reads_every_enabled_account_of_every_tenant(
    c: Container, dovecot: Dovecot, mailbox_user: str
) -> None:
    dovecot.deliver(mailbox_user, msg(700))
    save_account(c, T, account(dovecot, mailbox_user), PASSWORD)
    save_account(c, "beta", account(dovecot, mailbox_user, after="none"), PASSWORD)
    save_account(c, "beta", account(dovecot, mailbox_user, name="off", enabled=False), PASSWORD)
    reports = poll_all(c)
    assert sorted(r.account for r in reports) == ["inbox", "inbox"]
    assert len(c.repo.query(RecordQuery(tenant_id="beta"))) == 1 and len(files_of(c)) == 1


# ---- XOAUTH2: a token endpoint and Dovecot's RFC 7662 introspection of the access tokens it issued ----


def test_oauth_refresh_gets_a_token_and_keeps_a_rotated_refresh_token(oauth: str) -> None:
    OAuthProvider.grants |= {"rotate-a": "someone@northwind.example", "plain-a": "someone@northwind.example"}
    grant = {"token_url": f"{oauth}/token", "client_id": "semfs", "refresh_token": "rotate-a"}
    token, rotated = refreshed_token(json.dumps(grant))
    assert OAuthProvider.issued[token] == "someone@northwind.example"
    assert rotated is not None and json.loads(rotated)["refresh_token"] == "rotate-a-next"
    assert refreshed_token(json.dumps(grant | {"refresh_token": "plain-a"}))[1] is None
    with pytest.raises(MailboxRefused, match="HTTP 400"):  # spent by the rotation
        refreshed_token(json.dumps(grant))
    with pytest.raises(MailboxRefused, match="not JSON"):
        refreshed_token("a password, not a grant")
    with pytest.raises(MailboxRefused, match="http"):
        refreshed_token(json.dumps(grant | {"token_url": "file:///etc/passwd"}))


def test_an_xoauth2_account_signs_in_with_a_refreshed_token_and_stores_the_rotated_one(
    c: Container, dovecot: Dovecot, mailbox_user: str, oauth: str
) -> None:
    OAuthProvider.grants[f"rotate-{mailbox_user}"] = mailbox_user
    grant = {"token_url": f"{oauth}/token", "client_id": "semfs", "refresh_token": f"rotate-{mailbox_user}"}
    dovecot.deliver(mailbox_user, msg(800))
    saved = save_account(c, T, account(dovecot, mailbox_user, auth="xoauth2"), json.dumps(grant))
    report = poll_account(c, T, "inbox")
    assert report.error is None and report.folders[0].files == 1
    assert json.loads(c.secrets.get(saved.secret_ref))["refresh_token"] == f"rotate-{mailbox_user}-next"
    dovecot.deliver(mailbox_user, msg(801))
    assert poll_account(c, T, "inbox").folders[0].files == 1  # the stored, rotated token works next time

    for token in [t for t, user in OAuthProvider.grants.items() if user == mailbox_user]:
        del OAuthProvider.grants[token]  # the user revoked semfs's access
    report = poll_account(c, T, "inbox")
    assert report.error is not None and "refused the refresh token" in report.error


def test_the_mail_commands_from_adding_an_account_to_polling_it(
    cli: CliRunner, dovecot: Dovecot, mailbox_user: str
) -> None:
    from semfs.cli import app

    dovecot.deliver(mailbox_user, msg(900))
    dovecot.deliver(mailbox_user, msg(901, sender="Deals <deals@promo.example>"))
    where = [
        "--host",
        "localhost",
        "--port",
        str(dovecot.imap),
        "--security",
        "starttls",
        "--ca-file",
        str(dovecot.cert),
    ]
    added = cli.invoke(
        app, ["mail", "add", "work", *where, "--username", mailbox_user, "--password-stdin"], input=f"{PASSWORD}\n"
    )
    assert added.exit_code == 0 and f"work: {mailbox_user} at localhost" in added.output
    assert "deals" in run_cli(
        cli, "mail", "rule", "add", "work", "no-deals", "--from", "promo.example", "--take", "skip"
    )
    assert "1. no-deals: sender 'promo.example' → skip" in run_cli(cli, "mail", "rule", "list", "work")
    shown = run_cli(cli, "mail", "preview", "work")
    assert "skip        rule 'no-deals'" in shown and "mail        no rule" in shown
    assert "work INBOX: 2 read, 1 files, 0 already here, 1 skipped by rules" in run_cli(cli, "mail", "poll")
    listed = json.loads(run_cli(cli, "mail", "list", "--json"))
    assert listed[0]["name"] == "work" and "secret_ref" not in listed[0] and listed[0]["last_error"] is None

    bad = cli.invoke(app, ["mail", "add", "x", "--host", "h", "--username", "u", "--after", "move"], input="pw\n")
    assert bad.exit_code == 2 and "needs move_to" in bad.output  # a usage error, nothing stored
    no_secret = cli.invoke(app, ["mail", "add", "y", "--host", "h", "--username", "u"], input="")
    assert no_secret.exit_code == 2 and "--password-stdin" in no_secret.output
    wrong = cli.invoke(
        app, ["mail", "add", "wrong", *where, "--username", mailbox_user, "--password-stdin"], input="nope\n"
    )
    assert wrong.exit_code == 0
    polled = cli.invoke(app, ["mail", "poll", "wrong"])
    assert polled.exit_code == 1 and "refused the login" in polled.output
    assert run_cli(cli, "mail", "rm", "wrong") == "removed wrong\n"
    assert cli.invoke(app, ["mail", "rm", "wrong"]).exit_code == 1


def test_the_maintenance_function_reads_mail_accounts_cold_under_its_own_role(
    aws_stack: Any, dovecot: Dovecot, mailbox_user: str
) -> None:
    """In AWS an admin adds the account (DynamoDB item, Secrets Manager secret); the scheduled maintenance
    function, cold and under the template's role for it, reads the mailbox and starts each file's execution."""
    from tests.integration.aws_harness import FakeContext
    from tests.waits import CEILING_S

    for n in range(2):
        dovecot.deliver(mailbox_user, msg(950 + n))
    admin = aws_stack.container("reembed")  # outside any handler: the admin's own credentials
    save_account(admin, T, account(dovecot, mailbox_user), PASSWORD)
    aws_stack.cold("reembed")
    report = aws_stack.handlers["reembed"].lambda_handler({"task": "poll_mail"}, FakeContext())
    assert report == {"accounts": 1, "failed": 0, "messages": 2, "files": 2}
    executions = aws_stack.executions()
    assert len(executions) == 2
    for e in executions:
        assert aws_stack.wait(e["executionArn"], CEILING_S)["status"] == "SUCCEEDED"
    assert aws_stack.handlers["reembed"].lambda_handler({"task": "poll_mail"}, FakeContext())["messages"] == 0
    assert aws_stack.iam.calls["reembed secretsmanager:GetSecretValue"] == 2


def test_the_mail_account_api_for_admins(c: Container, dovecot: Dovecot, mailbox_user: str) -> None:
    """Add, list (no secret in any answer), set rules, preview, poll, remove; a member is refused (403)."""
    import socket
    import urllib.error
    import urllib.request

    from semfs.server import ApiKeys, start_http

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    keys = ApiKeys(c.settings.api_keys_file)
    admin, member = keys.create(T, user="root"), keys.create(T, user="bob")
    add_user(c, T, "root", role="admin")
    add_user(c, T, "bob")
    server = start_http(c, keys, "127.0.0.1", port)

    def call(method: str, path: str, body: Any = None, key: str = admin) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
        request.add_header("Authorization", f"Bearer {key}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                return answer.status, json.loads(answer.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    try:
        dovecot.deliver(mailbox_user, msg(1000))
        dovecot.deliver(mailbox_user, msg(1001, sender="Deals <deals@promo.example>"))
        where = {"host": "localhost", "port": dovecot.imap, "security": "starttls", "username": mailbox_user}
        status, body = call("PUT", "/mail/accounts/work", where)
        assert status == 400 and "secret" in body["error"]["message"]  # a new account needs one
        c.mail_accounts.save(T, account(dovecot, mailbox_user, name="work"))  # the CA bundle is a host setting
        status, body = call("PUT", "/mail/accounts/work", {**where, "secret": PASSWORD})
        assert status == 200 and PASSWORD not in json.dumps(body)
        (shown,) = body["accounts"]
        assert shown["name"] == "work" and "secret_ref" not in shown and "secret" not in shown
        rules = {"rules": [{"name": "no deals", "sender": "promo.example", "take": "skip"}]}
        assert call("PUT", "/mail/accounts/work/rules", rules)[1]["accounts"][0]["rules"][0]["take"] == "skip"
        assert call("PUT", "/mail/accounts/work/rules", {"rules": [{"name": "x", "share_with": ["all"]}]})[0] == 400
        status, body = call("POST", "/mail/accounts/work/preview", {})
        assert status == 200 and [m["rule"] for m in body["messages"]] == ["no deals", None]
        status, body = call("POST", "/mail/accounts/work/poll")
        assert status == 200 and body["error"] is None and body["folders"][0]["skipped"] == 1
        assert call("PUT", "/mail/accounts/work", {**where, "secret": "not it"})[0] == 200
        status, body = call("POST", "/mail/accounts/work/preview", {})
        assert status == 400 and "refused the login" in body["error"]["message"]  # the account needs correcting
        assert call("GET", "/mail/accounts", key=member)[0] == 403
        assert call("DELETE", "/mail/accounts/work", key=member)[0] == 403
        assert call("DELETE", "/mail/accounts/work")[0] == 200
        assert call("DELETE", "/mail/accounts/work")[0] == 404
    finally:
        server.shutdown()


def test_the_search_api_keeps_an_accounts_secret_in_secrets_manager_under_its_own_role(
    aws_stack: Any, dovecot: Dovecot, mailbox_user: str
) -> None:
    """The search API function, cold and under the template's role for it: PUT /mail/accounts/{name} creates
    the account's secret under the stack's prefix (CreateSecret with its tenant tag), the answer holds no
    secret, DELETE removes it; a caller of a tenant without users is its admin."""
    from tests.integration.aws_harness import ROOT, FakeContext

    def api(method: str, path: str, body: Any = None) -> tuple[int, Any]:
        event: dict[str, Any] = json.loads((ROOT / "events" / "apigw_search.json").read_text())
        event.update(rawPath=path, routeKey=f"{method} {path}", body=json.dumps(body) if body is not None else None)
        event["requestContext"]["http"].update(method=method, path=path)
        answer = aws_stack.handlers["search_api"].lambda_handler(event, FakeContext())
        return answer["statusCode"], json.loads(answer["body"])

    aws_stack.cold("search_api")
    where = {"host": "imap.example.com", "username": mailbox_user, "secret": PASSWORD}
    status, body = api("PUT", "/mail/accounts/work", where)
    assert status == 200 and PASSWORD not in json.dumps(body), body
    import boto3

    secrets = boto3.client("secretsmanager", region_name="eu-west-1")
    (listed,) = secrets.list_secrets()["SecretList"]
    assert listed["Name"] == "semfs/semfs/mail/acme/mail/work" and {"Key": "tenant", "Value": "acme"} in listed["Tags"]
    assert secrets.get_secret_value(SecretId=listed["Name"])["SecretString"] == PASSWORD
    assert api("DELETE", "/mail/accounts/work")[0] == 200
    assert secrets.list_secrets()["SecretList"] == []
    assert aws_stack.iam.calls["search_api secretsmanager:CreateSecret"] == 1


def test_semfs_serve_reads_the_accounts_on_its_interval(c: Container, dovecot: Dovecot, mailbox_user: str) -> None:
    """The poller `semfs serve` starts: it reads every account at once and again each interval, until stopped;
    a message delivered meanwhile is read by the next round (waited for as a condition, not a duration)."""
    import time

    from semfs.server import start_mail_polling
    from tests.waits import CEILING_S

    dovecot.deliver(mailbox_user, msg(1100))
    save_account(c, T, account(dovecot, mailbox_user), PASSWORD)
    stop = start_mail_polling(c, interval_s=0.2)
    try:
        deadline = time.monotonic() + CEILING_S
        while len(files_of(c)) < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(files_of(c)) == 1
        dovecot.deliver(mailbox_user, msg(1101))
        while len(files_of(c)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(files_of(c)) == 2
    finally:
        stop.set()


def test_an_account_removed_while_it_is_read_stays_removed(c: Container, dovecot: Dovecot, mailbox_user: str) -> None:
    dovecot.deliver(mailbox_user, msg(1200))
    save_account(c, T, account(dovecot, mailbox_user), PASSWORD)
    real = c.open_mailbox

    @contextmanager
    def removing(acc: MailAccount, secret: str, store: Any) -> Iterator[Any]:
        with real(acc, secret, store) as box:
            remove_account(c, T, "inbox")  # an admin removes it while the poll runs
            yield box

    poll_account(replace(c, open_mailbox=removing), T, "inbox")
    assert c.mail_accounts.account(T, "inbox") is None  # the poll's record of itself did not bring it back
