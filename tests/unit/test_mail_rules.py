"""Mail rules (``pipeline/intake/mailboxes.rule_matches``): each condition, their conjunction, the order, and
what an account refuses to be."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from semfs.domain.errors import InvalidRequest
from semfs.domain.mail_accounts import MailAccount, MailRule
from semfs.extractors.email import parse_mail
from semfs.pipeline.intake.mailboxes import checked_rules, first_rule, rule_matches
from tests import mail_corpus as mc

pytestmark = pytest.mark.unit


def parsed(**kw: object) -> tuple[object, int]:
    m = mc.message(**kw)  # type: ignore[arg-type]
    m.add_attachment(b"%PDF-1.4 tiny", maintype="application", subtype="pdf", filename="Invoice-0042.PDF")
    raw = m.as_bytes()
    return parse_mail(raw, 20_000), len(raw)


@pytest.mark.parametrize(
    ("rule", "hit"),
    [
        (MailRule(name="r", sender="ACME-corp"), True),  # case-insensitive, the address
        (MailRule(name="r", sender="jane okafor"), True),  # the display name
        (MailRule(name="r", sender="globex"), False),
        (MailRule(name="r", recipient="priya@"), True),  # Cc counts
        (MailRule(name="r", subject="financials"), True),
        (MailRule(name="r", body="figures attached"), True),
        (MailRule(name="r", attachment_name="invoice-*.pdf"), True),  # a pattern, case-insensitive
        (MailRule(name="r", attachment_name="*.docx"), False),
        (MailRule(name="r", attachment_type="application/"), True),
        (MailRule(name="r", attachment_type="image/"), False),
        (MailRule(name="r", min_bytes=10), True),
        (MailRule(name="r", max_bytes=10), False),
        (MailRule(name="r", sender="acme", subject="nothing like it"), False),  # all must hold
        (MailRule(name="r"), True),  # no condition: every message
    ],
)
def test_each_condition(rule: MailRule, hit: bool) -> None:
    mail, size = parsed()
    assert rule_matches(rule, mail, size) is hit  # type: ignore[arg-type]


def test_the_first_rule_that_holds_decides() -> None:
    mail, size = parsed()
    rules = [
        MailRule(name="a", sender="globex", take="skip"),
        MailRule(name="b", take="attachments"),
        MailRule(name="c"),
    ]
    hit = first_rule(rules, mail, size)  # type: ignore[arg-type]
    assert hit is not None and hit.name == "b"
    assert first_rule([], mail, size) is None  # type: ignore[arg-type]


def test_rules_and_accounts_refuse_what_cannot_work() -> None:
    with pytest.raises(InvalidRequest, match="two rules"):
        checked_rules([MailRule(name="a"), MailRule(name="a")])
    with pytest.raises(InvalidRequest, match="tags"):
        checked_rules([MailRule(name="a", tags=["   "])])
    with pytest.raises(InvalidRequest, match="share with"):
        checked_rules([MailRule(name="a", share_with=["everyone"])])
    with pytest.raises(ValidationError, match="move_to"):
        MailAccount(name="x", host="h", username="u", after="move")
    with pytest.raises(ValidationError, match="read again"):
        MailAccount(name="x", host="h", username="u", after="move", move_to="INBOX")
    with pytest.raises(ValidationError, match="folder name"):
        MailAccount(name="x", host="h", username="u", folders=["IN\r\nBOX"])
    with pytest.raises(ValidationError):
        MailAccount(name="Not A Name", host="h", username="u")
