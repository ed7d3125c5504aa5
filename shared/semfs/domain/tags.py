"""Tag slugs: the one normal form every tag is stored and matched in."""

from __future__ import annotations

import re
import unicodedata

TAG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_TAG_LEN = 48


def slugify(text: str) -> str:
    """``"Q3 Financials"`` → ``q3-financials``; ``"Acme Corp."`` → ``acme-corp``. Empty if nothing is left."""
    text = unicodedata.normalize("NFKD", text)
    text = text.encode("ascii", "ignore").decode("ascii").lower()
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    return text[:MAX_TAG_LEN].rstrip("-")


def is_valid_tag(tag: str) -> bool:
    return bool(TAG_RE.match(tag)) and len(tag) <= MAX_TAG_LEN


def merge_tags(*groups: list[str] | tuple[str, ...]) -> list[str]:
    """Slugify and merge, keeping first-seen order and dropping empties and duplicates."""
    out: dict[str, None] = {}
    for group in groups:
        for tag in group:
            slug = slugify(tag)
            if slug:
                out.setdefault(slug, None)
    return list(out)


_NOT_A_TAG = re.compile(r"://|www\.|@|[<>{}\[\]`]|\b(?:javascript|data|mailto):", re.IGNORECASE)
MAX_LABEL_LEN = 60


def manual_tag(label: str) -> tuple[str, str]:
    """A tag a person typed → ``(slug, label)``: ``"Needs Review"`` → ``("needs-review", "Needs Review")``.

    Raises ``ValueError`` with a sentence to show for what is no tag: nothing left after slugging, longer
    than a tag may be (never silently cut), or a URL, address or markup."""
    shown = " ".join(unicodedata.normalize("NFKC", label).split())
    if not shown:
        raise ValueError("a tag cannot be empty")
    if _NOT_A_TAG.search(shown):
        raise ValueError(f"{shown[:40]!r} is not a tag: no links, addresses or markup")
    if len(shown) > MAX_LABEL_LEN:
        raise ValueError(f"a tag is at most {MAX_LABEL_LEN} characters ({len(shown)} given)")
    text = unicodedata.normalize("NFKD", shown).encode("ascii", "ignore").decode("ascii").lower()
    slug = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    if not slug:
        raise ValueError(f"{shown!r} has no letters or digits to make a tag of")
    if len(slug) > MAX_TAG_LEN:
        raise ValueError(f"a tag is at most {MAX_TAG_LEN} characters as a slug ({slug[:20]}…)")
    return slug, shown
