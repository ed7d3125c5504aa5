"""Who is in a tenant: the caller itself, its users and groups (names for everyone, to share with; roles and
mail addresses for admins), and an admin's changes to them."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.params import Path

from semfs.api.models import GroupIn, PeopleOut, UserIn
from semfs.api.request import admin_only, container, current_principal, current_tenant, new_router, ok
from semfs.domain.access import NAME_PATTERN
from semfs.pipeline import principals

router = new_router()
Name = Annotated[
    str, Path(min_length=1, max_length=63, pattern=f"^{NAME_PATTERN}$", description="A user or group name")
]


def _people() -> PeopleOut:
    c, tenant, me = container(), current_tenant(), current_principal()
    users, groups = c.principals.users(tenant), c.principals.groups(tenant)
    full = me.is_admin
    return PeopleOut.model_validate(
        {
            "me": {"user": me.user, "role": me.role, "groups": list(me.groups), "admin": me.is_admin},
            "users": [
                {"name": u.name, "role": u.role, "groups": u.groups, "addresses": u.addresses if full else []}
                for u in users
            ],
            "groups": [
                {
                    "name": g.name,
                    "members": [u.name for u in users if g.name in u.groups],
                    "addresses": g.addresses if full else [],
                }
                for g in groups
            ],
        }
    )


@router.get("/people", summary="You, and the tenant's users and groups", responses=ok(PeopleOut))
def people() -> PeopleOut:
    """Who you are here (your role and groups), and the names of the users and groups you can share with;
    an admin also sees each one's role and mail addresses."""
    return _people()


@router.put("/people/users/<name>", summary="Add or change a user (admins)", responses=ok(PeopleOut))
def put_user(name: Name, request: UserIn) -> PeopleOut:
    """The user's role, groups (made if new) and mail addresses become these; the first user is an admin."""
    admin_only()
    principals.add_user(
        container(), current_tenant(), name, groups=request.groups, role=request.role, addresses=request.addresses
    )
    return _people()


@router.delete("/people/users/<name>", summary="Remove a user (admins)", responses=ok(PeopleOut))
def delete_user(name: Name) -> PeopleOut:
    """Their files stay, read by whom they were shared with; the tenant's last admin stays (409)."""
    admin_only()
    if not principals.remove_user(container(), current_tenant(), name):
        raise NotFoundError("no such user")
    return _people()


@router.put("/people/groups/<name>", summary="Add or change a group (admins)", responses=ok(PeopleOut))
def put_group(name: Name, request: GroupIn) -> PeopleOut:
    """The group's mail addresses (a list or shared mailbox: its mail is the group's) and, when given, its
    members become these."""
    admin_only()
    c, tenant = container(), current_tenant()
    group = principals.add_group(c, tenant, name, addresses=request.addresses)
    if request.members is not None:
        now = {u.name for u in c.principals.users(tenant) if group.name in u.groups}
        principals.set_membership(
            c, tenant, group.name, add=sorted(set(request.members) - now), remove=sorted(now - set(request.members))
        )
    return _people()


@router.delete("/people/groups/<name>", summary="Remove a group (admins)", responses=ok(PeopleOut))
def delete_group(name: Name) -> PeopleOut:
    admin_only()
    if not principals.remove_group(container(), current_tenant(), name):
        raise NotFoundError("no such group")
    return _people()
