"""``strip_links`` skips the shape checks for words with no ``.``, ``:``, ``@`` or IDNA dot (issue 47.11: they
were half of the extractive enricher's time on prose). The shortcut must never let a link through: every
word the full checks call a link carries one of those marks, on words nobody here wrote (the shared
fixtures' text, when they lie beside the checkout) and on link shapes built to slip past."""

from __future__ import annotations

import re
from itertools import product
from pathlib import Path

import pytest

from semfs.domain.enrichment import _LINK_MARK, _link_shape, strip_links

pytestmark = pytest.mark.unit

FIXTURES = Path(__file__).resolve().parents[3] / "shared" / "fixtures"
IDNA_DOTS = "\u3002\uff0e\uff61\u2024\ufe52"


def _built() -> list[str]:
    hosts = [f"evil{dot}com" for dot in "." + IDNA_DOTS] + ["пример.рф", "xn--80ak6aa92e.com", "a.io/x", "10.0.0.1"]
    wrapped = [f"{a}{h}{b}" for h, (a, b) in product(hosts, [("", ""), ("(", ")"), ("<", ">"), ("'", "',")])]
    return [
        *wrapped,
        "https://example.com",
        "javascript:alert(1)",
        "data:text/html,x",
        "evil:x/y?z=1",
        "jane@example.org",
        "www.example",
        "mailto:jane",
        "host:8080/path",
    ]


def _fixture_words() -> list[str]:
    if not FIXTURES.is_dir():
        return []
    words: list[str] = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix.lower() in {".md", ".txt", ".html", ".htm", ".json", ".csv", ".xml"} and path.is_file():
            words += re.findall(r"\S+", path.read_text(encoding="utf-8", errors="replace")[:200_000])
    return words


def test_every_word_the_full_checks_call_a_link_carries_a_mark() -> None:
    built = _built()
    assert all(_link_shape(w) for w in built), [w for w in built if not _link_shape(w)]
    words = [*built, *_fixture_words()]
    links = [w for w in words if _link_shape(w)]
    assert [w for w in links if _LINK_MARK.search(w) is None] == []
    assert all(strip_links(f"see {w} now") == "see   now" for w in built)


def test_prose_without_marks_is_kept_word_for_word() -> None:
    prose = "Parking permits are renewed every January (at the front desk) — ask Jane’s team, not HR"
    assert strip_links(prose) == prose
