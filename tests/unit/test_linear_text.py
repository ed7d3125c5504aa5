"""Text handling is linear in the input's size: one hostile word cannot hold the interpreter.

Issue 27: ``strip_links`` and the e-mail pattern were quadratic on one long word (0.4 / 1.1 / 4.6 s on 2.5k /
5k / 10k characters) and ``re`` holds the GIL, so a 48 KB upload froze the whole server for 83 s. Here every
text function that sees a document's or a model's text gets 1 MB of the shapes that made them slow: one long
word, one repeated character, alternating classes, and the prefixes each pattern starts on ("ab:", "a@", "<",
"&#", dotted labels). At the old speed 1 MB would take about 13 hours; linear, all of it takes seconds.

The check is a ceiling, not a timing: the calls run in a child process that is given minutes (a loaded CI
machine is slow, but not a thousand times slower), and only a run that has not finished by then fails. The
growth per doubling is measured by ``bench/text_linearity.py``.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable

import pytest

pytestmark = pytest.mark.unit

MB = 1 << 20
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
}


def _functions() -> dict[str, Callable[[str], object]]:
    from semfs.adapters.local.extractive_enricher import ExtractiveEnricher
    from semfs.domain.chunking import chunk_document
    from semfs.domain.enrichment import document_words, has_link, strip_links, validate_enrichment
    from semfs.domain.errors import EnrichmentFailed
    from semfs.domain.models import Block, ExtractedDocument
    from semfs.domain.tags import slugify
    from semfs.domain.text import normalise, sentences, words
    from semfs.ports.enricher import EnrichInput

    def validate(text: str) -> object:
        try:  # the model echoing the hostile text back as its title, and the document the tags are checked against
            return validate_enrichment({"title": text, "summary": text, "tags": [text, "alpha"]}, text)
        except EnrichmentFailed:
            return None

    def document(text: str) -> ExtractedDocument:
        return ExtractedDocument(blocks=[Block(kind="heading", text=text[:200], level=1), Block(text=text)])

    return {
        "document_words": document_words,
        "has_link": has_link,
        "strip_links": strip_links,
        "validate_enrichment": validate,
        "extractive enricher": lambda t: ExtractiveEnricher().enrich(EnrichInput(document(t), "x.txt")),
        "chunk_document": lambda t: chunk_document(document(t)),
        "words": words,
        "sentences": sentences,
        "normalise": normalise,
        "slugify": slugify,
    }


def _run_all(size: int) -> None:
    functions = _functions()
    for shape in SHAPES.values():
        text = shape(size)
        for fn in functions.values():
            fn(text)


def test_every_text_function_finishes_on_a_megabyte_of_each_hostile_shape() -> None:
    # given a child process (a run past the ceiling is ended, not waited for)
    child = multiprocessing.get_context("spawn").Process(target=_run_all, args=(MB,))
    # when every function reads every shape
    child.start()
    child.join(CEILING_S)
    hung = child.is_alive()
    if hung:
        child.kill()
        child.join()
    # then it finished, and without an error
    assert not hung, f"the text functions did not finish 1 MB inputs within {CEILING_S} s: one is not linear"
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


def test_a_plain_title_with_angle_brackets_apart_is_accepted() -> None:
    from semfs.domain.enrichment import validate_enrichment

    out = validate_enrichment({"title": "Costs 3 < 5 and 7 > 2", "summary": "Sums.", "tags": []}, "sums")
    assert out.title == "Costs 3 < 5 and 7 > 2"
