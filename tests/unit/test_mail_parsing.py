from __future__ import annotations

import pytest

from semfs.domain.ids import normalise_subject
from semfs.extractors.email import parse_mail, strip_quotes_and_signature
from tests import mail_corpus as mc

pytestmark = pytest.mark.unit


def names(raw: bytes) -> list[str]:
    return [a.filename for a in parse_mail(raw).attachments]


def test_plain_message_headers_and_attachment() -> None:
    mail = parse_mail(mc.plain().as_bytes())
    assert mail.subject == "Q3 Financials" and mail.message_id.startswith("<")
    assert mail.sender is not None and mail.sender.address == "jane.okafor@acme-corp.example"
    assert mail.sender.name == "Jane Okafor"
    assert [a.address for a in mail.participants] == [
        "jane.okafor@acme-corp.example",
        "files@northwind.example",
        "priya@northwind.example",
    ]
    assert [a.filename for a in mail.attachments] == ["payment-terms.md"]
    assert mail.body == "Hello,\n\nplease find the figures attached."  # signature dropped


def test_small_inline_images_are_skipped_but_inline_documents_kept() -> None:
    assert names(mc.alternative_with_inline_logo_and_pdf().as_bytes()) == ["policy.pdf"]


def test_attachments_of_nested_messages_are_found() -> None:
    assert "supply-agreement.docx" in names(mc.nested_forward().as_bytes())


def test_rfc2231_names_are_decoded() -> None:
    assert names(mc.rfc2231_name().as_bytes()) == ["Zahlungsbedingungen für Q3.md"]


def test_wrong_types_empty_parts_and_missing_names() -> None:
    got = names(mc.wrong_type_and_empty_and_nameless().as_bytes())
    assert got[:2] == ["policy.pdf", "empty.pdf"]
    assert got[2].startswith("bits-and-pieces-") and got[2].endswith(".csv")


def test_malformed_mail_keeps_the_parts_that_parse() -> None:
    mail = parse_mail(mc.malformed())
    assert "ok.md" in [a.filename for a in mail.attachments]
    assert mail.defects  # the missing closing boundary is reported, not raised


def test_header_bomb_is_cut_not_fatal() -> None:
    raw = b"Subject: x\r\n" + b"X-Filler: " + b"a" * 1_000_000 + b"\r\n\r\nbody"
    assert "headers exceed the size limit" in parse_mail(raw).defects


def test_reply_threading_headers() -> None:
    reply = mc.message(subject="Re: Q3 Financials", in_reply_to="<a@x>", references=["<root@x>", "<a@x>"])
    assert parse_mail(reply.as_bytes()).references == ["<root@x>", "<a@x>"]


@pytest.mark.parametrize(
    ("subject", "norm"),
    [("Re: AW: Fwd: Q3 Financials ", "q3 financials"), ("WG: RE: Budget", "budget"), ("Q3", "q3"), ("", "")],
)
def test_normalise_subject(subject: str, norm: str) -> None:
    assert normalise_subject(subject) == norm


def test_strip_quotes() -> None:
    text = "Agreed, 45 days.\n\nOn Mon, Jane wrote:\n> 30 days?\n> thanks"
    assert strip_quotes_and_signature(text) == "Agreed, 45 days."


def test_related_html_with_an_embedded_logo_has_no_documents() -> None:
    raw = mc.related_html_with_logo().as_bytes()
    assert b"multipart/related" in raw
    assert names(raw) == []


def test_inline_plain_and_html_only_bodies_are_the_body() -> None:
    """A text/plain part marked ``Content-Disposition: inline`` is the body; so is an HTML-only message's text."""
    inline = (
        b"From: a@example.com\r\nTo: b@example.com\r\nSubject: s\r\nContent-Type: text/plain\r\n"
        b"Content-Disposition: inline\r\n\r\nThe pallets ship on Monday.\r\n"
    )
    assert parse_mail(inline).body == "The pallets ship on Monday."
    html_only = (
        b"From: a@example.com\r\nTo: b@example.com\r\nSubject: s\r\nContent-Type: text/html\r\n\r\n"
        b"<html><body><p>Invoice <b>2291</b> is attached.</p><script>x()</script></body></html>\r\n"
    )
    assert parse_mail(html_only).body == "Invoice 2291 is attached."


