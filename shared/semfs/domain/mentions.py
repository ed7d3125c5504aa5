"""Entities in a file's text: who and what it names, each where it was found.

Seven kinds: people, organisations, email addresses, phone numbers, money amounts with their currency,
dates and identifiers (invoice, order, contract and reference numbers, IBANs). Each is found by what is
plainly there, never guessed:

- patterns for the kinds with a form (``EMAIL``, phone numbers by ``phonenumbers``, ``MONEY``, dates,
  identifiers after a cue word or with a known prefix, IBANs that pass their checksum);
- the tenant's known contacts and their organisations, by name (``Known``);
- capitalised names only with evidence: a title (``Dr``), a cue (``signed by``, ``Attn:``), an address
  beside them (``Jane Okafor <jane@…>``), or an organisation's legal form or head noun (``Acme Corp``,
  ``University of Vienna``);
- with an LLM configured, its candidates too, each kept only where it occurs in the text (``located``).

A mention's ``key`` is its normalised value (an address in lower case, a phone number in E.164, an
amount as ``EUR 1234.50``, a date in ISO form, an identifier in upper case, a name folded), so one entity
is one id however a file writes it: ``entity_id(kind, key)``. Every pattern is linear in the text (bounded
repetitions, no nested quantifiers; ``tests/unit/test_linear_text.py``), and a file yields at most
``MAX_MENTIONS``.
"""

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from functools import cache
from itertools import islice

from pydantic import Field

from semfs.domain.models import ExtractedDocument, Frozen, Location
from semfs.domain.vocabulary import ENTITY_KINDS, EntityKind

KINDS = ENTITY_KINDS
KIND_LABELS: dict[EntityKind, str] = {
    "person": "People",
    "organisation": "Organisations",
    "email": "Email addresses",
    "phone": "Phone numbers",
    "money": "Amounts",
    "date": "Dates",
    "identifier": "Identifiers",
}
MAX_MENTIONS = 500  # per file: a 10,000-row ledger names its amounts, not 10,000 entities
MAX_FILE_ENTITIES = 64  # the entities a file's record carries (most mentioned first), for facets and filters
# the entities of a file the store keeps (most mentioned first): each is a counted write (a DynamoDB
# transaction), and a ledger's ten-thousandth amount tells no one anything its first 200 did not
MAX_STORED_ENTITIES = 200
MAX_SCAN_CHARS = 2_000_000  # text past this is not scanned (the index still holds it)


class Mention(Frozen):
    """One place a file names an entity."""

    kind: EntityKind
    key: str  # the normalised value: one entity however it is written
    text: str  # as the file writes it
    location: Location = Location()
    detail: str | None = None  # what an identifier is ("invoice", "iban"); how a name was recognised


class FileEntity(Frozen):
    """One entity of one file: what the store keeps per (entity, file)."""

    entity_id: str
    kind: EntityKind
    label: str = Field(description="The way the file writes it most often")
    mentions: int
    location: str = Field(description="Where the file first names it: page 2, sheet Q3, …")
    detail: str | None = Field(default=None, description="What an identifier is: invoice, order, iban, …")
    contact_id: str | None = Field(default=None, description="The contact it is, or whose organisation it is")


def entity_id(kind: str, key: str) -> str:
    return f"{kind}:{key}"


def split_id(value: str) -> tuple[EntityKind, str] | None:
    """``(kind, key)`` of an entity id, or ``None`` when ``value`` is not one."""
    kind, sep, key = value.partition(":")
    if sep and kind in KINDS and key:
        return kind, key
    return None


