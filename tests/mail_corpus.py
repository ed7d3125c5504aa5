"""A corpus of .eml messages built with the stdlib ``email`` package, one per case the mail path handles."""

from __future__ import annotations

from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid

from semfs import demo

OWN = "files@northwind.example"
JANE = "Jane Okafor <jane.okafor@acme-corp.example>"
PRIYA = "Priya Nair <priya@northwind.example>"
PDF = demo._security_pdf()
DOCX = demo._contract(1)
TERMS = b"# Payment terms\n\nInvoices are payable within thirty days of receipt."


def message(
    subject: str = "Q3 Financials",
    sender: str = JANE,
    to: str = OWN,
    cc: str | None = PRIYA,
    msgid: str | None = None,
    in_reply_to: str | None = None,
    references: list[str] | None = None,
    body: str = "Hello,\n\nplease find the figures attached.\n\n-- \nJane",
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = sender, to, subject
    if cc:
        msg["Cc"] = cc
    msg["Date"] = format_datetime(datetime(2026, 11, 30, 9, 0, tzinfo=UTC))
    msg["Message-ID"] = msgid or make_msgid(domain="acme-corp.example")
    if in_reply_to:
        msg["In-Reply-To"] = in_reply_to
    if references:
        msg["References"] = " ".join(references)
    msg.set_content(body)
    return msg


def plain() -> EmailMessage:
    msg = message()
    msg.add_attachment(TERMS, maintype="text", subtype="markdown", filename="payment-terms.md")
    return msg


def alternative_with_inline_logo_and_pdf() -> EmailMessage:
    msg = message()
    msg.add_alternative("<p>please find the <b>figures</b> attached</p>", subtype="html")
    logo = b"\x89PNG\r\n\x1a\n" + b"\x00" * 800
    msg.add_attachment(logo, maintype="image", subtype="png", filename="logo.png", disposition="inline", cid="<logo>")
    msg.add_attachment(PDF, maintype="application", subtype="pdf", filename="policy.pdf", disposition="inline")
    return msg


def nested_forward() -> EmailMessage:
    inner = message(subject="Contract draft", msgid="<inner@acme-corp.example>")
    inner.add_attachment(
        DOCX,
        maintype="application",
        subtype="vnd.openxmlformats-officedocument.wordprocessingml.document",
        filename="supply-agreement.docx",
    )
    outer = message(subject="Fwd: Contract draft")
    outer.add_attachment(inner)  # message/rfc822 with its own attachment
    return outer


def rfc2231_name() -> EmailMessage:
    msg = message()
    msg.add_attachment(
        TERMS, maintype="text", subtype="markdown", filename=("utf-8", "", "Zahlungsbedingungen für Q3.md")
    )
    return msg


def wrong_type_and_empty_and_nameless() -> EmailMessage:
    msg = message(subject="Bits and pieces")
    msg.add_attachment(PDF, maintype="application", subtype="octet-stream", filename="policy.pdf")
    msg.add_attachment(b"", maintype="application", subtype="pdf", filename="empty.pdf")
    msg.add_attachment(TERMS, maintype="text", subtype="csv", disposition="attachment")
    return msg


def malformed() -> bytes:
    """A multipart message whose closing boundary is missing and one part has broken base64."""
    return (
        b"From: jane.okafor@acme-corp.example\r\nTo: files@northwind.example\r\nSubject: broken\r\n"
        b"Message-ID: <broken@acme-corp.example>\r\nMIME-Version: 1.0\r\n"
        b'Content-Type: multipart/mixed; boundary="XYZ"\r\n\r\n'
        b"--XYZ\r\nContent-Type: text/plain\r\n\r\nhello\r\n"
        b'--XYZ\r\nContent-Type: text/markdown\r\nContent-Disposition: attachment; filename="ok.md"\r\n\r\n'
        b"# Fine\r\n\r\nThis attachment parses.\r\n"
        b"--XYZ\r\nContent-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n"
        b'Content-Disposition: attachment; filename="bad.pdf"\r\n\r\n!!!not base64!!!\r\n'
    )


def related_html_with_logo() -> EmailMessage:
    """multipart/alternative → multipart/related: an HTML body that embeds its logo by cid."""
    msg = message(subject="Newsletter")
    msg.add_alternative('<p>Our news <img src="cid:logo1"></p>', subtype="html")
    html = msg.get_payload()[1]
    html.add_related(b"\x89PNG\r\n\x1a\n" + b"\x00" * 500, maintype="image", subtype="png", cid="<logo1>")
    return msg
