"""What a model may write onto a record: validated strictly, because its output is untrusted input.

A model that obeys instructions planted in a document will try to put links, addresses and markup in
the title, summary and tags, or answer in the wrong shape. So: types are checked, never coerced (a
string where a list belongs is refused, not split into letters; an object where text belongs is
refused, not stringified); titles and summaries may not contain URLs of any scheme, domains, e-mail
addresses or markup; a tag must be a slug of words the document itself uses outside links and
addresses. Anything else raises ``EnrichmentFailed`` and the extractive enricher takes over
(``OK_ENRICH_FALLBACK``).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from semfs.domain.errors import EnrichmentFailed
from semfs.domain.models import Enrichment
from semfs.domain.tags import is_generic, is_valid_tag, slugify

MAX_TITLE = 120
MAX_SUMMARY = 600
MAX_TAGS = 10

_SCHEME = re.compile(r"\b[a-z][a-z0-9+.\-]{1,15}:(//|[^\s]*[/?=])|\b(javascript|data|mailto|vbscript|file):", re.I)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")
_DOMAIN = re.compile(
    r"\b(www\.)?[a-z0-9-]+(\.[a-z0-9-]+)*\.(com|net|org|io|co|info|biz|example|test|xyz|ru|cn|top|app|dev|ai|me)\b",
    re.I,
)
_MARKUP = re.compile(r"<\s*/?\s*[a-z!?][^>]*>|<\s*[a-z]+[\s/]|&(lt|gt|#\d+|#x[0-9a-f]+);|\{\s*['\"]", re.I)
_WORD = re.compile(r"[a-z0-9]+")


def _text(value: Any, field: str, cap: int) -> str:
    if not isinstance(value, str):
        raise EnrichmentFailed(f"the model's {field} is not text")
    text = unicodedata.normalize("NFKC", value)
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C" or ch == "\n")
    text = " ".join(text.split())
    if not text:
        raise EnrichmentFailed(f"the model returned an empty {field}")
    if _SCHEME.search(text) or _EMAIL.search(text) or _DOMAIN.search(text) or _MARKUP.search(text):
        raise EnrichmentFailed(f"the model's {field} carries a link, an address or markup")
    return text[:cap].strip()


def strip_links(text: str) -> str:
    """``text`` without URLs, e-mail addresses and domains (what tags must never be made of)."""
    plain = re.sub(r"\S*(://|www\.)\S*", " ", text)
    plain = _EMAIL.sub(" ", _SCHEME.sub(" ", plain))
    return _DOMAIN.sub(" ", plain)


def has_link(text: str) -> bool:
    return bool(_SCHEME.search(text) or _EMAIL.search(text) or _DOMAIN.search(text))


def document_words(text: str) -> set[str]:
    """The words a document uses outside links, addresses and domains (where injected text hides)."""
    plain = strip_links(text)
    folded = unicodedata.normalize("NFKD", plain).encode("ascii", "ignore").decode("ascii").lower()
    return set(_WORD.findall(folded))


def validate_enrichment(raw: Any, document_text: str) -> Enrichment:
    """The model's answer as an ``Enrichment``, or ``EnrichmentFailed`` (see module docstring)."""
    if not isinstance(raw, dict) or set(raw) - {"title", "summary", "tags"} or {"title", "summary", "tags"} - set(raw):
        raise EnrichmentFailed("the model's answer does not match the schema")
    title = _text(raw["title"], "title", MAX_TITLE)
    summary = _text(raw["summary"], "summary", MAX_SUMMARY)
    if not isinstance(raw["tags"], list) or not all(isinstance(t, str) for t in raw["tags"]):
        raise EnrichmentFailed("the model's tags are not a list of text")
    words = document_words(document_text)
    tags: list[str] = []
    for tag in raw["tags"][:30]:
        if _SCHEME.search(tag) or _EMAIL.search(tag) or _DOMAIN.search(tag) or _MARKUP.search(tag):
            continue
        slug = slugify(tag)
        if not slug or not is_valid_tag(slug) or is_generic(slug) or slug in tags:
            continue
        if all(part in words or part.isdigit() for part in slug.split("-")):
            tags.append(slug)  # only words the document uses: an injected "attacker-evil-example" is not one
    return Enrichment(title=title, summary=summary, auto_tags=tags[:MAX_TAGS])
