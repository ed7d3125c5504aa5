"""MailRepository contract: threads, messages and contacts, idempotent per message, on every adapter."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from semfs.ports import MailRepository, Person

pytestmark = pytest.mark.contract

JANE = Person("c_jane@acme.example", "jane@acme.example", "Jane Okafor", "acme")


def test_a_message_joins_its_thread_once(mail_repository: MailRepository) -> None:
    for _ in range(2):  # a redelivery
        thread = mail_repository.add_message("t1", "th1", "<m1@x>", "Q3 Financials", "k1", ["a@x", "b@x"])
    assert (thread.subject, thread.messages, thread.participants) == ("Q3 Financials", 1, ("a@x", "b@x"))
    assert mail_repository.thread_of_message("t1", "<m1@x>") == "th1"
    assert mail_repository.thread_of_subject("t1", "k1") == "th1"


def test_the_first_subject_wins_and_participants_are_a_set(mail_repository: MailRepository) -> None:
    mail_repository.add_message("t1", "th1", "<m1@x>", "Q3 Financials", None, ["a@x"])
    thread = mail_repository.add_message("t1", "th1", "<m2@x>", "RE: Q3 Financials", None, ["a@x", "c@x"])
    assert (thread.subject, thread.messages, thread.participants) == ("Q3 Financials", 2, ("a@x", "c@x"))


def test_tenants_do_not_see_each_others_threads_or_contacts(mail_repository: MailRepository) -> None:
    mail_repository.add_message("t1", "th1", "<m1@x>", "Hi", "k", ["a@x"])
    mail_repository.add_contact_message("t1", JANE, "<m1@x>")
    assert mail_repository.thread("t2", "th1") is None
    assert mail_repository.thread_of_message("t2", "<m1@x>") is None
    assert mail_repository.thread_of_subject("t2", "k") is None
    assert mail_repository.contacts("t2") == []
    assert mail_repository.contact("t2", JANE.contact_id) is None


def test_one_contact_by_its_id(mail_repository: MailRepository) -> None:
    mail_repository.add_contact_message("t1", JANE, "<m1@x>")
    found = mail_repository.contact("t1", JANE.contact_id)
    assert found is not None and (found.name, found.email, found.messages) == ("Jane Okafor", JANE.email, 1)
    assert mail_repository.contact("t1", "c_nobody@x") is None


def test_a_contact_counts_distinct_messages(mail_repository: MailRepository) -> None:
    mail_repository.add_contact_message("t1", JANE, "<m1@x>")
    mail_repository.add_contact_message("t1", JANE, "<m1@x>")  # redelivered
    nameless = Person(JANE.contact_id, JANE.email, "", None)
    contact = mail_repository.add_contact_message("t1", nameless, "<m2@x>")
    assert (contact.messages, contact.name, contact.organisation) == (2, "Jane Okafor", "acme")
    assert [c.contact_id for c in mail_repository.contacts("t1")] == [JANE.contact_id]


@pytest.mark.usefixtures("atomic_requests")
def test_concurrent_writers_on_one_thread_and_contact_lose_nothing(mail_repository: MailRepository) -> None:
    # given: 16 messages of one thread, each delivered twice, handled by 8 writers at once
    def deliver(n: int) -> None:
        mid = f"<m{n % 16}@x>"
        mail_repository.add_message("t1", "th1", mid, "Busy thread", "k", [f"p{n % 16}@x", "jane@acme.example"])
        mail_repository.add_contact_message("t1", JANE, mid)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(deliver, range(32)))
    # then: every message and participant landed once, and the contact counts each message once
    thread = mail_repository.thread("t1", "th1")
    assert thread is not None and thread.messages == 16
    assert len(thread.participants) == 17
    (contact,) = mail_repository.contacts("t1")
    assert contact.messages == 16


def test_forgetting_a_tenant_erases_its_threads_and_contacts_only(mail_repository: MailRepository) -> None:
    for tenant in ("t1", "t2"):
        mail_repository.add_message(tenant, "th1", "<m1@x>", "Hi", "k", ["a@x"])
        mail_repository.add_contact_message(tenant, JANE, "<m1@x>")
    assert mail_repository.forget_tenant("t1") > 0
    assert mail_repository.forget_tenant("t1") == 0
    assert mail_repository.threads("t1") == [] and mail_repository.contacts("t1") == []
    assert (
        mail_repository.thread_of_message("t1", "<m1@x>") is None
        and mail_repository.thread_of_subject("t1", "k") is None
    )
    assert [t.thread_id for t in mail_repository.threads("t2")] == ["th1"] and mail_repository.contacts("t2")
