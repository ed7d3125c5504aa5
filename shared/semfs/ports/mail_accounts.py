"""Mail accounts (``domain/mail_accounts.py``): where they are kept, where their secrets are kept, and a
connection to a mailbox."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Protocol

from semfs.domain.mail_accounts import AfterAction, FolderCursor, MailAccount


class MailAccountRepository(Protocol):
    """A tenant's mail accounts and each folder's cursor."""

    def save(self, tenant_id: str, account: MailAccount) -> None:
        """Store ``account`` under its name, replacing the tenant's account of that name."""
        ...

    def account(self, tenant_id: str, name: str) -> MailAccount | None: ...

    def accounts(self, tenant_id: str) -> list[MailAccount]:
        """The tenant's accounts, by name."""
        ...

    def all_accounts(self) -> Iterator[tuple[str, MailAccount]]:
        """Every tenant's accounts (the local poller reads them all; in AWS a schedule names each one)."""
        ...

    def delete(self, tenant_id: str, name: str) -> bool:
        """Remove the account and its cursors; whether there was one."""
        ...

    def cursor(self, tenant_id: str, name: str, folder: str) -> FolderCursor | None: ...

    def save_cursor(self, tenant_id: str, name: str, cursor: FolderCursor) -> None: ...

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's accounts and cursors; how many went. Idempotent."""
        ...


class SecretStore(Protocol):
    """Secrets (a mailbox's password or OAuth refresh token), encrypted at rest, never logged. A reference is
    what is stored beside the account; only this store turns it back into the secret."""

    def put(self, tenant_id: str, name: str, secret: str) -> str:
        """Store (or replace) the secret called ``name``; the reference to keep."""
        ...

    def get(self, ref: str) -> str:
        """The secret behind ``ref`` (``NotFound`` when it is gone)."""
        ...

    def delete(self, ref: str) -> None:
        """Remove it; idempotent."""
        ...

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase every secret of the tenant; how many went."""
        ...


class Mailbox(Protocol):
    """One open connection to a mailbox, folder by folder, by UID."""

    def select(self, folder: str) -> int:
        """Open ``folder``; its UIDVALIDITY."""
        ...

    def uids_after(self, uid: int) -> list[int]:
        """The UIDs above ``uid`` in the open folder, ascending."""
        ...

    def last_uids(self, count: int) -> list[int]:
        """The newest ``count`` UIDs of the open folder, ascending (a rule's preview)."""
        ...

    def fetch(self, uid: int) -> bytes | None:
        """The message's bytes, unchanged and without marking it read; None when it is gone."""
        ...

    def after(self, uid: int, action: AfterAction, move_to: str | None) -> None:
        """Do what the account does to a processed message."""
        ...


# opens a connection for an account with its secret (the third argument stores a secret the provider rotated,
# an OAuth refresh token); leaving the context closes it
MailboxOpener = Callable[[MailAccount, str, Callable[[str], None]], AbstractContextManager[Mailbox]]
