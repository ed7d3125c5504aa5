"""Fixtures the integration tests share."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """``semfs`` on a temporary data dir with the hash embedder."""
    monkeypatch.setenv("SEMFS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SEMFS_EMBEDDER", "hash")
    return CliRunner()
