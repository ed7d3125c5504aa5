"""Shared fixtures. Containers are built through the one composition root, with test doubles."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.adapters.local.recording_events import RecordingEventPublisher
from semfs.bootstrap import Container, build_container, extract_limits
from semfs.config import Settings
from semfs.extractors.runner import SubprocessExtractor

pytest_plugins = ["tests.integration.aws_harness"]  # the offline AWS stack fixture


def make_settings(tmp_path: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {"data_dir": tmp_path / "data", "embedder": "hash", "retry_scale": 0.0}
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def shared_extractor() -> Iterator[SubprocessExtractor]:
    """One bounded worker pool for the session: starting a worker per test would dominate the run."""
    extractor = SubprocessExtractor(extract_limits(Settings().limits), timeout_s=60, memory_mb=2048)
    yield extractor
    extractor.close()


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path)


@pytest.fixture
def events() -> RecordingEventPublisher:
    return RecordingEventPublisher()


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()


@pytest.fixture
def container(
    settings: Settings,
    events: RecordingEventPublisher,
    embedder: HashEmbedder,
    shared_extractor: SubprocessExtractor,
) -> Container:
    return build_container(settings, events=events, embedder=embedder, extractor=shared_extractor)