def fold(name: str) -> str:
    """A name's key: NFKC, case-folded, punctuation dropped, whitespace single."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return " ".join(re.sub(r"[^\w&@+]+", " ", text).split())


# ---------------------------------------------------------------------------------------------- known


@dataclass(frozen=True)
class KnownContact:
    contact_id: str
    email: str
    name: str = ""
    organisation: str | None = None


@dataclass
class Known:
    """The tenant's contacts as names to look for, and the ids a mention links to."""

    names: dict[tuple[str, ...], tuple[EntityKind, str]] = field(default_factory=dict)  # tokens → (kind, label)
    by_email: dict[str, str] = field(default_factory=dict)  # address → contact id
    by_name: dict[str, str] = field(default_factory=dict)  # folded name → contact id
    by_org: dict[str, str] = field(default_factory=dict)  # folded organisation (or its domain's name) → contact
    first: dict[str, int] = field(default_factory=dict)  # first token → longest name starting with it

    @classmethod
    def of(cls, contacts: Iterable[KnownContact]) -> "Known":
        known = cls()
        for c in contacts:
            known.by_email.setdefault(c.email.lower(), c.contact_id)
            domain = c.email.rpartition("@")[2].lower()
            label = domain.split(".")[0].replace("-", " ") if domain else ""
            if label and label not in _FREE_MAIL:
                known.by_org.setdefault(_without_legal_form(fold(label)), c.contact_id)
            # a contact named like a company (--contact "Acme Corp") is that organisation, not a person
            as_org = bool(c.name) and any(t in _COMPANY_WORDS for t in _tokens(c.name))
            named: list[tuple[EntityKind, str]] = [
                ("organisation" if as_org else "person", c.name),
                ("organisation", c.organisation or ""),
            ]
            for kind, name in named:
                tokens = tuple(_tokens(name))
                if len(tokens) < (2 if kind == "person" else 1) or len(tokens) > 6:
                    continue  # a person by first name alone is too often someone else
                known.names.setdefault(tokens, (kind, name.strip()))
                known.first[tokens[0]] = max(known.first.get(tokens[0], 0), len(tokens))
                key = fold(name) if kind == "person" else _without_legal_form(fold(name))
                (known.by_name if kind == "person" else known.by_org).setdefault(key, c.contact_id)
                short = tuple(_tokens(key)) if kind == "organisation" else tokens
                if short != tokens and short and len(short[0]) >= 3:  # "Acme" names the Acme Corp it knows
                    known.names.setdefault(short, (kind, name.strip()))
                    known.first[short[0]] = max(known.first.get(short[0], 0), len(short))
        return known

    def contact_for(self, kind: str, key: str) -> str | None:
        if kind == "email":
            return self.by_email.get(key)
        if kind == "person":
            return self.by_name.get(key)
        if kind == "organisation":
            return self.by_org.get(key) or self.by_org.get(_without_legal_form(key))
        return None


_FREE_MAIL = frozenset(
    "gmail googlemail yahoo hotmail outlook live icloud me aol gmx web proton protonmail mail".split()
)
_TOKEN = re.compile(r"[^\W_][\w'’&.-]{0,60}")


def _tokens(text: str) -> Iterator[str]:
    for m in _TOKEN.finditer(text):
        yield _tok(m.group())


def _tok(word: str) -> str:
    return word.casefold().rstrip(".")


# -------------------------------------------------------------------------------------------- patterns

EMAIL = re.compile(r"(?<![\w.+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,6}")
_NUM = r"(?<![\w.,])(?:\d{1,3}(?:[,.\u00a0\u202f' ]\d{3}){1,5}(?:[.,]\d{1,2})?|\d{1,12}(?:[.,]\d{1,2})?)(?![\d])"
_CURRENCY_CODES = "USD|EUR|GBP|CHF|JPY|CAD|AUD|NZD|INR|CNY|SEK|NOK|DKK|PLN|CZK|HUF|ZAR|BRL|MXN|SGD|HKD"
_SYMBOLS = {"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "Fr.": "CHF", "kr": "SEK"}
_WORDS = {"dollars": "USD", "dollar": "USD", "euros": "EUR", "euro": "EUR", "pounds": "GBP"}
_SCALE = r"(?:\s?(?P<scale>million|billion|thousand|mn|bn)\b)?"
MONEY = re.compile(
    rf"(?P<pre>US\$|[$€£¥₹]|\b(?:{_CURRENCY_CODES})\b)\s?(?P<amount>{_NUM}){_SCALE}"
    rf"|(?P<amount2>{_NUM}){_SCALE.replace('scale', 'scale2')}"
    rf"\s?(?P<post>[€£]|\b(?:{_CURRENCY_CODES}|dollars|euros?|pounds)\b)"
)
_SCALES = {"thousand": 1_000, "million": 1_000_000, "mn": 1_000_000, "billion": 1_000_000_000, "bn": 1_000_000_000}

_ORDINAL = r"(?:st|nd|rd|th|\.)?"
DATE_ISO = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?!\d|-\d)")
DATE_NUMERIC = re.compile(r"(?<![\d./])(\d{1,2})([./])(\d{1,2})\2(\d{4}|\d{2})(?!\d|[./]\d)")


