from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Thread:
    """A mail conversation: its subject, everyone seen on it and its distinct messages."""

    tenant_id: str
    thread_id: str
    subject: str
    participants: tuple[str, ...] = ()
    messages: int = 0


@dataclass(frozen=True)
class Person:
    """A contact as one message shows it (the address is the identity)."""

    contact_id: str
    email: str
    name: str = ""
    organisation: str | None = None


@dataclass(frozen=True)
class Contact:
    """A person seen in mail (or named on an upload), with how many distinct messages carry them."""

    tenant_id: str
    contact_id: str
    email: str
    name: str = ""
    organisation: str | None = None
    messages: int = 0
    extra: dict[str, str] = field(default_factory=dict)


class MailRepository(Protocol):
    """Threads, the messages in them and contacts, as entities with conditional writes (DynamoDB items
    in AWS, SQLite rows locally). Every write is idempotent per message id: a redelivered message
    changes nothing, and two writers handling two messages of one thread at once both land."""

    def thread_of_message(self, tenant_id: str, message_id: str) -> str | None:
        """The thread a known message belongs to, or ``None``."""
        ...

    def thread_of_subject(self, tenant_id: str, subject_key: str) -> str | None:
        """The thread a normalised subject among the same people was last seen on, or ``None``."""
        ...

    def add_message(
        self,
        tenant_id: str,
        thread_id: str,
        message_id: str,
        subject: str,
        subject_key: str | None,
        participants: Sequence[str],
    ) -> Thread:
        """Create the thread if absent (the first subject wins), add the message once and the
        participants as a set, and map the message and ``subject_key`` to the thread. Idempotent."""
        ...

    def add_contact_message(self, tenant_id: str, person: Person, message_id: str) -> Contact:
        """Upsert the contact (a non-empty display name replaces the stored one) and count
        ``message_id`` once for it, however often it is delivered. Returns the contact afterwards."""
        ...

    def upsert_contact(self, tenant_id: str, person: Person) -> Contact:
        """Record a contact named on an upload (``--contact``) without counting a message. Idempotent."""
        ...

    def forget_tenant(self, tenant_id: str) -> int:
        """Erase the tenant's threads, messages and contacts; how many rows or items went. Idempotent."""
        ...

    def threads(self, tenant_id: str) -> list[Thread]:
        """Every thread of the tenant (to resolve a subject typed by a person to its thread)."""
        ...

    def thread(self, tenant_id: str, thread_id: str) -> Thread | None:
        """One thread, or ``None`` (also for another tenant's)."""
        ...

    def contact(self, tenant_id: str, contact_id: str) -> Contact | None:
        """One contact, or ``None`` (also for another tenant's): one keyed read, for the names of a
        file's contacts."""
        ...

    def contacts(self, tenant_id: str) -> list[Contact]:
        """Every contact of the tenant, by contact id (an indexed look-up, never a listing of blobs)."""
        ...
