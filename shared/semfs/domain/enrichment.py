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
from semfs.domain.hosts import is_top_level_domain
from semfs.domain.models import Enrichment, EntityCandidate
from semfs.domain.tags import is_generic, is_valid_tag, slugify
from semfs.domain.text import title_from_filename

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
_WORD_CHAR = re.compile(r"\w")
# Markup is what a browser would act on: a closing tag, a comment or declaration (when a ">" follows), a tag
# with an attribute that loads or runs something, an element that formats or embeds, an entity, a JSON-ish
# object. A placeholder a manual page writes (``--toolchain <path/to/file>``, ``<option>``) is none: it
# refused every answer quoting one (issue 51.2).
_TAG_OPEN = re.compile(r"<\s*+(?:/\s*+[a-z]|[!?])", re.I)  # markup when a ">" follows somewhere
_MARKUP = re.compile(
    r"<\s*+[a-z][\w-]*+\s++(?:href|src|srcset|srcdoc|style|on[a-z]++|action|formaction|poster|background|xmlns)\b"
    r"|<\s*+(?:script|style|iframe|object|embed|svg|math|img|a|b|i|u|em|strong|p|div|span|br|hr|h[1-6]|table|tr|td"
    r"|ul|ol|li|form|font|center|marquee)\s*+/?>"
    r"|&(?:lt|gt|#\d++|#x[0-9a-f]++);|\{\s*+['\"]",
    re.I,
)
_WORD = re.compile(r"[a-z0-9]+")

# A host is recognised by its shape, not by a list of top-level domains (a list missed "paypal-secure.de"):
# labels of letters, digits and hyphens (any script: "еvil.com" with a Cyrillic е, "пример.рф", "xn--…")
# joined by dots (also the ideographic and full-width dots IDNA reads as dots: "evil。com"), whose last
# label has two or more letters. A dotted name followed by a path or a port is a link whatever its last
# label; a bare one ending in a file extension that is no top-level domain ("report.pdf", "Node.js") is a
# file name. (So "notes.md" passes and "evil.zip" does not: .zip is a real top-level domain.)
_DOTS_CHARS = "\u3002\uff0e\uff61\u2024\ufe52"
_DOTS = str.maketrans(dict.fromkeys(_DOTS_CHARS, "."))
_LABEL = re.compile(r"(?:[^\W_]|-)++")
FILE_EXTENSIONS = frozenset(
    "pdf doc docx dot dotx xls xlsx xlsm ppt pptx odt ods odp rtf txt text csv tsv json jsonl xml yaml yml toml "
    "ini cfg conf log html htm xhtml eml msg mbox png jpg jpeg gif tif tiff bmp webp svg heic tar gz tgz bz2 xz "
    "7z rar epub js mjs ts tsx jsx java kt cpp cc hpp h c cs rb py md rst sh bash sql ipynb exe dll jar whl "
    "deb rpm iso bin dat bak tmp".split()
)


_OPENERS = "([{<\"'\u201c\u2018\u00ab"  # what may stand before a host: "(10.0.0.1)" is an address in brackets


def _has_host(word: str) -> bool:
    """A host name (or an IPv4 address) in one whitespace-free word, by shape (see above)."""
    parts = word.translate(_DOTS).lstrip(_OPENERS).split(".")
    return any(_host_at(parts, i) for i in range(1, len(parts)))


def _host_at(parts: list[str], i: int) -> bool:
    """Whether the dot before ``parts[i]`` ends a host name: a label after a word, followed by a path or a
    port, or ending the word as a top-level domain or a dotted quad's last number."""
    before, after = parts[i - 1], parts[i]
    m = _LABEL.match(after) if before and before[-1].isalnum() else None
    if m is None:
        return False
    label, rest = m.group(), after[m.end() :]
    if not rest and i + 1 < len(parts) and parts[i + 1]:
        return False  # an inner label: the last one is judged with the next dot
    if rest[:1] == "/" or (rest[:1] == ":" and rest[1:2].isdigit()):
        return True  # a path or a port follows
    if rest[:1] == "_" or _WORD_CHAR.match(rest[:1] or " "):
        return False  # glued to a word ("evil.com_x"): not a name on its own
    if label.isdigit():  # a dotted quad
        return i >= 3 and all(p.isdigit() and len(p) <= 3 for p in (parts[i - 3], parts[i - 2], parts[i - 1], label))
    return _ends_host(label.lower())