@cache
def _months() -> dict[str, int]:
    """Month names (wide and abbreviated) in the languages semfs meets most, from CLDR via Babel."""
    from babel.dates import get_month_names  # Babel, phonenumbers and stdnum load when text is scanned

    names: dict[str, int] = {}
    for locale in ("en", "de", "fr", "es", "it", "nl", "pt"):
        for width in ("wide", "abbreviated"):
            for n, name in get_month_names(width, locale=locale).items():
                if len(name.rstrip(".")) >= 3:
                    names.setdefault(name.casefold().rstrip("."), n)
    return names


# a word where a month may stand; whether it is one is a dictionary lookup (one alternation of 150 names
# tried at every word was the slowest pattern here)
DATE_WORDS = re.compile(
    r"(?<!\w)(?:(?P<d>\d{1,2})(?:st|nd|rd|th|\.)?\s(?:de\s)?(?P<m>[^\W\d_]{3,12})\.?,?\s(?:de\s)?(?P<y>\d{4})"
    r"|(?P<m2>[^\W\d_]{3,12})\.?\s(?:(?P<d2>\d{1,2})(?:st|nd|rd|th)?(?:[-–]\d{1,2})?,?\s)?(?P<y2>\d{4}))(?!\d)"
)


_CUES = {
    "invoice": "invoice", "inv": "invoice", "rechnung": "invoice", "facture": "invoice",
    "order": "order", "purchase order": "order", "po": "order", "bestellung": "order",
    "contract": "contract", "agreement": "contract", "vertrag": "contract",
    "reference": "reference", "ref": "reference", "case": "case", "ticket": "ticket",
    "account": "account", "customer": "customer", "policy": "policy", "quote": "quote",
    "quotation": "quote", "receipt": "receipt", "claim": "claim", "tracking": "tracking",
    "transaction": "transaction", "txn": "transaction", "estimate": "estimate", "report": "report",
    "booking": "booking", "vin": "vehicle", "member": "member", "shipment": "shipment",
}  # fmt: skip
IDENTIFIER = re.compile(
    r"\b(?P<cue>purchase order|"
    + "|".join(sorted((c for c in _CUES if c != "purchase order"), key=len, reverse=True))
    + r")\b\.?[ \t]?(?:no\.?|number|nr\.?|num\.?|#|id)?[ \t]?[:#]?[ \t]?"
    r"(?P<id>(?=[A-Z0-9\-/._]{0,29}\d)[A-Z0-9][A-Z0-9\-/._]{1,28}[A-Z0-9])(?![\w-])",
    re.IGNORECASE,
)
_PREFIXES = {"INV": "invoice", "PO": "order", "SO": "order", "ORD": "order", "CTR": "contract", "CON": "contract",
             "REF": "reference", "TKT": "ticket", "CASE": "case", "QT": "quote", "RCPT": "receipt",
             "TXN": "transaction", "EST": "estimate", "CUST": "customer", "POL": "policy"}  # fmt: skip
PREFIXED = re.compile(r"(?<![\w-])(?P<p>" + "|".join(_PREFIXES) + r")[-_/#]?(?P<n>\d[A-Z0-9\-/]{0,24})(?![\w-])")
_ID_SHAPE = re.compile(r"[A-Z0-9][A-Z0-9\-/._]{1,40}[A-Z0-9]")
IBAN_CANDIDATE = re.compile(r"(?<![A-Z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}(?![A-Z0-9])")

