"""Mail accounts a tenant reads its mail from (an IMAP mailbox), their rules, and how far each folder has been read.

An account names its server, the folders to read, what to do to a message once it is in (mark it read, flag
it, move it, or nothing) and ordered **rules**: the first rule whose conditions all hold decides what a message
becomes (its attachments, its body, both, the whole message as one ``.eml`` file, or nothing) and which tags
and readers its files get. A message no rule takes is ingested as mail pushed to semfs is (attachments and
body). The password or token is never part of the account: it sits in the secret store (``ports/mail_accounts``)
under ``secret_ref``, encrypted at rest.

A folder's **cursor** is the pair IMAP promises to keep stable, ``UIDVALIDITY`` and the last ``UID`` read: a
poll asks only for UIDs above it, so nothing is read twice; a changed ``UIDVALIDITY`` (the server renumbered
the folder) starts the folder again, and Message-ID keeps what was already read from being ingested twice.
``pending`` is the UID being ingested when a poll stopped: the next poll finishes it rather than skipping it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator, model_validator

from semfs.domain.models import Frozen, utcnow

Security = Literal["tls", "starttls", "none"]
Auth = Literal["password", "xoauth2"]
AfterAction = Literal["none", "seen", "flag", "move"]
# what a rule makes of a message: "mail" is what pushed mail becomes (attachments, and the body when it says
# something); "message" keeps the whole message as one .eml file; "skip" ingests nothing
Take = Literal["mail", "attachments", "body", "message", "skip"]
TAKES: tuple[Take, ...] = ("mail", "attachments", "body", "message", "skip")

ACCOUNT_NAME_PATTERN = r"[a-z0-9][a-z0-9._-]{0,63}"
MAX_RULES = 50
CONDITIONS = ("sender", "recipient", "subject", "body", "attachment_name", "attachment_type", "min_bytes", "max_bytes")
MAX_FOLDERS = 20


class MailRule(Frozen):
    """One rule: every condition set must hold (text conditions are case-insensitive substrings; the
    attachment name is a shell pattern such as ``*.pdf``; the type a MIME type or its start, ``image/``)."""

    name: str = Field(min_length=1, max_length=80)
    sender: str | None = Field(default=None, max_length=200)
    recipient: str | None = Field(default=None, max_length=200)
    subject: str | None = Field(default=None, max_length=200)
    body: str | None = Field(default=None, max_length=200)
    attachment_name: str | None = Field(default=None, max_length=200)
    attachment_type: str | None = Field(default=None, max_length=100)
    min_bytes: int | None = Field(default=None, ge=0)
    max_bytes: int | None = Field(default=None, ge=0)
    take: Take = "mail"
    tags: list[str] = Field(default_factory=list, max_length=20)
    share_with: list[str] = Field(default_factory=list, max_length=20)  # users or groups, as `semfs share` names them

    def conditions(self) -> dict[str, str | int]:
        """The conditions this rule sets, by name (for showing it)."""
        return {n: v for n in CONDITIONS if (v := getattr(self, n)) is not None}


class MailAccount(Frozen):
    """An IMAP mailbox of the tenant's (see the module docstring)."""

    name: str = Field(pattern=f"^{ACCOUNT_NAME_PATTERN}$")
    host: str = Field(min_length=1, max_length=253)
    port: int = Field(default=993, ge=1, le=65535)
    security: Security = "tls"
    username: str = Field(min_length=1, max_length=320)
    auth: Auth = "password"
    secret_ref: str = ""  # where the password or token is in the secret store; never the secret itself
    ca_file: str | None = None  # a CA bundle to trust (a server with its own certificate); else the system's
    folders: list[str] = Field(default_factory=lambda: ["INBOX"], min_length=1, max_length=MAX_FOLDERS)
    after: AfterAction = "none"
    move_to: str | None = Field(default=None, max_length=200)
    # the mailbox's own address: its mail is read as delivered to it, so the user it belongs to reads it
    address: str | None = Field(default=None, max_length=320)
    rules: list[MailRule] = Field(default_factory=list, max_length=MAX_RULES)
    enabled: bool = True
    created_at: datetime = Field(default_factory=utcnow)
    last_poll_at: datetime | None = None
    last_error: str | None = None

    @field_validator("folders")
    @classmethod
    def _folders_named(cls, folders: list[str]) -> list[str]:
        if any(not f.strip() or len(f) > 200 or any(ch in f for ch in "\r\n\x00") for f in folders):
            raise ValueError("a folder name is 1 to 200 characters on one line")
        return list(dict.fromkeys(folders))

    @model_validator(mode="after")
    def _move_needs_a_folder(self) -> MailAccount:
        if self.after == "move" and not self.move_to:
            raise ValueError("after=move needs move_to: the folder processed messages go to")
        if self.move_to and self.move_to in self.folders:
            raise ValueError("move_to is one of the folders read: messages would be read again")
        return self


class FolderCursor(Frozen):
    """How far one folder has been read (see the module docstring)."""

    folder: str
    uidvalidity: int
    last_uid: int = 0
    pending: int | None = None
