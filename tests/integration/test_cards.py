"""Contact cards and calendars bring their people (issue 53.2): a .vcf's cards and an .ics's organisers and
attendees become the tenant's contacts and the file theirs, found by the contact filter as mail is."""

from __future__ import annotations

import pytest

from semfs.bootstrap import Container
from semfs.domain.models import SearchFilters, SearchRequest
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.query.search import search

pytestmark = pytest.mark.integration
T = "acme"
# vCard 2.1 with a quoted-printable UTF-8 name (as phones export them) and a 3.0 card
VCF = (
    "BEGIN:VCARD\r\nVERSION:2.1\r\nN:Nová;Jana;;;\r\nFN;CHARSET=UTF-8;ENCODING=QUOTED-PRINTABLE:Jana Nov=C3=A1\r\n"
    "EMAIL;INTERNET:jana@example.cz\r\nORG:Harbour Board\r\nEND:VCARD\r\n"
    "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:Antonín Dvořák\r\nEMAIL:anton@orchestra.example\r\nEND:VCARD\r\n"
).encode()
# folded lines (RFC 5545 §3.1) in the organiser and the description
ICS = (
    b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:quay-1\r\n"
    b"SUMMARY:Quay wall review\r\nDTSTART:20261210T100000Z\r\n"
    b"ORGANIZER;CN=Ines Silva:mailto:ines@po\r\n rt.example\r\n"
    b"ATTENDEE;CN=Jane Okafor;ROLE=REQ-PARTICIPANT:mailto:jane.okafor@acme-corp.example\r\n"
    b"DESCRIPTION:Bring the dredging permit HB-77\r\n 31 and the budget note.\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


def test_cards_and_calendars_make_their_people_contacts(container: Container) -> None:
    cards = ingest_bytes(container, T, VCF, "board.vcf").record
    meeting = ingest_bytes(container, T, ICS, "quay-review.ics").record
    assert cards.contact_ids == ["c_jana@example.cz", "c_anton@orchestra.example"]
    assert meeting.contact_ids == ["c_ines@port.example", "c_jane.okafor@acme-corp.example"]
    contacts = {x.contact_id: x for x in container.mail.contacts(T)}
    assert contacts["c_jana@example.cz"].name == "Jana Nová"  # quoted-printable undone
    assert contacts["c_ines@port.example"].name == "Ines Silva"  # the folded address rejoined
    request = SearchRequest(query="dredging permit", filters=SearchFilters(contact_id="c_ines@port.example"))
    assert [h.filename for h in search(container, T, request).results] == ["quay-review.ics"]
    folded = search(container, T, SearchRequest(query="HB-7731", mode="keyword")).results  # the fold rejoined
    assert [h.filename for h in folded] == ["quay-review.ics"]