# a name's letters: Latin capitals with their accented forms (Étienne, Łukasz) and small letters with theirs
# (Beširović, Kęstutis, Rūdolfs); a capital inside (LaMont, MacKenzie) or after a hyphen (Hoi-Ho)
_UPPER = "A-ZÀ-ÖØ-Þ" + "".join(ch for ch in map(chr, range(0x100, 0x180)) if ch.isupper())
_LOWER = "a-zß-öø-ÿ" + "".join(ch for ch in map(chr, range(0x100, 0x180)) if ch.islower())
_NAME = rf"[{_UPPER}][{_LOWER}'’]{{1,30}}(?:[{_UPPER}][{_LOWER}]{{1,20}}|-[{_UPPER}]?[{_LOWER}]{{1,20}})?"
_PARTICLE = r"(?:van|von|de|der|den|da|di|le|la|dos|del)"
_PERSON_NAME = rf"(?P<name>{_NAME}(?:[ \t]+[A-Z]\.)?(?:[ \t]+{_PARTICLE}?[ \t]?{_NAME}){{1,2}})"
# before an address a name is what its owner wrote: up to four words, an initial first ("A. Maitland Bottoms")
_ADDRESSED_NAME = (
    rf"(?P<name>(?:[{_UPPER}]\.[ \t]+)?{_NAME}(?:[ \t]+[{_UPPER}]\.)?(?:[ \t]+{_PARTICLE}?[ \t]?{_NAME}){{1,3}})"
)
TITLED = re.compile(rf"\b(?P<cue>Mr|Mrs|Ms|Miss|Dr|Prof|Professor|Herr|Frau|Mme|Sir|Dame)\.?[ \t]+{_PERSON_NAME}")
CUED = re.compile(
    r"(?i:\b(?P<cue>signed by|prepared by|approved by|reviewed by|authored by|written by|submitted by|"
    r"issued by|attn|attention|contact person|contact|dear|regards|sincerely|cheers|best|author|name|from|to|cc|"
    r"cashier|estimator|attendees|participants|present|representative|agent|manager|buyer|seller|recipient|sender|"
    r"requested by|ordered by|insured|patient|employee|applicant|witness)"
    r")\b[ \t]*[:,]?[ \t]*\n?[ \t]*" + _PERSON_NAME + r"(?![\w-])"
)
NAMED_ADDRESS = re.compile(
    rf"(?<![\w{_UPPER}{_LOWER}.])" + _ADDRESSED_NAME + r"[ \t]*[<(\[][ \t]*(?P<email>[A-Za-z0-9._%+-]{1,64}@)"
)
_LEGAL = (
    r"Inc|Incorporated|Ltd|Limited|LLC|L\.L\.C|LLP|GmbH|gGmbH|AG|SE|SA|S\.A|SAS|SARL|BV|B\.V|NV|N\.V|plc|PLC|"
    r"Corp|Corporation|Co|Company|Pty|KG|AB|ASA|Oy|S\.p\.A|S\.r\.l|Srl|SpA|Group|Holdings"
)
_ORG_WORD = r"[A-Z](?:[^\W\d_]|[&'’-]){0,40}"  # letters: "SKU-2234 Electronics" names no organisation
# between the words of a name with a legal form, a space or one line break: "Free Software\nFoundation, Inc."
# (a wrapped copyright line) was "Foundation, Inc." (a name by its head word alone keeps to one line: a form's
# labels stand on lines of their own)
_GAP = r"(?:[ \t]|[ \t]*+\n[ \t]*+)"
LEGAL_FORM = re.compile(rf"(?<![\w&-])(?P<org>(?:{_ORG_WORD}{_GAP}){{0,4}}?{_ORG_WORD}),?{_GAP}(?P<form>{_LEGAL})\b\.?")
_HEADS = (
    r"University|Institute|Foundation|Association|Bank|Agency|Council|Commission|Ministry|Society|Laboratory|"
    r"Laboratories|Consortium|Organization|Organisation|College|Hospital|Federation|Authority|Bureau|Partners|"
    r"Studios|Cinemas|Entertainment|Electronics|Technologies|Industries|Solutions|Logistics|Freight|Airlines|"
    r"Insurance|Motors"
)
# a head after a head only ("Universal Studios Distribution"): alone it heads a licence's clauses
# ("Distribution of the Standard", "Berkeley Software Distribution")
_SECOND_HEADS = _HEADS + r"|Distribution"
_HEAD_WORDS = frozenset(_HEADS.split("|"))
_OF = rf"[ \t]of(?:[ \t]the)?[ \t]{_ORG_WORD}(?:[ \t]{_ORG_WORD})?"
HEADED = re.compile(
    rf"(?<![\w&-])(?P<org>(?:{_ORG_WORD}[ \t]){{1,3}}(?:{_HEADS})(?:[ \t](?:{_SECOND_HEADS}))?(?:{_OF})?"
    rf"|(?:{_HEADS}){_OF})(?![\w-])"
)
# capitalised words that start a sentence or name a role, never a person or an organisation's first word
_NOT_NAMES = frozenset(
    """the a an and or of for to in on at by with from this that these those our your their its his her
    dear sir madam all team customer customers service services support department sales accounts billing
    office management board staff member members client clients user users everyone colleagues friends
    hello hi thanks thank regards best kind warm yours sincerely please note total amount invoice order
    contract agreement page section chapter table figure appendix annex january february march april may june
    july august september october november december monday tuesday wednesday thursday friday saturday sunday
    mr mrs ms dr prof street road avenue year make model date time phone email address city country start end
    territory region add fix fixes update remove drop bump""".split()
)
# a capitalised sequence holding one of these names an organisation, not a person ("Name: Universal Studios")
_ORG_WORDS = frozenset(
    """group studios distribution cinemas cinema entertainment electronics repair services solutions systems
    technologies industries partners consulting logistics freight bank insurance motors media labs airlines
    energy pharmaceuticals university institute foundation association agency council ministry society college
    hospital inc ltd llc gmbh corp corporation company limited""".split()
)


