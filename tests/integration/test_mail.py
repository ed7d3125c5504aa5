"""Mail → files on the local backend: threads, contacts, context tags, versions, idempotency, SMTP."""

from __future__ import annotations

import smtplib
import socket
from pathlib import Path

import pytest

from semfs.bootstrap import Container, build_container
from semfs.domain.models import SearchFilters, SearchRequest
from semfs.domain.outcomes import Outcome
from semfs.pipeline.intake.mail import ingest_mail
from semfs.pipeline.intake.register import Registered
from semfs.pipeline.query.search import search
from tests import mail_corpus as mc
from tests.conftest import make_settings
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration
T = "acme"


def attached(files: list[Registered]) -> list[Registered]:
    """The files a message's attachments became (its body is a file of its own, last: ``…:-1``)."""
    return [r for r in files if not r.record.source_key.endswith(":-1")]


def body_of(files: list[Registered]) -> Registered:
    (body,) = [r for r in files if r.record.source_key.endswith(":-1")]
    return body


@pytest.fixture
def mail_container(tmp_path: Path, shared_extractor: object) -> Container:
    settings = make_settings(tmp_path, mailboxes=f"{mc.OWN}=acme")
    return build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]


def test_attachment_carries_the_message_provenance_and_context_tags(mail_container: Container) -> None:
    result = ingest_mail(mail_container, T, mc.plain().as_bytes())
    (reg,) = attached(result.files)
    r = reg.record
    assert (r.outcome, r.source_type) == (Outcome.OK, "email_attachment")
    assert r.source_message_id == result.message_id and r.thread_id == result.thread_id
    assert r.provenance["sender"] == "jane.okafor@acme-corp.example"
    assert r.provenance["subject"] == "Q3 Financials" and r.provenance["received_at"].startswith("2026-11-30")
    assert r.upload_context and "Q3 Financials" in r.upload_context
    assert r.contact_ids == ["c_jane.okafor@acme-corp.example", "c_priya@northwind.example"]
    assert {"q3-financials", "acme-corp"} <= set(r.auto_tags)
    hits = search(
        mail_container,
        T,
        SearchRequest(
            query="payable",
            filters=SearchFilters(
                thread_id=result.thread_id, contact_id="c_jane.okafor@acme-corp.example", source_type="email_attachment"
            ),
        ),
    )
    assert [h.file_id for h in hits.results] == [r.file_id]


def test_own_mailboxes_are_not_contacts(mail_container: Container) -> None:
    ingest_mail(mail_container, T, mc.plain().as_bytes())
    emails = {c.email: c for c in mail_container.mail.contacts(T)}
    assert set(emails) == {"jane.okafor@acme-corp.example", "priya@northwind.example"}
    assert emails["jane.okafor@acme-corp.example"].name == "Jane Okafor"
    assert emails["jane.okafor@acme-corp.example"].organisation == "acme-corp"


def test_a_reply_chain_is_one_thread_and_a_resent_attachment_is_a_new_version(mail_container: Container) -> None:
    first = mc.message(msgid="<root@acme-corp.example>")
    first.add_attachment(mc.TERMS, maintype="text", subtype="markdown", filename="terms.md")
    second = mc.message(
        subject="RE: Q3 Financials",
        sender=mc.PRIYA,
        to=mc.JANE,
        cc=mc.OWN,
        msgid="<r1@northwind.example>",
        in_reply_to="<root@acme-corp.example>",
        references=["<root@acme-corp.example>"],
        body="Looks good.\n\nOn Monday Jane wrote:\n> hi",
    )
    third = mc.message(
        subject="Re: Re: Q3 Financials",
        msgid="<r2@acme-corp.example>",
        in_reply_to="<r1@northwind.example>",
        references=["<root@acme-corp.example>", "<r1@northwind.example>"],
    )
    third.add_attachment(
        mc.TERMS + b"\n\nLate payments accrue interest.", maintype="text", subtype="markdown", filename="terms.md"
    )
    results = [ingest_mail(mail_container, T, m.as_bytes()) for m in (first, second, third)]
    assert len({r.thread_id for r in results}) == 1
    thread = mail_container.mail.thread(T, results[0].thread_id or "")
    assert thread is not None and thread.subject == "Q3 Financials" and thread.messages == 3
    v1, v2 = results[0].files[0].record, results[2].files[0].record
    assert (v2.version, v2.lineage_id, v2.previous_version_id) == (2, v1.lineage_id, v1.file_id)
    assert v2.change_summary and "Late payments" in v2.change_summary


def test_subject_fallback_threads_replies_without_references(mail_container: Container) -> None:
    a = ingest_mail(mail_container, T, mc.message(msgid="<a@x.example>").as_bytes())
    b = ingest_mail(mail_container, T, mc.message(subject="AW: Q3 Financials", msgid="<b@x.example>").as_bytes())
    other_people = mc.message(
        subject="Re: Q3 Financials", sender="Bob <bob@globex.example>", cc=None, msgid="<c@x.example>"
    )
    c = ingest_mail(mail_container, T, other_people.as_bytes())
    assert a.thread_id == b.thread_id != c.thread_id


