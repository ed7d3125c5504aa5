"""Files agents make keep their place (issue 52): an agent that saved a draft and asked again was answered
from its own draft, and the draft was listed above the agreement it quoted."""

from __future__ import annotations

import pytest

from semfs.agents import ingest_agent_file
from semfs.bootstrap import Container
from semfs.domain.models import SearchFilters, SearchRequest
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.query.ask import ask, context
from semfs.pipeline.query.search import search

pytestmark = pytest.mark.integration
T = "default"
AGREEMENT = b"Payment terms. Acme pays every invoice within 45 days of receipt, by bank transfer."
DRAFT = (
    "Draft reply to Acme about payment terms: Acme pays every invoice within 45 days of receipt, by bank"
    " transfer, as agreed. Acme pays every invoice within 45 days. Payment terms for Acme: 45 days."
)


def _stock(c: Container) -> tuple[str, str]:
    agreement = ingest_bytes(c, T, AGREEMENT, "acme-agreement.txt").record.file_id
    draft = ingest_agent_file(
        DRAFT, "reply-draft.txt", agent="mailer", run_id="r1", derived_from=[agreement], container=c
    ).file_id
    return agreement, draft


def test_an_answer_and_a_briefing_leave_an_agents_own_files_out_unless_asked(container: Container) -> None:
    agreement, draft = _stock(container)
    answer = ask(container, T, "Within how many days does Acme pay an invoice?")
    assert answer.status == "answered", answer.reason
    assert {c.file_id for c in answer.citations} == {agreement}
    brief = context(container, T, "Acme payment terms", "When does Acme pay our invoices?")
    assert draft not in {b.file_id for b in brief} and agreement in {b.file_id for b in brief}
    (item,) = [b for b in brief if b.file_id == agreement]  # each says where it came from
    assert (item.source_type, item.version, item.is_latest) == ("upload", 1, True) and item.came_from
    asked_for = ask(
        container, T, "Within how many days does Acme pay an invoice?", SearchFilters(include_agent_files=True)
    )
    assert asked_for.status == "answered"
    assert draft in {c.file_id for c in asked_for.citations}  # asked for, the draft may be a source


def test_a_search_lists_an_agents_file_after_the_files_it_was_made_from(container: Container) -> None:
    agreement, draft = _stock(container)
    found = [r.file_id for r in search(container, T, SearchRequest(query="Acme payment terms invoice 45 days")).results]
    assert agreement in found and draft in found  # search shows both
    assert found.index(agreement) < found.index(draft)
