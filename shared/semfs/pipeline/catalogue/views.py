"""Saved views: a tenant's named listings (the Documents view's filters and sort), shared by everyone in the
tenant. Only the listing's own parameters are kept, each checked as the listing checks it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.domain.errors import InvalidRequest, NotFound
from semfs.domain.models import VIEWS_MAX, SavedView
from semfs.domain.text import normalise

if TYPE_CHECKING:
    from semfs.ports import Container

# the Documents listing's parameters, as its address names them
VIEW_PARAMS = frozenset({"tag", "source", "type", "thread", "contact", "since", "until", "sort"})
SORTS = frozenset({"newest", "oldest", "name", "size"})


def save_view(c: Container, tenant_id: str, name: str, params: dict[str, str], by: str | None = None) -> SavedView:
    """Keep ``params`` under ``name`` (replacing the tenant's view of that name). ``InvalidRequest`` for an
    empty or long name, a parameter the listing has not, a sort it does not know, or one view too many."""
    label = _label(name)
    if not label:
        raise InvalidRequest("a view needs a name with a letter or digit")
    unknown = sorted(set(params) - VIEW_PARAMS)
    if unknown:
        raise InvalidRequest(f"a view keeps only {', '.join(sorted(VIEW_PARAMS))}; not {', '.join(unknown)}")
    if params.get("sort", "newest") not in SORTS:
        raise InvalidRequest(f"sort must be one of {', '.join(sorted(SORTS))}")
    kept = {k: " ".join(normalise(v).split())[:200] for k, v in params.items() if v and v.strip()}
    existing = {v.name for v in c.views.views(tenant_id)}
    if label not in existing and len(existing) >= VIEWS_MAX:
        raise InvalidRequest(f"a tenant keeps at most {VIEWS_MAX} views: delete one first")
    view = SavedView(name=label, params=kept, by=by)
    c.views.save(tenant_id, view)
    return view


def delete_view(c: Container, tenant_id: str, name: str) -> None:
    if not c.views.delete(tenant_id, _label(name)):
        raise NotFound("no saved view of that name")


def _label(name: str) -> str:
    """A view's name as kept: normalised (NFKC, no control characters, one space between words), a "/" (NFKC
    makes one of a fullwidth slash) as "-", at most 80 characters."""
    return " ".join(normalise(name).replace("/", "-").split())[:80].strip()
