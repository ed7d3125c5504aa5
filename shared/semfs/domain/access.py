"""Who may see what inside a tenant: principals, a file's access list, and the reader tokens every read
filters on.

A file's access is an **owner** and a list of **readers**, each a token: ``tenant`` (everyone of the tenant),
``u:{user}`` or ``g:{group}``. A caller is a ``Principal`` (a user with groups, or an agent acting for one);
``Principal.tokens()`` is what it reads as: ``tenant``, its own ``u:``, its groups' ``g:``. A file is visible
when the two share a token, so the filter is one membership clause (``scope.AnyOf("reader", tokens)``), which
every backend applies **inside** its query: an SQL ``json_each`` join, a tantivy term set, an OpenSearch
``terms`` filter inside ``knn``, a DynamoDB ``contains``. An admin reads as ``None``: no filter (and each such
read of a file not shared with them is logged as an audit line).

Files written before access lists existed have none and read as ``tenant`` (``readers_of``): nothing is
migrated, nothing stored changes meaning. A tenant with no users has one implicit admin (the tenant itself):
a single-person setup keeps working exactly as before, its files shared with the ``tenant``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from semfs.domain.errors import InvalidRequest

TENANT = "tenant"
# the readers of a file shared with nobody but the tenant's admins (mail delivered to no known user): no
# caller reads as it, and an admin reads everything
ADMINS = "admins"
Role = Literal["admin", "member", "agent"]
ROLES: tuple[Role, ...] = ("admin", "member", "agent")

# a name, or a mail address (a signed-in Cognito user the tenant does not list is known by their email)
NAME_PATTERN = r"[a-z0-9][a-z0-9._@+-]{0,127}"
NAME_RULE = "1 to 128 lowercase letters, digits, '.', '-', '_', '@' or '+', starting with a letter or a digit"
_NAME = re.compile(NAME_PATTERN)
MAX_READERS = 64  # tokens on one file: a list longer than this is a group's job


def checked_name(value: object, what: str = "user") -> str:
    """A user or group name (``InvalidRequest`` naming the rule otherwise). Case folded: ``Alice`` is ``alice``."""
    text = value.strip().lower() if isinstance(value, str) else ""
    if not _NAME.fullmatch(text):
        shown = repr(value)[:80] if isinstance(value, str) else type(value).__name__
        raise InvalidRequest(f"{shown} is not a {what} name: a {what} name is {NAME_RULE}")
    return text


def user_token(name: str) -> str:
    return f"u:{name}"


def group_token(name: str) -> str:
    return f"g:{name}"


def readers_of(readers: Sequence[str] | None) -> tuple[str, ...]:
    """A file's readers as stored; none at all (a file from before access lists) is the whole tenant."""
    return tuple(readers) if readers else (TENANT,)


def can_read(file_readers: Sequence[str] | None, tokens: Sequence[str] | None) -> bool:
    """Whether a caller reading as ``tokens`` (``None``: an admin, no filter) sees a file with these readers."""
    return tokens is None or not set(readers_of(file_readers)).isdisjoint(tokens)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: a user of the tenant (with their groups and role), or an agent acting for one (it
    carries that user's name and groups, never more). ``user=None`` is the tenant's implicit admin: a
    tenant with no users, or a local command run without ``--user`` before any user exists."""

    tenant_id: str
    user: str | None = None
    groups: tuple[str, ...] = ()
    role: Role = "admin"
    agent: str | None = None  # the agent's name when an agent acts for ``user``

    @property
    def is_admin(self) -> bool:
        return self.role == "admin" or (self.role == "agent" and self.user is None)

    def tokens(self) -> tuple[str, ...] | None:
        """What this caller reads as; ``None`` for an admin (every file of the tenant)."""
        if self.is_admin:
            return None
        if self.user is None:  # an agent for nobody sees only what the whole tenant sees
            return (TENANT,)
        return (TENANT, user_token(self.user), *(group_token(g) for g in self.groups))

    def own_tokens(self) -> tuple[str, ...]:
        """The tokens naming this caller (not ``tenant``): whether a file was shared with them in person."""
        if self.user is None:
            return ()
        return (user_token(self.user), *(group_token(g) for g in self.groups))

    @property
    def label(self) -> str:
        who = self.user or "admin"
        return f"{self.agent} for {who}" if self.agent else who


@dataclass(frozen=True)
class Access:
    """A new file's owner and readers (``None`` readers: the whole tenant)."""

    owner: str | None = None
    readers: tuple[str, ...] = (TENANT,)

    def as_fields(self) -> dict[str, object]:
        return {"owner": self.owner, "readers": list(self.readers)}


SHARE_HELP = "private | tenant | group:NAME | user:NAME (repeatable)"


def parse_share(specs: Iterable[str]) -> tuple[str, ...]:
    """``--share-with`` values as reader tokens: ``tenant``, ``group:G``, ``user:U``; ``private`` adds none.
    ``InvalidRequest`` for anything else, naming the forms it takes."""
    out: list[str] = []
    for raw in specs:
        spec = raw.strip()
        kind, _, name = spec.partition(":")
        if spec in ("private", ""):
            continue
        if spec == TENANT:
            out.append(TENANT)
        elif kind == "group" and name:
            out.append(group_token(checked_name(name, "group")))
        elif kind == "user" and name:
            out.append(user_token(checked_name(name)))
        else:
            raise InvalidRequest(f"{raw!r}: share with {SHARE_HELP}")
    return tuple(dict.fromkeys(out))


def describe(token: str) -> str:
    """A reader token as a person reads it."""
    if token == TENANT:
        return "everyone in the tenant"
    if token == ADMINS:
        return "the tenant's admins"
    kind, _, name = token.partition(":")
    return f"group {name}" if kind == "g" else f"user {name}" if kind == "u" else token


def access_for(owner: str | None, shared: Sequence[str] = (), default_share: str = "private") -> Access:
    """A new file's access: its owner and what they shared it with. No owner (the tenant's implicit admin,
    a tenant without users): the whole tenant, as before access lists. ``default_share`` is the tenant-wide
    setting for an owner who chose nothing (``private`` or ``tenant``)."""
    if owner is None:
        return Access(None, tuple(dict.fromkeys([*shared] or [TENANT])))
    chosen = list(shared) if shared else ([TENANT] if default_share == TENANT else [])
    return Access(owner, _capped([user_token(owner), *chosen]))


def _capped(tokens: Sequence[str]) -> tuple[str, ...]:
    unique = tuple(dict.fromkeys(tokens))
    if len(unique) > MAX_READERS:
        raise InvalidRequest(f"a file is shared with at most {MAX_READERS} users and groups: use a group")
    return unique


def changed_readers(
    current: Sequence[str] | None, add: Sequence[str], revoke: Sequence[str], owner: str | None
) -> tuple[str, ...]:
    """``current`` with ``add`` shared and ``revoke`` taken away; the owner is never revoked."""
    keep = [t for t in readers_of(current) if t not in set(revoke) or (owner and t == user_token(owner))]
    return _capped([*keep, *add])


def claimed_groups(value: object) -> tuple[str, ...]:
    """``cognito:groups`` as API Gateway hands it on: a list, or (HTTP API JWT claims are strings) "[a b]"."""
    if isinstance(value, str):
        value = value.strip("[]").replace(",", " ").split()
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(g for g in value if isinstance(g, str))


@dataclass(frozen=True)
class Recipients:
    """Who a message was delivered to, as the tenant's users and groups (``principals.for_addresses``)."""

    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()

    def readers(self) -> tuple[str, ...]:
        return (*(user_token(u) for u in self.users), *(group_token(g) for g in self.groups))
