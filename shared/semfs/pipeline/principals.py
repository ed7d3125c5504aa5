"""A tenant's users and groups, and who a caller is (``domain/access.py``): the principal a CLI command, an
API key, a JWT or an agent acts as; the users and groups a message's addresses belong to; the access a new file
gets."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from semfs.domain.access import (
    ADMINS,
    TENANT,
    Access,
    Principal,
    Recipients,
    Role,
    access_for,
    checked_name,
    readers_of,
    user_token,
)
from semfs.domain.errors import Conflict, InvalidRequest, NotFound
from semfs.domain.models import FileRecord, Group, User

if TYPE_CHECKING:
    from semfs.ports import Container


def _address(value: str) -> str:
    text = value.strip().lower()
    if "@" not in text or any(ch.isspace() for ch in text) or len(text) > 254:
        raise InvalidRequest(f"{value!r} is not a mail address")
    return text


def find_user(c: Container, tenant_id: str, name: str) -> User | None:
    return next((u for u in c.principals.users(tenant_id) if u.name == name), None)


def find_group(c: Container, tenant_id: str, name: str) -> Group | None:
    return next((g for g in c.principals.groups(tenant_id) if g.name == name), None)


def add_user(
    c: Container,
    tenant_id: str,
    name: str,
    *,
    groups: Sequence[str] = (),
    role: Role = "member",
    addresses: Sequence[str] = (),
) -> User:
    """Add a user (or change one: its role, groups and addresses become these). The tenant's first user is
    an admin whatever ``role`` says: someone must be able to manage the rest. A group named here and not
    yet there is made."""
    name = checked_name(name)
    wanted = [checked_name(g, "group") for g in groups]
    known = {g.name for g in c.principals.groups(tenant_id)}
    for group in wanted:
        if group not in known:
            c.principals.save_group(tenant_id, Group(name=group))
    users = c.principals.users(tenant_id)
    before = next((u for u in users if u.name == name), None)
    first = not users or (len(users) == 1 and before is not None)
    user = User(
        name=name,
        role="admin" if first else role,
        groups=list(dict.fromkeys(wanted)),
        addresses=list(dict.fromkeys(_address(a) for a in addresses)),
        **({"created_at": before.created_at} if before else {}),
    )
    c.principals.save_user(tenant_id, user)
    return user


def remove_user(c: Container, tenant_id: str, name: str) -> bool:
    """Remove a user; the tenant's last admin stays (``Conflict``): nobody could manage it after."""
    user = find_user(c, tenant_id, checked_name(name))
    if user is None:
        return False
    admins = [u for u in c.principals.users(tenant_id) if u.role == "admin"]
    if user.role == "admin" and len(admins) == 1:
        raise Conflict(f"{name} is the tenant's last admin: make another user an admin first")
    return c.principals.delete_user(tenant_id, user.name)


def add_group(c: Container, tenant_id: str, name: str, *, addresses: Sequence[str] = ()) -> Group:
    """Add a group (or set the addresses of one): mail to one of ``addresses`` is the group's to read."""
    group = Group(name=checked_name(name, "group"), addresses=list(dict.fromkeys(_address(a) for a in addresses)))
    before = find_group(c, tenant_id, group.name)
    if before is not None:
        group = group.model_copy(update={"created_at": before.created_at})
    c.principals.save_group(tenant_id, group)
    return group


def set_membership(
    c: Container, tenant_id: str, group: str, *, add: Sequence[str] = (), remove: Sequence[str] = ()
) -> Group:
    """Put users in a group or take them out of it (each must exist); the group is made if it is new."""
    name = checked_name(group, "group")
    found = find_group(c, tenant_id, name) or add_group(c, tenant_id, name)
    for who, joining in [*((u, True) for u in add), *((u, False) for u in remove)]:
        user = find_user(c, tenant_id, checked_name(who))
        if user is None:
            raise NotFound(f"no user {who!r} in this tenant")
        groups = [g for g in user.groups if g != name] + ([name] if joining else [])
        c.principals.save_user(tenant_id, user.model_copy(update={"groups": groups}))
    return found


def remove_group(c: Container, tenant_id: str, name: str) -> bool:
    """Remove a group and take every user out of it (files shared with it stay shared with nobody by it)."""
    name = checked_name(name, "group")
    for user in c.principals.users(tenant_id):
        if name in user.groups:
            c.principals.save_user(tenant_id, user.model_copy(update={"groups": [g for g in user.groups if g != name]}))
    return c.principals.delete_group(tenant_id, name)


def principal_for(c: Container, tenant_id: str, user: str | None = None, *, agent: str | None = None) -> Principal:
    """Who a caller acts as. A named user must exist (``NotFound``); none named: the tenant's first admin,
    or (a tenant with no users) the tenant's implicit admin, so a one-person setup changes nothing. An agent
    acts for the user and sees what they see, never more."""
    users = c.principals.users(tenant_id)
    if user is None:
        found = next((u for u in users if u.role == "admin"), None)
    else:
        name = checked_name(user)
        found = next((u for u in users if u.name == name), None)
        if found is None:
            raise NotFound(f"no user {user!r} (semfs users add {name})")
    if found is None:
        return Principal(tenant_id, role="agent" if agent else "admin", agent=agent)
    return Principal(
        tenant_id,
        user=found.name,
        groups=tuple(found.groups),
        role="agent" if agent else found.role,
        agent=agent,
    )


