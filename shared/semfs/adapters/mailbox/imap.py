"""``open_imap``: an IMAP4rev1 mailbox (RFC 3501) through the standard library's ``imaplib``.

TLS from the first byte (``tls``, port 993) or upgraded by STARTTLS (``starttls``, port 143) with the system's
certificate authorities, or a CA bundle the account names; ``none`` only to a loopback host (a password is
never sent in clear over a network). Login by password, or by XOAUTH2 (Gmail, Microsoft 365) with an access
token refreshed from the account's refresh token at each connection (RFC 6749 §6; a provider that rotates
the refresh token hands back a new one, which is stored).

Messages are read by UID with ``BODY.PEEK[]`` (the server does not mark them read); a processed message is
marked ``\\Seen`` or ``\\Flagged``, or moved (``UID MOVE``, RFC 6851; without it ``UID COPY`` then ``\\Deleted``
and ``UID EXPUNGE`` of that one message where UIDPLUS allows, else it stays flagged deleted for the
mailbox's own expunge). Every call has the account's timeout.
"""

from __future__ import annotations

import imaplib
import ipaddress
import json
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from semfs.domain.errors import MailboxRefused, MailboxUnavailable
from semfs.domain.mail_accounts import AfterAction, MailAccount
from semfs.observability import get_logger

log = get_logger(__name__)
TIMEOUT_S = 60.0
_UIDVALIDITY = re.compile(rb"UIDVALIDITY (\d+)")


def _quoted(folder: str) -> str:
    """A folder name as an IMAP quoted string (spaces, quotes and backslashes are legal in names)."""
    return '"' + folder.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _context(ca_file: str | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=ca_file) if ca_file else ssl.create_default_context()