# ------------------------------------------------------------------------------------------- extraction


def extract_mentions(doc: ExtractedDocument, known: Known | None = None, region: str = "US") -> list[Mention]:
    """Every entity ``doc`` names, block by block, in document order; at most ``MAX_MENTIONS``."""
    known = known or Known()
    out: list[Mention] = []
    budget = MAX_SCAN_CHARS
    for block in doc.blocks:
        text = block.text[:budget]
        budget -= len(text)
        found = mentions_in(text, block.location, known, region)
        if block.kind == "code":  # a program's "$1" or "10 EUR" in a test fixture is no amount a person paid
            found = [x for x in found if x.kind != "money"]
        out.extend(found)
        if len(out) >= MAX_MENTIONS or budget <= 0:
            break
    return out[:MAX_MENTIONS]


def mentions_in(text: str, location: Location, known: Known, region: str = "US") -> list[Mention]:
    """The mentions in one block's text, by position."""
    found: list[tuple[int, Mention]] = []
    for finder in (_emails, _phones, _money, _dates, _identifiers, _people, _organisations, _known):
        found.extend(islice(finder(text, location, known, region), MAX_MENTIONS))
    found.sort(key=lambda pm: pm[0])
    return _without_overlaps(found)


def _without_overlaps(found: list[tuple[int, Mention]]) -> list[Mention]:
    """One mention per span of text: a person's name inside an organisation's is the organisation's
    (``Jane Okafor Consulting Ltd``), an amount inside an identifier is the identifier's. Kept spans do
    not overlap and come by start, so a new span can overlap only the last one kept."""
    kept: list[tuple[int, int, Mention]] = []
    for start, m in sorted(found, key=lambda pm: (pm[0], -len(pm[1].text), _RANK[pm[1].kind])):
        end = start + len(m.text)
        if not kept or kept[-1][1] <= start:
            kept.append((start, end, m))
        elif _RANK[m.kind] < _RANK[kept[-1][2].kind] and end - start >= kept[-1][1] - kept[-1][0]:
            kept[-1] = (start, end, m)
    return [m for _, _, m in kept]


_RANK = {"email": 0, "identifier": 1, "organisation": 2, "person": 3, "phone": 4, "money": 5, "date": 6}


def _emails(text: str, loc: Location, known: Known, region: str) -> Iterator[tuple[int, Mention]]:
    for m in EMAIL.finditer(text):
        address = m.group().rstrip(".-")
        yield m.start(), Mention(kind="email", key=address.lower(), text=address, location=loc)


_DATE_LIKE = re.compile(r"(?:19|20)\d\d[-./]\d{1,2}[-./]\d{1,4}")
# No telephone number anywhere has fewer than 6 digits with its country code (phonenumbers' metadata: the
# shortest are 4-digit numbers behind 2-digit codes, Iran's +98 9601), written with at most a few of the separators
# phonenumbers accepts between them. A text without such a run has no number to find, and the matcher,
# which parses and validates every digit group it meets, is not started (a third of entity extraction's
# time on SciFact's abstracts, issue 47.11).
_PHONE_DIGITS = re.compile(r"\d(?:[^\S\n]{0,2}[-./()\[\]~\u2010-\u2015\u2212\uff0d]?[^\S\n]{0,2}\(?\d){5}")


