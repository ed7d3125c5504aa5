"""Every copy of a fixed vocabulary agrees with its one declaration (issue 48: entity kinds were written out
in four places, the page's outcome labels were checked by nothing, and its Source filter offered a source
type, `email_body`, that the API refuses). The Python side derives from ``domain/vocabulary.py`` and
``domain/outcomes.py``; the page cannot import them, so its copies are read here and compared."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import get_args

import pytest

from semfs.adapters.openai.client import ENRICH_SCHEMA
from semfs.api.models import FileFilters
from semfs.domain.outcomes import Outcome, Status
from semfs.domain.results import EntityInfo
from semfs.domain.vocabulary import ENTITY_KIND_LABELS, ENTITY_KINDS, SEARCH_MODES, SOURCE_TYPES

pytestmark = pytest.mark.unit
WEB = Path(__file__).resolve().parents[2] / "shared" / "semfs" / "web"
APP = "\n".join(p.read_text(encoding="utf-8") for p in sorted((WEB / "js").glob("*.js")))  # the page's modules


def js_object(name: str) -> dict[str, str]:
    """The string-to-string object literal ``const NAME = { a: "x", "b": "y", … };`` in the page's modules."""
    found = re.search(rf"const {name} = \{{(.*?)\}};", APP, re.DOTALL)
    assert found, f"the page's modules have no const {name} object"
    return dict(re.findall(r'"?([\w/.+-]+)"?\s*:\s*"([^"]*)"', found.group(1)))


class _Options(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.selects: dict[str, list[str]] = {}
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "select":
            self._in = a.get("id") or ""
            self.selects[self._in] = []
        elif tag == "option" and self._in is not None and a.get("value") is not None:
            self.selects[self._in].append(str(a["value"]))

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._in = None


def page_options() -> dict[str, list[str]]:
    parser = _Options()
    parser.feed((WEB / "index.html").read_text(encoding="utf-8"))
    return parser.selects


def test_entity_kinds_are_one_list_everywhere() -> None:
    assert get_args(EntityInfo.model_fields["kind"].annotation) == ENTITY_KINDS
    items = ENRICH_SCHEMA["schema"]["properties"]["entities"]["items"]
    assert items["properties"]["kind"]["enum"] == list(ENTITY_KINDS)  # what the LLM may answer
    assert js_object("KINDS") == ENTITY_KIND_LABELS  # the page's words for them
    assert [v for v in page_options()["e-kind"] if v] == list(ENTITY_KINDS)  # the Entities view's filter


def test_the_page_has_words_for_every_outcome_and_no_other() -> None:
    assert set(js_object("OUTCOMES")) == {o.value for o in Outcome}


def test_source_types_offered_are_the_ones_the_api_takes() -> None:
    literal, none = get_args(FileFilters.model_fields["source_type"].annotation)
    assert get_args(literal) == SOURCE_TYPES and none is type(None)
    assert set(js_object("SOURCES")) == set(SOURCE_TYPES)
    for select in ("d-source", "f-source", "a-source"):
        assert [v for v in page_options()[select] if v] == list(SOURCE_TYPES), select


def test_search_modes_offered_are_the_ones_the_api_takes() -> None:
    modes = re.search(r'<select id="mode">(.*?)</select>', (WEB / "index.html").read_text(encoding="utf-8"))
    assert modes and re.findall(r"<option>(\w+)</option>", modes.group(1)) == list(SEARCH_MODES)


def test_the_upload_stages_are_statuses() -> None:
    stages = re.search(r"const STAGES = \[(.*?)\];", APP)
    final = re.search(r"const FINAL = \[(.*?)\];", APP)
    assert stages and final
    statuses = {s.value for s in Status}
    assert set(re.findall(r'"(\w+)"', stages.group(1))) <= statuses
    assert set(re.findall(r'"(\w+)"', final.group(1))) <= statuses


def test_the_page_names_every_format_as_the_registry_does() -> None:
    """One format registry (``extractors/formats.py``): the page's type names are its labels, for every MIME
    type semfs stores and no other."""
    from semfs.extractors.formats import FORMATS

    assert js_object("TYPES") == {f.mime: f.label for f in FORMATS}


def test_every_text_format_has_its_parser_and_every_kind_a_reader() -> None:
    from semfs.extractors import text
    from semfs.extractors.dispatch import READERS
    from semfs.extractors.formats import FORMATS

    for f in FORMATS:
        if f.reader == "text":
            assert callable(getattr(text, f.parser, None)), f
        else:
            assert f.reader in READERS or f.reader == "compressed", f
