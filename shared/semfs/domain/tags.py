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