def principal_from_claims(
    c: Container, tenant_id: str, user: str | None, groups: Iterable[str], email: str | None = None
) -> Principal:
    """A signed-in Cognito user: the JWT names them (``email``; ``cognito:username`` is an opaque id where the
    pool signs in by email) and their groups (``cognito:groups``); membership in ``SEMFS_ADMIN_GROUP`` makes
    an admin (as does a tenant that lists no users yet: one room, as before). A user the tenant lists (by
    name, or with this email among its addresses) is that user, with its listed groups as well; another is
    known by their email."""
    claimed = [g.strip().lower() for g in groups if isinstance(g, str) and g.strip()]
    users = c.principals.users(tenant_id)  # read once: this runs on every signed-in request
    # a tenant that lists no users yet is one room, as before users existed: whoever signs in manages it
    admin = c.settings.admin_group.lower() in claimed or not users
    name, listed = _signed_in(users, user, email)
    if name is None:
        return Principal(tenant_id, role="admin" if admin else "member", groups=tuple(claimed))
    mine = [*claimed, *(listed.groups if listed else [])]
    role: Role = "admin" if admin or (listed is not None and listed.role == "admin") else "member"
    return Principal(tenant_id, user=name, groups=tuple(dict.fromkeys(mine)), role=role)


def _signed_in(users: Sequence[User], user: str | None, email: str | None) -> tuple[str | None, User | None]:
    """The name a signed-in caller goes by and the listed user it is: the one with the token's email among
    its addresses, else the one of its name; a caller the tenant does not list goes by email or user name."""
    address = email.strip().lower() if isinstance(email, str) and "@" in email else None
    listed = next((u for u in users if address and address in u.addresses), None)
    chosen = listed.name if listed else address or user
    if chosen is None:
        return None, None
    name = chosen.strip().lower()
    return name, listed or next((u for u in users if u.name == name), None)


def _is_name(value: str) -> bool:
    try:
        checked_name(value)
        return True
    except InvalidRequest:
        return False


def new_file_access(c: Container, principal: Principal | None, shared: Sequence[str] = ()) -> Access:
    """The access of a file a caller hands in: its owner (the caller) and what they shared it with, or the
    tenant's default (``SEMFS_DEFAULT_SHARE``)."""
    owner = principal.user if principal is not None else None
    return access_for(owner, shared, c.settings.default_share)


def recipients(
    c: Container, tenant_id: str, addresses: Iterable[str], users: Sequence[User] | None = None
) -> Recipients:
    """The tenant's users (``users``, when the caller has read them) and groups that ``addresses`` (a
    message's To, Cc, delivered Bcc) belong to."""
    wanted = {a.strip().lower() for a in addresses if a and "@" in a}
    listed = c.principals.users(tenant_id) if users is None else users
    named = [u.name for u in listed if wanted & set(u.addresses)]
    groups = [g.name for g in c.principals.groups(tenant_id) if wanted & set(g.addresses)]
    return Recipients(tuple(named), tuple(groups))


def artifact_access(c: Container, principal: Principal, sources: Sequence[FileRecord]) -> Access:
    """The access of a file an agent made for ``principal`` from ``sources``: its user, and of the rest only
    those who may read every source (what it says may quote any of them). No user: as a new file's."""
    base = new_file_access(c, principal)
    if principal.user is None or not sources:
        return base
    shared = set.intersection(*(set(readers_of(s.readers)) for s in sources))
    return Access(principal.user, tuple(dict.fromkeys([user_token(principal.user), *sorted(shared)])))


# the object metadata a presigned upload carries its access in (pinned by the POST's policy: S3 refuses a
# form that changes it), read back when the object's S3 event ingests it
OWNER_META, READERS_META = "semfs-owner", "semfs-readers"


def access_metadata(access: Access) -> dict[str, str]:
    return {OWNER_META: access.owner or "", READERS_META: " ".join(access.readers)}


def access_from_metadata(meta: dict[str, str]) -> Access | None:
    """The access an upload's metadata names; ``None`` for an object without it (put by other means than
    the API's form: the whole tenant's, as before access lists) or with a value that is no valid token."""
    readers = tuple(meta.get(READERS_META, "").split())
    owner = meta.get(OWNER_META) or None
    if not readers or not all(_is_token(t) for t in readers) or (owner is not None and not _is_name(owner)):
        return None
    return Access(owner, readers)


def _is_token(token: str) -> bool:
    kind, _, name = token.partition(":")
    return token in (TENANT, ADMINS) or (kind in ("u", "g") and _is_name(name))
