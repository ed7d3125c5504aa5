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

# Every pattern here runs in time linear in the text, however hostile: the unanchored
# ``\S*(://|www\.)\S*`` and ``[\w.+-]+@…`` they replace took 4.6 s on one 10,000-character word, and
# ``re`` holds the GIL meanwhile, so one 48 KB upload froze the whole server (issue 27). Three rules make
# it so. A pattern starts only where a run of its characters starts (a look-behind refuses every position
# inside the run, so no run is rescanned from each of its characters). Repeats are possessive where what
# follows cannot be given back to them (disjoint classes). And "is there a / ? = or > later" is asked once,
# by ``str.find`` after the first head, not by a repeat that every head rescans to the end.
_WORDS = re.compile(r"\S+")
_SCHEME_HEAD = re.compile(r"\b[a-z][a-z0-9+.\-]{1,15}:", re.I)  # at most 17 characters from any start
_RISKY_SCHEME = re.compile(r"\b(?:javascript|data|mailto|vbscript|file):", re.I)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)++")
_DOTTED = re.compile(r"(?<![a-z0-9.-])[a-z0-9.-]++", re.I)  # a run of labels and dots: where host names are
_WORD_CHAR = re.compile(r"\w")
_TLDS = frozenset("com net org io co info biz example test xyz ru cn top app dev ai me".split())
_TAG_OPEN = re.compile(r"<\s*+/?\s*+[a-z!?]", re.I)  # markup when a ">" follows somewhere
_MARKUP = re.compile(r"<\s*+[a-z]++[\s/]|&(?:lt|gt|#\d++|#x[0-9a-f]++);|\{\s*+['\"]", re.I)
_WORD = re.compile(r"[a-z0-9]+")


def _has_scheme(word: str) -> bool:
    """``http://…``, ``evil:x/y``, ``javascript:`` in one whitespace-free word."""
    head = _SCHEME_HEAD.search(word)  # the first head has the most of the word after it
    if head and any(word.find(ch, head.end()) >= 0 for ch in "/?="):
        return True
    return _RISKY_SCHEME.search(word) is not None


def _has_domain(text: str) -> bool:
    """A dotted name whose last label (before a word boundary) is one of the listed top-level domains."""
    for run in _DOTTED.finditer(text):
        labels = run.group().split(".")
        glued = _WORD_CHAR.match(text, run.end()) is not None  # "evil.com_x": no word boundary after it
        for i in range(1, len(labels)):
            if labels[i - 1] and labels[i].lower() in _TLDS and (i < len(labels) - 1 or not glued):
                return True
    return False


def _carries_link(word: str) -> bool:
    return "://" in word or "www." in word or _has_scheme(word) or _EMAIL.search(word) is not None or _has_domain(word)


def _has_markup(text: str) -> bool:
    tag = _TAG_OPEN.search(text)
    return (tag is not None and text.find(">", tag.end()) >= 0) or _MARKUP.search(text) is not None


def _text(value: Any, field: str, cap: int) -> str:
    if not isinstance(value, str):
        raise EnrichmentFailed(f"the model's {field} is not text")
    if len(value) > 20 * cap:  # a model that echoes the document back is not answering the question
        raise EnrichmentFailed(f"the model's {field} is far too long")
    text = unicodedata.normalize("NFKC", value)
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C" or ch == "\n")
    text = " ".join(text.split())
    if not text:
        raise EnrichmentFailed(f"the model returned an empty {field}")
    if has_link(text) or _has_markup(text):
        raise EnrichmentFailed(f"the model's {field} carries a link, an address or markup")
    return text[:cap].strip()


def strip_links(text: str) -> str:
    """``text`` without the words (runs between whitespace) that carry a URL, an e-mail address or a
    domain: what tags must never be made of. A whole word goes, so no part of a link becomes a tag."""
    return _WORDS.sub(lambda m: " " if _carries_link(m.group()) else m.group(), text)


def has_link(text: str) -> bool:
    return any(_carries_link(m.group()) for m in _WORDS.finditer(text))


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
        if has_link(tag) or _has_markup(tag):
            continue
        slug = slugify(tag)
        if not slug or not is_valid_tag(slug) or is_generic(slug) or slug in tags:
            continue
        if all(part in words or part.isdigit() for part in slug.split("-")):
            tags.append(slug)  # only words the document uses: an injected "attacker-evil-example" is not one
    return Enrichment(title=title, summary=summary, auto_tags=tags[:MAX_TAGS])