def test_duplicate_delivery_and_identical_bytes_in_two_messages(mail_container: Container) -> None:
    msg = mc.plain()
    first = ingest_mail(mail_container, T, msg.as_bytes())
    again = ingest_mail(mail_container, T, msg.as_bytes())
    assert [r.created for r in again.files] == [False]  # ("please find the figures attached": no document)
    assert again.files[0].record.file_id == first.files[0].record.file_id
    # the redelivered message is counted once for everyone on it
    assert {c.email: c.messages for c in mail_container.mail.contacts(T)} == {
        "jane.okafor@acme-corp.example": 1,
        "priya@northwind.example": 1,
    }
    other = mc.message(subject="Fwd: terms")
    other.add_attachment(mc.TERMS, maintype="text", subtype="markdown", filename="payment-terms.md")
    dup = ingest_mail(mail_container, T, other.as_bytes()).files[0].record
    assert dup.outcome is Outcome.SKIPPED_DUPLICATE and dup.duplicate_of == first.files[0].record.file_id
    assert dup.blob_key == first.files[0].record.blob_key
    stored = {r.record.blob_key for m in (first, again) for r in m.files}
    assert {k for k, _ in mail_container.blobs.list(f"content/{T}/")} == stored  # the attachment's bytes once


def test_every_kind_of_part_ends_in_its_outcome(mail_container: Container) -> None:
    outcomes = {
        r.record.filename: r.record.outcome
        for r in attached(ingest_mail(mail_container, T, mc.wrong_type_and_empty_and_nameless().as_bytes()).files)
    }
    assert outcomes["policy.pdf"] is Outcome.OK  # declared octet-stream, sniffed as PDF
    assert outcomes["empty.pdf"] is Outcome.SKIPPED_EMPTY
    assert sorted(o.value for o in outcomes.values()) == ["OK", "OK", "SKIPPED_EMPTY"]
    nested = ingest_mail(mail_container, T, mc.nested_forward().as_bytes()).files
    assert "supply-agreement.docx" in {r.record.filename for r in nested}
    broken = ingest_mail(mail_container, T, mc.malformed()).files
    assert {r.record.filename: r.record.outcome for r in broken}["ok.md"] is Outcome.OK


def test_spam_or_virus_fail_skips_the_whole_message(mail_container: Container) -> None:
    result = ingest_mail(mail_container, T, mc.plain().as_bytes(), verdicts={"spam": "FAIL", "virus": "PASS"})
    (reg,) = result.files
    assert reg.record.outcome is Outcome.SKIPPED_EMAIL_VERDICT and "spam" in (reg.record.error or "")
    assert mail_container.index.file_ids(T) == set()


def test_a_message_body_is_a_document_of_its_thread(mail_container: Container, tmp_path: Path) -> None:
    """Before, bodies were indexed only when asked (SEMFS_INDEX_EMAIL_BODY=false): a message with no
    attachment became nothing. Now the body is a document of the thread by default (quotes and signature
    stripped); the setting turns it off."""
    msg = mc.message(body="The board approved the second Rotterdam shift.\n\n> old quoted text\n-- \nsig")
    result = ingest_mail(mail_container, T, msg.as_bytes())
    body = body_of(result.files).record
    assert (body.filename, body.outcome, body.thread_id) == ("q3 financials.txt", Outcome.OK, result.thread_id)
    assert body.upload_context and body.upload_context.startswith("the body of the email")
    hits = search(mail_container, T, SearchRequest(query="Rotterdam shift", mode="keyword")).results
    assert [h.file_id for h in hits] == [body.file_id]
    assert not search(mail_container, T, SearchRequest(query="quoted", mode="keyword")).results
    # beside attachments, a body that says something is a document too; "please find … attached" is not
    said = mc.message(subject="Rotterdam", body="The Rotterdam depot closes at noon on Friday; plan pickups before.")
    said.add_attachment(mc.TERMS, maintype="text", subtype="markdown", filename="payment-terms.md")
    assert len(ingest_mail(mail_container, T, said.as_bytes()).files) == 2
    assert len(ingest_mail(mail_container, T, mc.plain().as_bytes()).files) == 1
    off = build_container(make_settings(tmp_path / "off", index_email_body=False))
    assert ingest_mail(off, T, msg.as_bytes()).files == []