def _ends_host(last: str) -> bool:
    """Whether a word's last label makes it a host name: a top-level domain, not a file's extension."""
    if len(last) < 2 or not (last.isalpha() or last.startswith("xn--")) or last in FILE_EXTENSIONS:
        return False
    return is_top_level_domain(last)


# A payment account: an IBAN that passes its checksum and its country's length (python-stdnum), whether
# written in groups of four or in one piece.
_IBAN_START = re.compile(r"[A-Za-z]{2}\d{2}[A-Za-z0-9]*+")


def _has_iban(text: str) -> bool:
    return bool(_iban_spans(text))


# A phone number: "+" and 8–15 digits in groups, a trunk "0" or an area code in brackets and 9–15 digits,
# or the North American 3-3-4. Groups are bounded, so each start costs a constant; a date (01.02.2024,
# 8 digits) is not one.
_PHONE = re.compile(
    r"(?<![\w+\-/.])(?:\+\d{1,3}|\(\d{2,5}\)|0\d{1,4})(?:[ .\-]?\(?\d{2,5}\)?){1,5}(?![\w\-/])"
    r"|(?<![\w\-.])\d{3}[\-.]\d{3}[\-.]\d{4}(?![\w\-.])"
)
_DIGIT = re.compile(r"\d")


def _has_phone(text: str) -> bool:
    return bool(_phone_spans(text))


def _has_scheme(word: str) -> bool:
    """``http://…``, ``evil:x/y``, ``javascript:`` in one whitespace-free word."""
    head = _SCHEME_HEAD.search(word)  # the first head has the most of the word after it
    if head and any(word.find(ch, head.end()) >= 0 for ch in "/?="):
        return True
    return _RISKY_SCHEME.search(word) is not None


# Every link shape above needs one of these: a scheme's ":", an address's "@", a host's dot (or a dot IDNA
# reads as one). A word without any is no link, and is let through without the checks (the words of a page of
# prose: half of the extractive enricher's time went to them, issue 47.11).
_LINK_MARK = re.compile("[.:@" + "".join(_DOTS_CHARS) + "]")


def _carries_link(word: str) -> bool:
    return _LINK_MARK.search(word) is not None and _link_shape(word)


def _link_shape(word: str) -> bool:
    word = word.translate(_DOTS)
    return (
        "://" in word
        or "www." in word.lower()
        or _has_scheme(word)
        or _EMAIL.search(word) is not None
        or _has_host(word)
    )


def _has_markup(text: str) -> bool:
    """HTML (a tag that closes, an entity), a JSON-ish object, or a Markdown link or image ``[…](…)``."""
    tag = _TAG_OPEN.search(text)
    if (tag is not None and text.find(">", tag.end()) >= 0) or _MARKUP.search(text) is not None:
        return True
    link = text.find("](")
    return link > 0 and text.rfind("[", 0, link) >= 0


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
    why = unsafe(text)
    if why is not None:
        raise EnrichmentFailed(f"the model's {field} carries {why}")
    return text[:cap].strip()


def unsafe(text: str) -> str | None:
    """What in ``text`` may not be shown as a title, a summary or an answer (written by a model or picked
    from a document), or ``None``: a link or an address, markup, a payment account or a phone number. All
    are what an instruction planted in a document wants a reader to act on."""
    if has_link(text):
        return "a link or an address"
    if _has_markup(text):
        return "markup"
    if _has_iban(text):
        return "a payment account number"
    if _has_phone(text):
        return "a phone number"
    return None


