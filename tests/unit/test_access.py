"""The rules of ``domain/access.py``: reader tokens, who a principal reads as, what --share-with takes."""

from __future__ import annotations

import pytest

from semfs.domain.access import (
    ADMINS,
    TENANT,
    Principal,
    access_for,
    can_read,
    changed_readers,
    checked_name,
    claimed_groups,
    parse_share,
    readers_of,
)
from semfs.domain.errors import InvalidRequest


def test_a_file_from_before_access_lists_is_the_tenants() -> None:
    assert readers_of(None) == readers_of([]) == (TENANT,)
    assert can_read([], ("tenant", "u:cy")) and not can_read([], ("u:cy",))


def test_who_a_principal_reads_as() -> None:
    assert Principal("acme").tokens() is None  # the implicit admin of a tenant without users
    assert Principal("acme", "ann", role="admin").tokens() is None
    assert Principal("acme", "bob", ("hr",), role="member").tokens() == ("tenant", "u:bob", "g:hr")
    agent = Principal("acme", "cy", role="agent", agent="helper")
    assert agent.tokens() == ("tenant", "u:cy") and agent.label == "helper for cy"
    assert not can_read([ADMINS], Principal("acme", "bob", role="member").tokens())
    assert can_read([ADMINS], Principal("acme", "ann", role="admin").tokens())


@pytest.mark.parametrize(
    ("specs", "tokens"),
    [
        (["private"], ()),
        (["tenant"], ("tenant",)),
        (["group:HR", "user:Bob", "group:hr"], ("g:hr", "u:bob")),
        (["user:bob@acme.example"], ("u:bob@acme.example",)),
    ],
)
def test_share_with_takes_four_forms(specs: list[str], tokens: tuple[str, ...]) -> None:
    assert parse_share(specs) == tokens


@pytest.mark.parametrize("bad", ["everyone", "group:", "user:a b", "g:hr", "user:../x", "group:" + "x" * 200])
def test_anything_else_is_refused_with_the_forms_named(bad: str) -> None:
    with pytest.raises(InvalidRequest, match=r"share with|is not a"):
        parse_share([bad])


def test_a_new_files_access_and_changes_to_it() -> None:
    assert access_for(None).readers == (TENANT,)  # no users: everyone, as before
    assert access_for("bob").readers == ("u:bob",)  # private unless the tenant's default says otherwise
    assert access_for("bob", default_share="tenant").readers == ("u:bob", "tenant")
    assert access_for("bob", ("g:hr",)).readers == ("u:bob", "g:hr")
    assert changed_readers(["u:bob", "g:hr"], ["u:cy"], ["g:hr", "u:bob"], "bob") == ("u:bob", "u:cy")
    with pytest.raises(InvalidRequest, match="at most"):
        changed_readers(["u:bob"], [f"u:x{i}" for i in range(70)], [], "bob")


def test_names_and_claims() -> None:
    assert checked_name(" Ann ") == "ann"
    with pytest.raises(InvalidRequest):
        checked_name("-ann")
    assert claimed_groups("[admin hr]") == ("admin", "hr")
    assert claimed_groups(["hr", 3]) == ("hr",)
    assert claimed_groups(None) == ()