def _phones(text: str, loc: Location, known: Known, region: str) -> Iterator[tuple[int, Mention]]:
    if _PHONE_DIGITS.search(text) is None:
        return
    import phonenumbers

    matcher = phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID, max_tries=2_000)
    for match in matcher:
        if _DATE_LIKE.fullmatch(match.raw_string):  # 2024-12-5678 is an order number, not (202) 412-5678
            continue
        key = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
        yield match.start, Mention(kind="phone", key=key, text=match.raw_string, location=loc)


# a shell or template variable: "$1", "${1}", "$10" glued to a quote, a brace or "=" (issue 51.4: ``$1`` in a
# shell snippet was money), or a "$" right after a word character ("PS$1")
_NOT_MONEY_BEFORE, _NOT_MONEY_AFTER = frozenset("\"'={(`\\"), frozenset("\"'}`)")


_VARIABLE_AFTER = re.compile(r"[,; ]\$\{?\d")
_VARIABLE_BEFORE = re.compile(r"\$\{?\d\}?[,; ]\Z")


def _shell_variable(text: str, m: re.Match[str]) -> bool:
    if m.group("pre") != "$" or not re.fullmatch(r"\d{1,2}", m.group("amount") or ""):
        return False
    before = text[m.start() - 1] if m.start() else " "
    after = text[m.end()] if m.end() < len(text) else " "
    # "$1,$2" and "$1 $2": a variable beside another
    listed = (
        _VARIABLE_AFTER.match(text, m.end()) is not None
        or _VARIABLE_BEFORE.search(text, max(0, m.start() - 6), m.start()) is not None
    )
    return before in _NOT_MONEY_BEFORE or after in _NOT_MONEY_AFTER or before.isalnum() or listed


def _money(text: str, loc: Location, known: Known, region: str) -> Iterator[tuple[int, Mention]]:
    for m in MONEY.finditer(text):
        if _shell_variable(text, m):
            continue
        currency_text = m.group("pre") or m.group("post") or ""
        currency = _SYMBOLS.get(currency_text) or _WORDS.get(currency_text.lower()) or currency_text.upper()
        value = amount(m.group("amount") or m.group("amount2"))
        scale = m.group("scale") or m.group("scale2")
        if value is None:
            continue
        if scale:
            value *= _SCALES[scale.lower()]
        yield m.start(), Mention(kind="money", key=f"{currency} {value:.2f}", text=m.group().strip(), location=loc)


def amount(text: str) -> Decimal | None:
    """``1,234.50``, ``1.234,50``, ``1 234`` and ``1234`` as numbers: the last separator followed by one or
    two digits is the decimal point, every other separator groups thousands."""
    digits = re.sub(r"[\u00a0\u202f' ]", "", text)
    last = max(digits.rfind(","), digits.rfind("."))
    if last >= 0 and len(digits) - last - 1 in (1, 2):
        whole, frac = digits[:last], digits[last + 1 :]
    else:
        whole, frac = digits, ""
    whole = whole.replace(",", "").replace(".", "")
    try:
        return Decimal(f"{whole}.{frac or '0'}")
    except InvalidOperation:
        return None


def _dates(text: str, loc: Location, known: Known, region: str) -> Iterator[tuple[int, Mention]]:
    for m in DATE_ISO.finditer(text):
        if (d := _date(int(m[1]), int(m[2]), int(m[3]))) is not None:
            yield m.start(), Mention(kind="date", key=d.isoformat(), text=m.group(), location=loc)
    for m in DATE_NUMERIC.finditer(text):
        a, b, year = int(m[1]), int(m[3]), int(m[4])
        if len(m[4]) == 2:  # 12/01/24: a two-digit year is this century's up to 69 (as strptime's %y reads it)
            if m[2] == ".":
                continue  # 1.2.24 is as often a version as a date
            year += 2000 if year < 70 else 1900
        # dots are day-first everywhere; slashes are month-first in the US unless the first can't be a month
        day, month = (a, b) if m[2] == "." or a > 12 or region != "US" else (b, a)
        if (d := _date(year, month, day)) is not None:
            yield m.start(), Mention(kind="date", key=d.isoformat(), text=m.group(), location=loc)
    names = _months()
    for m in DATE_WORDS.finditer(text):
        named = names.get((m["m"] or m["m2"]).casefold())
        year = int(m["y"] or m["y2"])
        if named is None:
            continue
        day_text = m["d"] or m["d2"]
        if not day_text:  # a month of a year
            if 1000 <= year <= 2999:
                yield m.start(), Mention(kind="date", key=f"{year:04d}-{named:02d}", text=m.group(), location=loc)
        elif (d := _date(year, named, int(day_text))) is not None:
            yield m.start(), Mention(kind="date", key=d.isoformat(), text=m.group(), location=loc)


