"""Boundaries in the code that import contracts cannot see."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
LOCAL = Path(__file__).resolve().parents[2] / "shared" / "semfs" / "adapters" / "local"
# SQL that names one of the document store's tables
_STORE_SQL = re.compile(r"\b(?:FROM|INTO|UPDATE|JOIN|TABLE)\s+(?:docs|staged|settings|meta)\b", re.IGNORECASE)


def test_the_document_store_owns_every_statement_on_its_tables() -> None:
    """The keyword and vector indexes and the façade ask ``DocStore`` by method; none writes its SQL."""
    holders = sorted(p.name for p in LOCAL.glob("*.py") if _STORE_SQL.search(p.read_text()))
    assert holders == ["doc_store.py"]
