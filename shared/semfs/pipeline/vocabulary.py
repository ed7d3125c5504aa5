"""The tag vocabulary as the pipeline uses it: the tags an enricher is shown, new tags mapped onto existing
ones by stem, the uses each file records, and merge aliases resolved when a search filters by a tag."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from semfs.ports import Container


@cache
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem_key(tag: str) -> str:
    """Tags are compared per file against the whole vocabulary: stems are computed once per tag."""
    return "-".join(_stemmer().stemWords(tag.split("-")))


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

STEM_MAP_TAGS = 2000  # new tags are mapped onto this many existing ones by stem


def known_tags(c: Container, tenant: str, limit: int = HINT_TAGS) -> list[str]:
    """The tenant's most used tags (a bounded read of the vocabulary, never a scan of its files)."""
    return c.tags.top(tenant, limit)


def remember(c: Container, tenant: str, file_id: str, tags: list[str]) -> None:
    """Count a just-enriched file's tags in the vocabulary (once per file), so later files see them."""
    c.tags.record_uses(tenant, file_id, tags)


def prefer_existing(c: Container, tenant: str, tags: list[str]) -> list[str]:
    """New tags mapped onto the vocabulary: a merged-away name → its target, and a tag sharing its stem
    with an existing one (``invoices`` when ``invoice`` exists) → the existing tag."""
    known = known_tags(c, tenant, STEM_MAP_TAGS)
    if not known:
        return tags
    by_stem: dict[str, str] = {}
    for tag in known:
        by_stem.setdefault(stem_key(tag), tag)
    renamed = aliases(c, tenant)
    out = [by_stem.get(stem_key(renamed.get(t, t)), renamed.get(t, t)) for t in tags]
    return list(dict.fromkeys(out))
