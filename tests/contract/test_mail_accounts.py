"""MailAccountRepository and SecretStore contracts, on every adapter (SQLite and a key file locally; DynamoDB
and Secrets Manager on moto, which enforces the services' names, missing-secret errors and name filters)."""

from __future__ import annotations

import pytest

from semfs.domain.errors import NotFound
from semfs.domain.mail_accounts import FolderCursor, MailAccount, MailRule
from semfs.ports import MailAccountRepository, SecretStore

pytestmark = pytest.mark.contract


def acc(name: str, **given: object) -> MailAccount:
    return MailAccount(name=name, host="imap.example.com", username="me@example.com", **given)  # type: ignore[arg-type]


def test_accounts_are_per_tenant_and_replaced_by_name(mail_account_repository: MailAccountRepository) -> None:
    repo = mail_account_repository
    repo.save("t1", acc("work", rules=[MailRule(name="pdfs", attachment_name="*.pdf", take="attachments")]))
    repo.save("t1", acc("home"))
    repo.save("t2", acc("work"))
    repo.save("t1", acc("work", folders=["INBOX", "Invoices"]))
    assert [a.name for a in repo.accounts("t1")] == ["home", "work"]
    work = repo.account("t1", "work")
    assert work is not None and work.folders == ["INBOX", "Invoices"] and work.rules == []
    assert repo.account("t3", "work") is None
    assert sorted((t, a.name) for t, a in repo.all_accounts()) == [("t1", "home"), ("t1", "work"), ("t2", "work")]


def test_cursors_go_with_their_account_and_the_tenant(mail_account_repository: MailAccountRepository) -> None:
    repo = mail_account_repository
    repo.save("t1", acc("work"))
    repo.save_cursor("t1", "work", FolderCursor(folder="INBOX", uidvalidity=7, last_uid=3))
    repo.save_cursor("t1", "work", FolderCursor(folder="INBOX", uidvalidity=7, last_uid=4, pending=5))
    repo.save_cursor("t1", "work", FolderCursor(folder="Sent Items", uidvalidity=9))
    repo.save_cursor("t2", "work", FolderCursor(folder="INBOX", uidvalidity=1))
    assert repo.cursor("t1", "work", "INBOX") == FolderCursor(folder="INBOX", uidvalidity=7, last_uid=4, pending=5)
    assert repo.delete("t1", "work") and not repo.delete("t1", "work")
    assert repo.cursor("t1", "work", "INBOX") is None and repo.cursor("t1", "work", "Sent Items") is None
    assert repo.cursor("t2", "work", "INBOX") is not None
    repo.save("t2", acc("work"))
    assert repo.forget_tenant("t2") == 2 and repo.accounts("t2") == [] and repo.cursor("t2", "work", "INBOX") is None


def test_secrets_round_trip_replace_by_name_and_go_with_the_tenant(secret_store: SecretStore) -> None:
    ref = secret_store.put("t1", "mail/work", "first")
    again = secret_store.put("t1", "mail/work", "second")  # the same name: replaced, one secret
    assert again == ref and secret_store.get(ref) == "second"
    other = secret_store.put("t10", "mail/work", "another tenant's")  # "t1" is a prefix of "t10"
    secret_store.put("t1", "mail/home", "third")
    assert secret_store.forget_tenant("t1") == 2
    with pytest.raises(NotFound):
        secret_store.get(ref)
    assert secret_store.get(other) == "another tenant's"
    secret_store.delete(other)
    secret_store.delete(other)  # idempotent
    with pytest.raises(NotFound):
        secret_store.get(other)
