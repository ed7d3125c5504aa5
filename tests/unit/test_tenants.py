"""Issue 47.2: one rule for what a tenant id is, held at every entry point (``domain/tenants.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from semfs.config import Settings, SettingsError
from semfs.domain.errors import InvalidRequest
from semfs.domain.tenants import checked_tenant_id, is_tenant_id
from semfs.pipeline.intake.sources import tenant_from_key

pytestmark = pytest.mark.unit
ODD = ["a/", "a/..", "..", ".", "a#", "A", " a", "a ", "a%2F", "", "a" * 64, "-a", "a\n", "é", "a.b", None, 7]


@pytest.mark.parametrize("value", ["default", "a", "a-b", "a_b", "t1", "0", "a" * 63])
def test_tenant_ids(value: str) -> None:
    assert is_tenant_id(value) and checked_tenant_id(value) == value


@pytest.mark.parametrize("value", ODD)
def test_what_is_no_tenant_id_is_refused_with_the_rule(value: object) -> None:
    assert not is_tenant_id(value)
    with pytest.raises(InvalidRequest, match="lowercase letters, digits"):
        checked_tenant_id(value)


@pytest.mark.parametrize("value", [v for v in ODD if isinstance(v, str) and "/" not in v and v])
def test_an_upload_key_under_no_tenant_id_belongs_to_no_tenant(value: str) -> None:
    assert tenant_from_key(f"uploads/{value}/x/report.pdf") is None
    assert tenant_from_key("uploads/acme/x/report.pdf") == "acme"


def test_an_api_key_is_made_for_a_tenant_id_only(tmp_path: Path) -> None:
    from semfs.server import ApiKeys

    keys = ApiKeys(tmp_path / "keys.json")
    with pytest.raises(InvalidRequest):
        keys.create("default/")
    assert keys.tenant_for(keys.create("default")) == "default"


def test_a_key_an_older_version_issued_for_no_tenant_id_opens_nothing(tmp_path: Path) -> None:
    import hashlib
    import json

    from semfs.server import ApiKeys

    path = tmp_path / "keys.json"
    path.write_text(json.dumps({hashlib.sha256(b"semfs_old").hexdigest(): "default/"}))
    assert ApiKeys(path).tenant_for("semfs_old") is None


@pytest.mark.parametrize("setting", [{"default_tenant": "Default"}, {"mailboxes": "files@acme.example=acme/"}])
def test_settings_that_name_no_tenant_id_fail_fast(setting: dict[str, str]) -> None:
    with pytest.raises((SettingsError, ValueError)):
        Settings(**setting)  # type: ignore[arg-type]
