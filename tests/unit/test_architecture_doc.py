"""docs/architecture.md stays true: every path it names exists and every port is in its table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import semfs.ports

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text()


def test_every_module_path_in_the_doc_exists() -> None:
    named = set(re.findall(r"((?:\w+/)*[\w.]+\.(?:py|json))", DOC))
    missing = []
    for path in named:
        candidates = [ROOT / path, ROOT / "shared" / "semfs" / path, ROOT / "shared" / path]
        if not any(c.exists() for c in candidates):
            missing.append(path)
    assert missing == []


def test_every_port_is_described() -> None:
    data = {"Container", "EnrichInput", "RecordQuery", "Thread", "Person", "Contact", "Job"}
    protocols = [n for n in semfs.ports.__all__ if n not in data]
    assert protocols, "the ports package exports its protocols"
    undocumented = [n for n in protocols if f"`{n}`" not in DOC]
    assert undocumented == []