def _date(year: int, month: int, day: int) -> date | None:
    if not 1000 <= year <= 2999:
        return None
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _identifiers(text: str, loc: Location, known: Known, region: str) -> Iterator[tuple[int, Mention]]:
    for m in IDENTIFIER.finditer(text):
        value = m["id"].upper()
        if _is_plain_date_or_amount(value):
            continue
        cue = _CUES[" ".join(m["cue"].lower().split())]
        yield m.start("id"), Mention(kind="identifier", key=value, text=m["id"], location=loc, detail=cue)
    for m in PREFIXED.finditer(text):
        yield (
            m.start(),
            Mention(kind="identifier", key=m.group().upper(), text=m.group(), location=loc, detail=_PREFIXES[m["p"]]),
        )
    for m in IBAN_CANDIDATE.finditer(text):
        value = _valid_iban(m.group())
        if value:
            yield m.start(), Mention(kind="identifier", key=value, text=value_text(m.group(), value), location=loc,
                                     detail="iban")  # fmt: skip


def value_text(found: str, value: str) -> str:
    """The part of ``found`` that spells ``value`` (spaces aside)."""
    n = 0
    for i, ch in enumerate(found):
        n += ch != " "
        if n == len(value):
            return found[: i + 1]
    return found


def _valid_iban(candidate: str) -> str | None:
    from stdnum import iban

    groups = candidate.split(" ")
    for end in range(len(groups), 0, -1):  # a word in capitals after the number is not part of it
        value = "".join(groups[:end])
        if len(value) >= 15 and iban.is_valid(value):
            return value
    return None


def _is_plain_date_or_amount(value: str) -> bool:
    return bool(re.fullmatch(r"\d{1,4}([./-])\d{1,2}\1\d{1,4}|[\d.,]+", value)) and len(value) < 6


def _people(text: str, loc: Location, known: Known, region: str) -> Iterator[tuple[int, Mention]]:
    for pattern, how in ((TITLED, "title"), (CUED, "cue"), (NAMED_ADDRESS, "address")):
        for m in pattern.finditer(text):
            name = _trim_name(m["name"])
            if name:
                yield m.start("name"), Mention(kind="person", key=fold(name), text=name, location=loc, detail=how)


def _trim_name(name: str) -> str | None:
    words = name.split()
    while words and words[-1].casefold().strip(".") in _NOT_NAMES:
        words.pop()
    if len(words) < 2 or any(w.casefold().strip(".") in _NOT_A_PERSON for w in words):
        return None
    return " ".join(words)


def _organisations(text: str, loc: Location, known: Known, region: str) -> Iterator[tuple[int, Mention]]:
    for pattern, how in ((LEGAL_FORM, "legal form"), (HEADED, "name")):
        for m in pattern.finditer(text):
            words = m["org"].split()
            start = m.start("org")
            while words and words[0].casefold() in _NOT_NAMES:
                start = text.index(words[0], start) + len(words[0])
                words.pop(0)
            if not words or (how == "legal form" and len(words) == 1 and len(words[0]) < 2):
                continue
            lead = words[: next((i for i, w in enumerate(words) if w in _HEAD_WORDS), len(words))]
            if how == "name" and (len(words) < 2 or any(w.casefold() in _NOT_NAMES for w in lead)):
                continue  # a head word alone ("Commission") or after a label ("End Date Commission")
            start = text.index(words[0], start)
            surface = " ".join(text[start : m.end()].rstrip(",").split())  # a wrapped name on one line
            if surface.endswith(".") and len(surface.rsplit(" ", 1)[-1]) > 5:  # "Corporation." ends a sentence
                surface = surface[:-1]
            yield start, Mention(kind="organisation", key=_without_legal_form(fold(surface)), text=surface,
                                 location=loc, detail=how)  # fmt: skip


