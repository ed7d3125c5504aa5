"""Names people type → the ids filters use: a thread by its subject, a contact by name or address.

Every entry point (CLI, API, web page) resolves through here, so ``--thread "Invoice 2291 and pallet
manifest"`` and ``--contact hans.becker@…`` find what the ids would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from semfs.domain.ids import contact_id_for, normalise_subject, thread_id_for

if TYPE_CHECKING:
    from semfs.domain.models import FileRecord
    from semfs.ports import Container


def thread_id(c: Container, tenant: str, name: str | None) -> str | None:
    """``t_…`` as given; else the mail thread whose subject matches (ignoring Re:/Fwd:, case and spacing);
    else the thread an upload named with that subject (``--thread`` on ingest)."""
    if not name or not name.strip():
        return None
    name = name.strip()
    if name.startswith("t_"):
        return name
    wanted = normalise_subject(name).casefold()
    for thread in c.mail.threads(tenant):
        if normalise_subject(thread.subject).casefold() == wanted:
            return thread.thread_id
    return thread_id_for(tenant, name)


def record_subject(record: FileRecord) -> str | None:
    """The subject a record's provenance gives its thread: what an upload named it, or its mail's subject."""
    prov = record.provenance or {}
    named = prov.get("thread_subject") or prov.get("subject")
    return str(named) if named else None


def labels(
    c: Container, tenant: str, threads: Mapping[str, str | None], contacts: Sequence[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The names people read for ids: each thread's subject (its mail thread's, else the subject given beside
    its id, e.g. ``record_subject``) and each contact's name, else address. Ids with no name are left out."""
    subjects = {}
    for thread_id, fallback in threads.items():
        found = c.mail.thread(tenant, thread_id)
        subject = (found.subject if found else "") or fallback
        if subject:
            subjects[thread_id] = subject
    people = {}
    for cid in dict.fromkeys(contacts):  # a keyed read each: a file names a few, a tenant may have thousands
        person = c.mail.contact(tenant, cid)
        if person and (person.name or person.email):
            people[cid] = person.name or person.email
    return subjects, people


def contact_id(c: Container, tenant: str, name: str | None) -> str | None:
    """``c_…`` as given; an address → its contact id; else a contact whose display name matches."""
    if not name or not name.strip():
        return None
    name = name.strip()
    if name.startswith("c_") or "@" in name:
        return name if name.startswith("c_") else contact_id_for(name)
    folded = " ".join(name.casefold().split())
    for contact in c.mail.contacts(tenant):
        if " ".join(contact.name.casefold().split()) == folded:
            return contact.contact_id
    return contact_id_for(name)