MAX_ANSWER = 2000  # characters of an answer shown; a longer one is cut at a sentence end


def _iban_spans(text: str) -> list[tuple[int, int]]:
    from stdnum import iban

    words = list(_WORDS.finditer(text))
    spans = []
    for i, word in enumerate(words):
        if not _IBAN_START.fullmatch(word.group().strip(".,;:()[]")):
            continue
        compact = ""
        for j in range(i, min(i + 9, len(words))):  # at most 34 characters: nine groups of four
            piece = words[j].group().strip(".,;:()[]")
            if not piece.isalnum() or len(compact) + len(piece) > 34:
                break
            compact += piece
            if len(compact) >= 15 and iban.is_valid(compact):  # (a full stop after it stays)
                spans.append((word.start(), words[j].start() + len(words[j].group().rstrip(".,;:)]"))))
                break
    return spans


def _phone_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for m in _PHONE.finditer(text):
        number = m.group()
        digits = len(_DIGIT.findall(number))
        if (number.startswith("+") and 8 <= digits <= 15) or 9 <= digits <= 15 or number.count("-") == 2:
            spans.append(m.span())
    return spans


def checked_answer(raw: str) -> str:
    """An answer as it may be shown, or ``EnrichmentFailed`` saying why none is. The output rules apply as
    to titles, but an answer quotes documents, so what a document may legitimately hold is taken out, not
    the whole answer refused: each word carrying a link or an address becomes "[link removed]", each
    phone number or payment account "[number removed]" (the cited passage still shows the document's
    words). Markup refuses the answer, and so does one far longer than ``MAX_ANSWER`` (an echo, not an
    answer); one a little longer is cut at its last sentence end within it."""
    if len(raw) > 20 * MAX_ANSWER:
        raise EnrichmentFailed("the answer is far too long to be one")
    text = unicodedata.normalize("NFKC", raw)
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C" or ch == "\n")
    text = " ".join(text.split())
    if _has_markup(text):
        raise EnrichmentFailed("the answer carries markup")
    text = _WORDS.sub(lambda m: "[link removed]" if _carries_link(m.group()) else m.group(), text)
    merged: list[list[int]] = []
    for start, end in sorted(_iban_spans(text) + _phone_spans(text)):  # (an IBAN's groups can read as a phone)
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + "[number removed]" + text[end:]
    if len(text) > MAX_ANSWER:
        cut = text[:MAX_ANSWER]
        end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
        text = (cut[: end + 1] if end > MAX_ANSWER // 2 else cut.rstrip()) + " …"
    return text.strip()


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
    if not isinstance(raw, dict) or set(raw) - {*_REQUIRED, "entities"} or _REQUIRED - set(raw):
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
    return Enrichment(title=title, summary=summary, auto_tags=tags[:MAX_TAGS], entities=_candidates(raw))


_REQUIRED = frozenset({"title", "summary", "tags"})
MAX_CANDIDATES = 200


def _candidates(raw: dict[str, Any]) -> list[EntityCandidate]:
    """The model's entities as candidates, the malformed ones left out: whether each occurs in the
    document is ``domain.entities.located``'s to decide."""
    items = raw.get("entities")
    if not isinstance(items, list):
        return []
    return [
        EntityCandidate(kind=i["kind"], text=i["text"][:200])
        for i in items[:MAX_CANDIDATES]
        if isinstance(i, dict) and isinstance(i.get("kind"), str) and isinstance(i.get("text"), str)
    ]


def minimal_enrichment(filename: str) -> Enrichment:
    """The last resort when no enricher finished in time: a title from the file's name, nothing else."""
    title = title_from_filename(filename)[:MAX_TITLE]
    return Enrichment(title=title, summary=f"{title}.", auto_tags=[])