_LEGAL_WORDS = frozenset(fold(w.replace("\\", "")) for w in _LEGAL.split("|"))
_COMPANY_WORDS = _ORG_WORDS | _LEGAL_WORDS  # a contact's name holding one is an organisation's
_NOT_A_PERSON = _NOT_NAMES | _ORG_WORDS  # a capitalised sequence holding one names no person


def _without_legal_form(key: str) -> str:
    """``acme corp`` and ``acme corporation`` are one organisation: ``acme``."""
    words = key.split()
    while len(words) > 1 and words[-1] in _LEGAL_WORDS:
        words.pop()
    return " ".join(words)


def _known(text: str, loc: Location, known: Known, region: str) -> Iterator[tuple[int, Mention]]:
    if not known.names:
        return
    tokens = [(m.start(), m.end(), _tok(m.group())) for m in _TOKEN.finditer(text)]
    for i, (start, _, token) in enumerate(tokens):
        longest = known.first.get(token)
        if not longest:
            continue
        for n in range(min(longest, len(tokens) - i), 0, -1):
            hit = known.names.get(tuple(t for _, _, t in tokens[i : i + n]))
            if hit:
                kind, label = hit
                surface = text[start : tokens[i + n - 1][1]]
                key = fold(label) if kind == "person" else _without_legal_form(fold(label))
                yield start, Mention(kind=kind, key=key, text=surface, location=loc, detail="contact")
                break


# ---------------------------------------------------------------------------------------------- the LLM


def located(doc: ExtractedDocument, candidates: Sequence[tuple[str, str]]) -> list[Mention]:
    """An LLM's ``(kind, text)`` candidates that occur in ``doc``, each at the first block that holds it
    (case and spacing aside); the rest are dropped, as tags are: a model does not name what is not there."""
    blocks = [(" ".join(b.text.casefold().split()), b.location) for b in doc.blocks]
    out: list[Mention] = []
    for kind, raw in candidates:
        text = " ".join(raw.split())
        if kind not in KINDS or not 2 <= len(text) <= 120:
            continue
        needle = text.casefold()
        where = next((loc for hay, loc in blocks if needle in hay), None)
        if where is None:
            continue
        key = normalised_key(kind, text)
        if key:
            out.append(Mention(kind=kind, key=key, text=text, location=where, detail="llm"))
    return out


def normalised_key(kind: EntityKind, text: str, region: str = "US") -> str | None:
    """The key a candidate of ``kind`` would have had from the patterns; ``None`` when it is not one."""
    if kind in ("person",):
        return fold(text) or None
    if kind == "organisation":
        return _without_legal_form(fold(text)) or None
    if kind == "identifier":  # an identifier as a person types it: any case, an IBAN with its spaces
        compact = "".join(text.split()).upper()
        if _ID_SHAPE.fullmatch(compact) and any(ch.isdigit() for ch in compact):
            return _valid_iban(compact) or compact
    here = Location()
    finder = {"email": _emails, "phone": _phones, "money": _money, "date": _dates, "identifier": _identifiers}[kind]
    found = list(finder(text, here, Known(), region))
    if found:
        return found[0][1].key
    return fold(text) if kind == "identifier" and any(ch.isdigit() for ch in text) else None


# ---------------------------------------------------------------------------------------------- per file


def file_entities(mentions: Iterable[Mention], known: Known | None = None) -> list[FileEntity]:
    """The mentions grouped into a file's entities, most mentioned first, each linked to its contact."""
    known = known or Known()
    grouped: dict[str, list[Mention]] = {}
    for m in mentions:
        grouped.setdefault(entity_id(m.kind, m.key), []).append(m)
    out: list[FileEntity] = []
    for eid, group in grouped.items():
        first = group[0]
        label = Counter(m.text for m in group).most_common(1)[0][0]
        out.append(
            FileEntity(
                entity_id=eid,
                kind=first.kind,
                label=label,
                mentions=len(group),
                location=first.location.label(),
                detail=next((m.detail for m in group if m.kind == "identifier" and m.detail), None),
                contact_id=known.contact_for(first.kind, first.key),
            )
        )
    out.sort(key=lambda e: (-e.mentions, KINDS.index(e.kind), e.entity_id))
    return out
