"""Fixtures the integration tests share."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest
from typer.testing import CliRunner


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    """``semfs`` on a temporary data dir with the hash embedder."""
    monkeypatch.setenv("SEMFS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("SEMFS_EMBEDDER", "hash")
    # A command runs in a process of its own, where no Lambda code has configured the package's "semfs"
    # logger. In this worker an earlier Lambda test may have (Powertools adds a handler on the stdout of
    # that moment): its JSON lines, or "--- Logging error ---" once that stdout is closed, would land in
    # this command's output. They go to a sink of this test's own.
    for handler in logging.getLogger("semfs").handlers:
        if isinstance(handler, logging.StreamHandler):
            monkeypatch.setattr(handler, "stream", io.StringIO())
    return CliRunner()