def _outlook_newsletter(logo_bytes: int) -> bytes:
    """Shaped as extract-msg writes an Outlook message: multipart/mixed holding multipart/related (the bodies,
    then each attachment). Outlook's pictures are not 'hidden', so they say ``Content-Disposition: attachment``
    and keep their Content-ID, which the HTML body draws them by."""
    from email.message import EmailMessage
    from email.mime.multipart import MIMEMultipart
    from email.mime.text import MIMEText

    top = EmailMessage()
    top["From"], top["To"], top["Subject"] = "news@acme.example", "b@example.com", "October news"
    top["Content-Type"] = "multipart/mixed"
    related = MIMEMultipart("related")
    top.attach(related)
    bodies = MIMEMultipart("alternative")
    related.attach(bodies)
    bodies.attach(MIMEText("Our October news: the Lisbon office opens.", "plain"))
    pictures = "".join(f'<img src="cid:image00{i}.png@01DA2B">' for i in range(3))
    bodies.attach(MIMEText(f"<p>Our October news: the Lisbon office opens.</p>{pictures}", "html"))
    for i in range(3):
        image = EmailMessage()
        image.set_content(
            b"\x89PNG\r\n\x1a\n" + b"\x00" * logo_bytes, maintype="image", subtype="png", cid=f"<image00{i}.png@01DA2B>"
        )
        image["Content-Disposition"] = f'attachment; filename="image00{i}.png"'
        related.attach(image)
    report = EmailMessage()
    report.set_content(b"\x89PNG\r\n\x1a\n" + b"\x00" * 500, maintype="image", subtype="png", cid="<chart@01DA2B>")
    report["Content-Disposition"] = 'attachment; filename="chart.png"'
    related.attach(report)
    return top.as_bytes()


def test_pictures_an_outlook_body_draws_by_cid_are_no_documents() -> None:
    """An Outlook newsletter became 11 logo records (issue 29): its pictures say 'attachment'. A picture the HTML
    draws by its Content-ID is part of the body; one the body does not draw is still an attachment."""
    assert names(_outlook_newsletter(logo_bytes=800)) == ["chart.png"]
    large = parse_mail(_outlook_newsletter(logo_bytes=40_000)).attachments
    assert [(a.filename, a.inline) for a in large] == [
        ("image000.png", True),
        ("image001.png", True),
        ("image002.png", True),
        ("chart.png", False),
    ]


@pytest.mark.parametrize(
    ("declared", "body"),
    [
        ("gb2312", "你好，发票已付款，请查收附件中的收据。".encode()),  # says GB2312, is UTF-8
        ("gb2312", "你好，发票已付款，请查收附件中的收据。".encode("gb2312")),  # is what it says
        ("windows-1255", "שלום, החשבונית שולמה היום.".encode("cp1255")),  # Hebrew, declared
        ("x-unknown-charset", "Grüße aus Hamburg, die Rechnung ist bezahlt.".encode("cp1252")),  # unknown name
    ],
)
def test_a_mail_body_is_read_in_the_charset_its_bytes_are_in(declared: str, body: bytes) -> None:
    """Issue 53.3: a message declaring GB2312 whose body was UTF-8 was stored as mojibake; an unknown charset
    name was read as UTF-8 with replacement characters."""
    raw = (
        b"From: a@example.org\r\nTo: b@example.org\r\nSubject: paid\r\nMIME-Version: 1.0\r\n"
        b"Content-Type: text/plain; charset="
        + declared.encode()
        + b"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
        + body
        + b"\r\n"
    )
    text = parse_mail(raw).body
    expected = {"gb2312": "你好，发票已付款", "windows-1255": "שלום", "x-unknown-charset": "Grüße aus Hamburg"}[
        declared
    ]
    assert expected in text and "\ufffd" not in text, text