def test_an_empty_plain_part_does_not_hide_the_html_body_nor_a_nul_make_it_binary() -> None:
    from email.message import EmailMessage

    from semfs.extractors.email import parse_mail

    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "jane@acme.example", mc.OWN, "Rotterdam"
    msg.set_content("  \n")  # an empty text/plain beside the HTML (some mailers send one)
    msg.add_alternative("<p>The second <b>Rotterdam</b> shift starts in May.</p>", subtype="html")
    assert parse_mail(msg.as_bytes()).body == "The second Rotterdam shift starts in May."
    plain = mc.message(body="Pallets leave at six.\x00")
    assert parse_mail(plain.as_bytes()).body == "Pallets leave at six."


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_smtp_round_trip_and_unknown_recipients_are_refused(mail_container: Container) -> None:
    from semfs.server import start_smtp

    port = _free_port()
    controller = start_smtp(mail_container, "127.0.0.1", port)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=CEILING_S) as smtp:
            with pytest.raises(smtplib.SMTPRecipientsRefused):
                smtp.sendmail("jane.okafor@acme-corp.example", ["nobody@northwind.example"], mc.plain().as_bytes())
            smtp.sendmail("jane.okafor@acme-corp.example", [mc.OWN], mc.plain().as_bytes())
    finally:
        controller.stop()
    hits = search(mail_container, T, SearchRequest(query="payable thirty days")).results
    terms = [h for h in hits if h.filename == "payment-terms.md"]  # (the message's body is found too)
    assert len(terms) == 1 and {"q3-financials", "acme-corp"} <= set(terms[0].tags)
    assert terms[0].source_type == "email_attachment"


def test_smtp_delivers_to_every_tenant_and_refuses_poison_for_good(tmp_path: Path, shared_extractor: object) -> None:
    from semfs.server import start_smtp

    settings = make_settings(tmp_path, mailboxes=f"{mc.OWN}=acme,docs@globex.example=globex")
    c = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    port = _free_port()
    controller = start_smtp(c, "127.0.0.1", port)
    nested = "Content-Type: multipart/mixed; boundary=b0\r\n\r\n"
    for depth in range(1, 2000):
        nested += f"--b{depth - 1}\r\nContent-Type: multipart/mixed; boundary=b{depth}\r\n\r\n"
    poison = ("From: x@y.example\r\nTo: files@northwind.example\r\nSubject: deep\r\n" + nested).encode()
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=CEILING_S) as smtp:
            smtp.sendmail("jane.okafor@acme-corp.example", [mc.OWN, "docs@globex.example"], mc.plain().as_bytes())
            # 2,000 nested multiparts: accepted and stored with its outcome (not 451 "try again" forever)
            smtp.sendmail("x@y.example", [mc.OWN], poison)
    finally:
        controller.stop()
    for tenant in ("acme", "globex"):  # one message, both mailboxes: delivered to each
        found = search(c, tenant, SearchRequest(query="payable thirty days")).results
        assert [h.filename for h in found].count("payment-terms.md") == 1, tenant
    from semfs.ports.repository import RecordQuery

    stored = c.repo.query(RecordQuery(tenant_id="acme", limit=50))
    assert any(r.outcome is Outcome.FAILED_PARSE and r.filename == "message.eml" for r in stored)


def test_smtp_to_a_tenant_whose_queue_is_full_is_451_and_the_retry_is_delivered(
    tmp_path: Path, shared_extractor: object
) -> None:
    """A full queue is back-pressure, not a bad message: the sender keeps it and tries again (451), where
    the handler's catch-all would have refused it for good (554)."""
    from semfs.server import start_smtp

    settings = make_settings(tmp_path, mailboxes=f"{mc.OWN}=acme", tenant_max_queued=1)
    c = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    c.jobs.enqueue("waiting", "acme", "f-waiting", {})  # the tenant's one queued file
    port = _free_port()
    controller = start_smtp(c, "127.0.0.1", port)
    try:
        with smtplib.SMTP("127.0.0.1", port, timeout=CEILING_S) as smtp:
            with pytest.raises(smtplib.SMTPDataError) as refused:
                smtp.sendmail("jane.okafor@acme-corp.example", [mc.OWN], mc.plain().as_bytes())
            assert refused.value.smtp_code == 451
            c.jobs.cancel("acme", "f-waiting")  # the queue drains
            smtp.sendmail("jane.okafor@acme-corp.example", [mc.OWN], mc.plain().as_bytes())
    finally:
        controller.stop()
    found = search(c, "acme", SearchRequest(query="payable thirty days")).results
    assert [h.filename for h in found].count("payment-terms.md") == 1


def test_a_short_body_stays_with_the_attachments_it_came_with(mail_container: Container) -> None:
    """Issue 53.7: beside attachments, a body under 8 words was dropped, so "who asked for what" was lost
    (held-out body recall 0.906 -> 0.837). It is no document of its own still, but the attachments' cards
    carry it, and search finds them by it."""
    from email.message import EmailMessage

    m = EmailMessage()
    m["From"] = "Hans Becker <hans@northwind.example>"
    m["To"] = "ap@acme.example"
    m["Subject"] = "Invoice 2291"
    m["Message-ID"] = "<short-body@northwind.example>"
    m.set_content("Please pay by Friday, Hamburg.")
    m.add_attachment(b"Invoice 2291: twelve pallets of tiles, 4,200 EUR.", "text", "plain", filename="inv-2291.txt")
    result = ingest_mail(mail_container, T, bytes(m))
    assert [f.record.filename for f in result.files] == ["inv-2291.txt"]  # no body document
    found = search(mail_container, T, SearchRequest(query="pay by Friday Hamburg", mode="keyword")).results
    assert [r.filename for r in found] == ["inv-2291.txt"]
