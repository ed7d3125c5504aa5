"""The tag vocabulary as the pipeline uses it: the tags an enricher is shown, new tags mapped onto existing
ones by stem, the uses each file records, and merge aliases resolved when a search filters by a tag."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.domain.tags import stem_key

if TYPE_CHECKING:
    from semfs.ports import Container


def aliases(c: Container, tenant: str) -> dict[str, str]:
    return c.tags.aliases(tenant)


def resolve(c: Container, tenant: str, tags: list[str]) -> list[str]:
    """Tags as stored now: a merged-away name resolves to the tag it was merged into."""
    known = aliases(c, tenant) if tags else {}
    return list(dict.fromkeys(known.get(t, t) for t in tags))


def named(c: Container, tenant: str, name: str | None) -> str | None:
    """A tag as stored, from its label or slug (``"Needs Review"`` → ``needs-review``), a merged-away
    name resolving to the tag it was merged into: what search's ``--tag`` already did, and listings not."""
    from semfs.domain.tags import slugify

    if not name or not name.strip():
        return None
    return resolve(c, tenant, [slugify(name) or name.strip()])[0]


HINT_TAGS = 50  # the enricher is shown the most used tags


def known_tags(c: Container, tenant: str, limit: int = HINT_TAGS) -> list[str]:
    """The tenant's most used tags (a bounded read of the vocabulary, never a scan of its files)."""
    return c.tags.top(tenant, limit)


def remember(c: Container, tenant: str, file_id: str, tags: list[str]) -> None:
    """Count a just-enriched file's tags in the vocabulary (once per file), so later files see them."""
    c.tags.record_uses(tenant, file_id, tags)


def prefer_existing(c: Container, tenant: str, tags: list[str]) -> list[str]:
    """New tags mapped onto the vocabulary: a merged-away name → its target, and a tag sharing its stem
    with an existing one (``invoices`` when ``invoice`` exists) → the existing tag most used. Looked up by the
    file's own stems: the whole vocabulary (its 2,000 most used tags, read and stemmed for every file) was a
    quarter of enrichment's time beside the model (issue 47.11)."""
    if not tags:
        return tags
    renamed = aliases(c, tenant)
    named = [renamed.get(t, t) for t in tags]
    existing = c.tags.preferred(tenant, sorted({stem_key(t) for t in named}))
    return list(dict.fromkeys(existing.get(stem_key(t), t) for t in named))
