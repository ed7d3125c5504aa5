"""Saved views: a tenant's named listings (the Documents view's filters and sort), seen by their maker and
whom they share them with (everyone in the tenant unless said otherwise). Only the listing's own parameters are
kept, each checked as the listing checks it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.domain.access import TENANT, Principal, can_read, user_token
from semfs.domain.errors import InvalidRequest, NotFound
from semfs.domain.models import VIEWS_MAX, SavedView
from semfs.domain.text import normalise

if TYPE_CHECKING:
    from semfs.ports import Container

# the Documents listing's parameters, as its address names them
VIEW_PARAMS = frozenset({"tag", "source", "type", "thread", "contact", "since", "until", "sort"})
SORTS = frozenset({"newest", "oldest", "name", "size"})


def visible_views(c: Container, tenant_id: str, principal: Principal | None = None) -> list[SavedView]:
    """The tenant's views ``principal`` sees (``None``: all): theirs, and those shared with them."""
    return [v for v in c.views.views(tenant_id) if _sees(v, principal)]


def _sees(view: SavedView, principal: Principal | None) -> bool:
    if principal is None or principal.is_admin:
        return True
    return (view.owner is not None and view.owner == principal.user) or can_read(view.shared_with, principal.tokens())


def save_view(
    c: Container,
    tenant_id: str,
    name: str,
    params: dict[str, str],
    by: str | None = None,
    principal: Principal | None = None,
    shared_with: tuple[str, ...] = (TENANT,),
) -> SavedView:
    """Keep ``params`` under ``name`` (replacing the tenant's view of that name), seen by ``shared_with``
    and its maker. ``InvalidRequest`` for an empty or long name, a parameter the listing has not, a sort it
    does not know, one view too many, or a name another user's view has (only its maker or an admin replaces
    a view)."""
    label = _label(name)
    if not label:
        raise InvalidRequest("a view needs a name with a letter or digit")
    unknown = sorted(set(params) - VIEW_PARAMS)
    if unknown:
        raise InvalidRequest(f"a view keeps only {', '.join(sorted(VIEW_PARAMS))}; not {', '.join(unknown)}")
    if params.get("sort", "newest") not in SORTS:
        raise InvalidRequest(f"sort must be one of {', '.join(sorted(SORTS))}")
    kept = {k: " ".join(normalise(v).split())[:200] for k, v in params.items() if v and v.strip()}
    stored = {v.name: v for v in c.views.views(tenant_id)}
    if label not in stored and len(stored) >= VIEWS_MAX:
        raise InvalidRequest(f"a tenant keeps at most {VIEWS_MAX} views: delete one first")
    if label in stored and not _may_change(stored[label], principal):
        raise InvalidRequest("a view of that name is someone else's: choose another name")
    owner = principal.user if principal is not None else None
    readers = [*shared_with] or [user_token(owner) if owner else TENANT]  # private: its maker's alone
    view = SavedView(name=label, params=kept, by=by, owner=owner, shared_with=readers)
    c.views.save(tenant_id, view)
    return view


def _may_change(view: SavedView, principal: Principal | None) -> bool:
    return principal is None or principal.is_admin or view.owner is None or view.owner == principal.user


def delete_view(c: Container, tenant_id: str, name: str, principal: Principal | None = None) -> None:
    """Remove a view its maker (or an admin) may change; one the caller cannot see is "no saved view"."""
    found = next((v for v in c.views.views(tenant_id) if v.name == _label(name)), None)
    if found is None or not _sees(found, principal):
        raise NotFound("no saved view of that name")
    if not _may_change(found, principal):
        raise InvalidRequest("only the view's maker or an admin may delete it")
    c.views.delete(tenant_id, found.name)


def _label(name: str) -> str:
    """A view's name as kept: normalised (NFKC, no control characters, one space between words), a "/" (NFKC
    makes one of a fullwidth slash) as "-", at most 80 characters."""
    return " ".join(normalise(name).replace("/", "-").split())[:80].strip()
