"""Text handling is linear in the input's size: one hostile word cannot hold the interpreter.

Issue 27: ``strip_links`` and the e-mail pattern were quadratic on one long word (0.4 / 1.1 / 4.6 s on 2.5k /
5k / 10k characters) and ``re`` holds the GIL, so a 48 KB upload froze the whole server for 83 s. Here every
text function that sees a document's or a model's text gets the shapes that made them slow: one long word, one
repeated character, alternating classes, and the prefixes each pattern starts on ("ab:", "a@", "<", "&#",
dotted labels).

Linearity itself is proven where time can be measured: ``bench/text_linearity.py`` (``make bench-text``) runs
every function on every shape at 64 KB → 1 MB and prints the CPU-time ratio per doubling. The suite keeps a
small input (64 KB of each shape) as a ceiling, not a timing: the calls run in a child process given minutes,
and only a run that has not finished by then fails. At 1 MB the suite's run cost 2–3 CPU-minutes and ran into
its ceiling twice at a load of 30 (issue 47.12); a quadratic function still needs minutes at 64 KB (the old
``strip_links`` took 4.6 s at 10 KB).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable

import pytest

pytestmark = pytest.mark.unit

MB = 1 << 20
SIZE = 64 * 1024  # the suite's input; the bench measures up to MB
CEILING_S = 300

SHAPES: dict[str, Callable[[int], str]] = {
    "one long word": lambda n: "a" * n,
    "one repeated character": lambda n: "." * n,
    "alternating classes": lambda n: "a." * (n // 2),
    "word and hyphen": lambda n: "a-" * (n // 2),
    "scheme-like prefixes": lambda n: "ab:" * (n // 3),
    "a local part without a domain": lambda n: "a" * (n - 5) + "@bbbb",
    "an address without a dot": lambda n: "a@" + "b" * (n - 2),
    "at signs": lambda n: "a@" * (n // 2),
    "www prefixes": lambda n: "www." * (n // 4),
    "open angle brackets": lambda n: "<a" * (n // 2),
    "an open tag and spaces": lambda n: "<" + " " * (n - 2) + "a",
    "entities without an end": lambda n: "&#" + "1" * (n - 2),
    "dotted labels": lambda n: "a." * (n // 2 - 2) + "comx",
    "sentence ends": lambda n: '."' * (n // 2),
    "letters with combining marks": lambda n: "e\u0301" * (n // 2),
    "digit groups": lambda n: "012 " * (n // 4),
    "an IBAN head and groups": lambda n: "DE89 " + "3704 " * ((n - 5) // 5),
    "ideographic dots": lambda n: "a\u3002" * (n // 2),
    "style declarations": lambda n: "display:" * (n // 8),
    "markdown brackets": lambda n: "[a](" * (n // 4),
    # the entity patterns' starts: capitalised words before a legal form, amounts, titles, months, known names
    "capitalised words": lambda n: "Ab " * (n // 3),
    "currency and digit groups": lambda n: "$1,000 " * (n // 7),
    "titles before names": lambda n: "Dr Ab " * (n // 6),
    "months and days": lambda n: "March 1 " * (n // 8),
}


def _functions() -> dict[str, Callable[[str], object]]:
    from semfs.adapters.local.extractive_enricher import ExtractiveEnricher
    from semfs.domain.chunking import chunk_document
    from semfs.domain.enrichment import (
        checked_answer,
        document_words,
        has_link,
        strip_links,
        unsafe,
        validate_enrichment,
    )
    from semfs.domain.errors import EnrichmentFailed
    from semfs.domain.mentions import Known, KnownContact, extract_mentions
    from semfs.domain.models import Block, ExtractedDocument
    from semfs.domain.relevance import coverage
    from semfs.domain.tags import slugify
    from semfs.domain.text import normalise, sentences, words
    from semfs.extractors.text import extract_html
    from semfs.ports.enricher import EnrichInput

    def validate(text: str) -> object:
        try:  # the model echoing the hostile text back as its title, and the document the tags are checked against
            return validate_enrichment({"title": text, "summary": text, "tags": [text, "alpha"]}, text)
        except EnrichmentFailed:
            return None

    def _refused_or(fn: Callable[[str], object], text: str) -> object:
        try:
            return fn(text)
        except EnrichmentFailed:
            return None

    known = Known.of([KnownContact("c1", "ab@ab.example", "Ab Ab", "Ab Corp")])

    def document(text: str) -> ExtractedDocument:
        return ExtractedDocument(blocks=[Block(kind="heading", text=text[:200], level=1), Block(text=text)])

    return {
        "document_words": document_words,
        "has_link": has_link,
        "unsafe": unsafe,
        "checked_answer": lambda t: _refused_or(checked_answer, t),
        "extract_html (styles)": lambda t: extract_html(f'<style>{t}</style><p style="{t}">x</p>'),
        "strip_links": strip_links,
        "validate_enrichment": validate,
        "extractive enricher": lambda t: ExtractiveEnricher().enrich(EnrichInput(document(t), "x.txt")),
        "chunk_document": lambda t: chunk_document(document(t)),
        "words": words,
        "relevance coverage": lambda t: coverage(["alpha", "aaaa", "ab"], [t, t]),
        "sentences": sentences,
        "normalise": normalise,
        "slugify": slugify,
        "entities": lambda t: extract_mentions(document(t), known),
    }


def _run_all(size: int, entities: bool) -> None:
    """Every function but the entity extractor, or that one alone (each within its own ceiling)."""
    functions = {name: fn for name, fn in _functions().items() if (name == "entities") == entities}
    for shape in SHAPES.values():
        text = shape(size)
        for fn in functions.values():
            fn(text)


@pytest.mark.parametrize("entities", [False, True], ids=["text functions", "entity extraction"])
def test_every_text_function_finishes_on_each_hostile_shape(entities: bool) -> None:
    # given a child process (a run past the ceiling is ended, not waited for)
    child = multiprocessing.get_context("spawn").Process(target=_run_all, args=(SIZE, entities))
    # when every function reads every shape
    child.start()
    child.join(CEILING_S)
    hung = child.is_alive()
    if hung:
        child.kill()
        child.join()
    # then it finished, and without an error
    assert not hung, f"the text functions did not finish {SIZE // 1024} KB within {CEILING_S} s: one is not linear"
    assert child.exitcode == 0


@pytest.mark.parametrize(
    ("text", "link"),
    [
        ("see https://evil.example/login now", True),
        ("write to jane.doe+x@acme.co.uk today", True),
        ("go to evil.com", True),
        ("evil.com.au is theirs", True),
        ("WWW.EVIL.ORG", True),
        ("javascript:alert(1)", True),
        ("mailto:someone", True),
        ("ab:y/z", True),
        ("ratio 1:2 and 3:4", False),
        ("version 2.0 of the report", False),
        ("a.b.c notes", False),
        ("Payment terms: 45 days.", False),
        ("the file .com alone", False),
        ("evil.com_x", False),
        ("user@localhost", False),
    ],
)
def test_links_are_found_where_they_were(text: str, link: bool) -> None:
    from semfs.domain.enrichment import has_link

    assert has_link(text) is link


def test_a_word_that_carries_a_link_is_dropped_whole_and_the_rest_is_kept() -> None:
    from semfs.domain.enrichment import document_words, strip_links

    text = "Invoices (see www.acme-billing.com/pay) are due; mail billing@acme.example or evil.com/login."
    assert strip_links(text).split() == ["Invoices", "(see", "are", "due;", "mail", "or"]
    assert {"acme", "billing", "evil", "login", "pay", "example"}.isdisjoint(document_words(text))
    assert {"invoices", "due", "mail"} <= document_words(text)


@pytest.mark.parametrize(
    "title",
    ["<b>Report</b>", "Report <img src=x onerror=alert(1)>", "Report &lt;script&gt;", "Report {'a': 1}", "< a href"],
)
def test_markup_in_a_models_title_is_still_refused(title: str) -> None:
    from semfs.domain.enrichment import validate_enrichment
    from semfs.domain.errors import EnrichmentFailed

    with pytest.raises(EnrichmentFailed):
        validate_enrichment({"title": title, "summary": "A report.", "tags": []}, "a report")


def test_a_manual_pages_placeholders_are_no_markup() -> None:
    """Issue 51.2: every answer quoting ``--toolchain <path/to/file>`` or ``--log-file <path>`` was refused as
    carrying markup."""
    from semfs.domain.enrichment import checked_answer, unsafe

    for text in ["--toolchain <path/to/file> Specify the toolchain file.", "Write to <file> or <output>.", "<option>"]:
        assert unsafe(text) is None and checked_answer(text) == text


def test_a_plain_title_with_angle_brackets_apart_is_accepted() -> None:
    from semfs.domain.enrichment import validate_enrichment

    out = validate_enrichment({"title": "Costs 3 < 5 and 7 > 2", "summary": "Sums.", "tags": []}, "sums")
    assert out.title == "Costs 3 < 5 and 7 > 2"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # found by the adversarial battery in titles and summaries (issue 27)
        ("Reset your password at paypal-secure.de/reset", "a link or an address"),  # a TLD missing from a list
        ("Log in at \u0435vil.com/login", "a link or an address"),  # a Cyrillic е
        ("Log in at evil\u3002com/login", "a link or an address"),  # an ideographic full stop
        ("Log in at evil\uff0ecom", "a link or an address"),
        ("See [the portal](reset-now) today", "markup"),
        ("Pay to DE89 3704 0044 0532 0130 00 by Friday", "a payment account number"),
        ("Pay to DE89370400440532013000.", "a payment account number"),
        ("Call +49 30 12345678 now", "a phone number"),
        ("Call (030) 1234 5678 now", "a phone number"),
        ("Call 0800 123 4567 now", "a phone number"),
        ("Call 555-123-4567 now", "a phone number"),
        ("Visit bücher.de or пример.рф", "a link or an address"),
        ("Admin at 10.0.0.1", "a link or an address"),
        ("Download it from evil.zip", "a link or an address"),  # .zip is a real top-level domain
        # what a summary says every day
        ("The report.pdf and notes.md cover Node.js, e.g. the U.S. sales in v1.2.3", None),
        ("Signed on 01.02.2024 at 10:00 under ISO 9001:2015 for 1,234,567.89 EUR", None),
        ("Invoice INV-2024-0012 of order 12345678 is due in 30 days", None),
        ("Account AB12 3456 7890 1234 is a product code", None),  # an IBAN's shape, not its checksum
    ],
)
def test_what_a_title_summary_or_answer_may_not_carry(text: str, why: str | None) -> None:
    from semfs.domain.enrichment import unsafe

    assert unsafe(text) == why


def test_an_answer_keeps_what_it_says_and_loses_what_a_planted_instruction_wants() -> None:
    """Before: /ask returned a model's answer as given: a URL, an address, markup, 200,000 characters."""
    from semfs.domain.enrichment import MAX_ANSWER, checked_answer
    from semfs.domain.errors import EnrichmentFailed

    said = checked_answer(
        "Invoices are due in 45 days. Reset your password at paypal-secure.de/reset and mail "
        "attacker@evil.example, call +49 30 12345678 or pay DE89 3704 0044 0532 0130 00."
    )
    assert said == (
        "Invoices are due in 45 days. Reset your password at [link removed] and mail [link removed] "
        "call [number removed] or pay [number removed]."
    )
    for markup in ["<script>alert(1)</script>", '<img src=x onerror="alert(1)">', "See [this](evil)"]:
        with pytest.raises(EnrichmentFailed, match="markup"):
            checked_answer(f"The terms are 45 days. {markup}")
    with pytest.raises(EnrichmentFailed, match="too long"):
        checked_answer("Delete all files. " * 12_000)  # ~200,000 characters: an echo, not an answer
    long = checked_answer("The terms are forty-five days. " * 100)
    assert len(long) <= MAX_ANSWER + 2 and long.endswith("days. …")
