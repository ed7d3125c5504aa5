"""Tag slugs: the one normal form every tag is stored and matched in."""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache
from typing import Any

from semfs.domain.hosts import registrable_label

TAG_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_TAG_LEN = 48


# Words that say nothing about what a document is about when they stand alone as a tag: units of
# time and counting, the vocabulary of documents, builds and code. (A phrase made only of them is
# dropped too; "release-version" is still fine next to a real word: "python-version" stays.)
GENERIC = frozenset(
    """days day weeks week months month years year hours hour minutes minute time times date dates
    unit units type types kind kinds version versions args arg argument arguments param params parameter
    parameters build builds value values number numbers item items list lists example examples default
    defaults option options thing things part parts case cases point points way ways lot lots name names
    info information details detail data text note notes line lines file files page pages section
    sections chapter document documents table tables figure figure row rows column columns field fields
    output input result results total totals amount level levels set sets first second third last next
    previous following above below end start top bottom left right new old true false none null yes
    help usage error errors test tests function functions method methods class object string different
    various several other same such whole full main general common simple basic
    returns return give gives given found find finds need needs needed write writes perform performs
    currently added adds fixed fixes failed fails broken enable enables enabled disable disables disabled
    print prints load loads include includes ignore ignores required require requires work works
    contains contain specified specify check checks exit generated generate support supports supported
    allow allows allowed using used uses make makes made get gets set sets run runs called call calls
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday
    sunday mon tue wed thu fri sat sun able instead additional longer current create creates created
    void define typedef const struct macro int char bool ctxt ptr
    provide provides provided want wants wanted granted see please thanks like also available
    changes change changed changelog release releases released bug bugs news upload uploaded""".split()
)


def is_word_like(slug: str) -> bool:
    """Whether a slug reads as words: no part is a run of letters and digits too long to be a word (a hash,
    a key, base64: ``fbjxssrern05kpbcrrf``), and at least half the parts are longer than two characters
    (``1v-h-1p`` is not)."""
    parts = slug.split("-")
    for part in parts:
        if len(part) >= 10 and any(ch.isdigit() for ch in part) and any(ch.isalpha() for ch in part):
            return False
    return sum(len(part) > 2 for part in parts) * 2 >= len(parts)


def slugify(text: str) -> str:
    """``"Q3 Financials"`` → ``q3-financials``; ``"Acme Corp."`` → ``acme-corp``. Empty if nothing is left.
    A slug longer than a tag may be is cut at a word boundary, never inside a word."""
    text = unicodedata.normalize("NFKD", text)
    text = text.encode("ascii", "ignore").decode("ascii").lower()
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    if len(text) <= MAX_TAG_LEN:
        return text
    cut = text[: MAX_TAG_LEN + 1].rfind("-")
    return text[:cut] if cut > 0 else ""


def is_generic(slug: str) -> bool:
    """A tag made only of generic words (``days``, ``build-type``): no use for finding anything."""
    return all(part in GENERIC or part.isdigit() for part in slug.split("-"))


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
MAX_LABEL_LEN = MAX_TAG_LEN  # (a longer label made a slug over the limit: one limit, said once)


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


_MAIL_PROVIDERS = {
    "gmail",
    "googlemail",
    "outlook",
    "hotmail",
    "yahoo",
    "icloud",
    "proton",
    "protonmail",
    "gmx",
}


def contact_tag(contact: str) -> str:
    """A context tag for a contact: its organisation for an address at a company domain, else its name."""
    if "@" in contact:
        domain = contact.rsplit("@", 1)[1].lower().strip(".")
        label = registrable_label(domain)
        return "" if label in _MAIL_PROVIDERS else label
    return contact


@cache
def _stemmer() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def stem_key(tag: str) -> str:
    """A tag's Snowball stem, word by word (``q3-invoices`` → ``q3-invoic``): inflections of one tag share it.
    Computed once per tag."""
    return "-".join(_stemmer().stemWords(tag.split("-")))