def refreshed_token(secret: str, timeout_s: float = TIMEOUT_S) -> tuple[str, str | None]:
    """An access token from the account's OAuth secret (JSON: ``token_url``, ``client_id``, ``refresh_token``,
    optionally ``client_secret`` and ``scope``), and the secret to store when the provider rotated the
    refresh token (else None)."""
    try:
        grant = json.loads(secret)
        form = {"grant_type": "refresh_token", "refresh_token": grant["refresh_token"], "client_id": grant["client_id"]}
        url = str(grant["token_url"])
    except (ValueError, KeyError, TypeError) as e:
        raise MailboxRefused(
            "the account's OAuth secret is not JSON with token_url, client_id and refresh_token"
        ) from e
    form.update({k: grant[k] for k in ("client_secret", "scope") if grant.get(k)})
    if urllib.parse.urlsplit(url).scheme not in ("https", "http"):
        raise MailboxRefused("the account's token_url is not an http(s) address")
    body = urllib.parse.urlencode(form).encode()
    request = urllib.request.Request(url, data=body, method="POST")  # noqa: S310 (http(s) only, checked above)
    request.add_header("Accept", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:  # noqa: S310 (http(s) only, checked above)
            body = json.loads(answer.read(1 << 20))
    except urllib.error.HTTPError as e:
        if e.code in (400, 401, 403):  # invalid_grant: revoked or expired; the user signs in again
            raise MailboxRefused(f"the token endpoint refused the refresh token (HTTP {e.code})") from e
        raise MailboxUnavailable(f"the token endpoint answered HTTP {e.code}") from e
    except (OSError, ValueError) as e:
        raise MailboxUnavailable(f"the token endpoint could not be reached ({type(e).__name__})") from e
    token = body.get("access_token") if isinstance(body, dict) else None
    if not isinstance(token, str) or not token:
        raise MailboxUnavailable("the token endpoint's answer has no access_token")
    rotated = body.get("refresh_token")
    if isinstance(rotated, str) and rotated and rotated != grant["refresh_token"]:
        return token, json.dumps({**grant, "refresh_token": rotated})
    return token, None


class ImapMailbox:
    """``Mailbox`` over one logged-in ``imaplib`` connection."""

    def __init__(self, conn: imaplib.IMAP4) -> None:
        self._conn = conn
        # what the server can do once logged in (the greeting's list lacks MOVE and UIDPLUS on most servers)
        data = self._call("capabilities", conn.capability)
        self._caps = {c.upper() for c in (data[0] or b"").decode("ascii", "replace").split()}

    def _ok(self, what: str, typ: str, data: list[Any]) -> list[Any]:
        if typ != "OK":
            said = b" ".join(d for d in data if isinstance(d, bytes)).decode("utf-8", "replace")[:200]
            raise MailboxRefused(f"the server refused {what}: {said}")
        return data

    def _call(self, what: str, fn: Callable[..., tuple[str, list[Any]]], *args: Any) -> list[Any]:
        try:
            typ, data = fn(*args)
        except imaplib.IMAP4.abort as e:
            raise MailboxUnavailable(f"the server dropped the connection during {what}") from e
        except imaplib.IMAP4.error as e:
            raise MailboxRefused(f"the server refused {what}: {str(e)[:200]}") from e
        except OSError as e:
            raise MailboxUnavailable(f"the connection failed during {what} ({type(e).__name__})") from e
        return self._ok(what, typ, data)

    def select(self, folder: str) -> int:
        self._call(f"folder {folder!r}", self._conn.select, _quoted(folder))
        untagged = self._conn.untagged_responses.get("OK", [])
        for line in untagged:
            if isinstance(line, bytes) and (m := _UIDVALIDITY.search(line)):
                return int(m.group(1))
        _, data = self._conn.response("UIDVALIDITY")
        if data and data[0]:
            return int(data[0])
        raise MailboxUnavailable(f"the server gave no UIDVALIDITY for {folder!r}")

    def _search(self, criteria: str) -> list[int]:
        data = self._call("a search", self._conn.uid, "SEARCH", criteria)
        return sorted({int(u) for u in (data[0] or b"").split()})

    def uids_after(self, uid: int) -> list[int]:
        # "n:*" includes the highest UID even when it is below n (RFC 3501 §6.4.8): keep those above
        return [u for u in self._search(f"UID {uid + 1}:*") if u > uid]

    def last_uids(self, count: int) -> list[int]:
        return self._search("ALL")[-count:] if count > 0 else []

    def fetch(self, uid: int) -> bytes | None:
        data = self._call(f"message {uid}", self._conn.uid, "FETCH", str(uid), "(BODY.PEEK[])")
        parts = [d[1] for d in data if isinstance(d, tuple) and len(d) == 2 and isinstance(d[1], bytes)]
        return parts[0] if parts else None

    def after(self, uid: int, action: AfterAction, move_to: str | None) -> None:
        if action == "seen":
            self._call("marking read", self._conn.uid, "STORE", str(uid), "+FLAGS.SILENT", r"(\Seen)")
        elif action == "flag":
            self._call("flagging", self._conn.uid, "STORE", str(uid), "+FLAGS.SILENT", r"(\Flagged)")
        elif action == "move" and move_to:
            self._move(uid, move_to)

    def _move(self, uid: int, folder: str) -> None:
        caps = self._caps
        if "MOVE" in caps:
            self._call(f"moving to {folder!r}", self._conn.uid, "MOVE", str(uid), _quoted(folder))
            return
        self._call(f"copying to {folder!r}", self._conn.uid, "COPY", str(uid), _quoted(folder))
        self._call("marking deleted", self._conn.uid, "STORE", str(uid), "+FLAGS.SILENT", r"(\Deleted)")
        if "UIDPLUS" in caps:  # only this message: a plain EXPUNGE would take others the user deleted
            self._call("expunging", self._conn.uid, "EXPUNGE", str(uid))


def _connect(account: MailAccount, timeout_s: float) -> imaplib.IMAP4:
    if account.security == "none" and not _loopback(account.host):
        raise MailboxRefused("security=none is allowed only to a loopback host: use tls or starttls")
    try:
        if account.security == "tls":
            return imaplib.IMAP4_SSL(
                account.host, account.port, ssl_context=_context(account.ca_file), timeout=timeout_s
            )
        conn = imaplib.IMAP4(account.host, account.port, timeout=timeout_s)
        if account.security == "starttls":
            conn.starttls(ssl_context=_context(account.ca_file))
        return conn
    except ssl.SSLCertVerificationError as e:
        raise MailboxRefused(f"the server's certificate is not trusted ({e.verify_message})") from e
    except imaplib.IMAP4.error as e:
        raise MailboxRefused(f"the server refused the connection: {str(e)[:200]}") from e
    except (TimeoutError, OSError) as e:
        raise MailboxUnavailable(f"{account.host}:{account.port} could not be reached ({type(e).__name__})") from e


def _login(conn: imaplib.IMAP4, account: MailAccount, secret: str, store: Callable[[str], None]) -> None:
    try:
        if account.auth == "xoauth2":
            token, rotated = refreshed_token(secret)
            if rotated:
                store(rotated)
            blob = f"user={account.username}\x01auth=Bearer {token}\x01\x01".encode()
            conn.authenticate("XOAUTH2", lambda _challenge: blob)
        else:
            conn.login(account.username, secret)
    except imaplib.IMAP4.abort as e:
        raise MailboxUnavailable("the server dropped the connection at login") from e
    except imaplib.IMAP4.error as e:
        # the server's words, never the secret's (imaplib's message carries only the server's reply)
        raise MailboxRefused(f"the server refused the login for {account.username!r}") from e


@contextmanager
def open_imap(account: MailAccount, secret: str, store: Callable[[str], None]) -> Iterator[ImapMailbox]:
    """A logged-in mailbox for ``account``; ``store`` keeps a rotated OAuth secret. Logs out on leaving."""
    conn = _connect(account, TIMEOUT_S)
    try:
        _login(conn, account, secret, store)
        yield ImapMailbox(conn)
    finally:
        try:
            conn.logout()
        except (imaplib.IMAP4.error, OSError):
            log.info("imap logout failed", host_port=account.port)
