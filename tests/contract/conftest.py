"""Each port's contract suite is parametrized over every adapter of that port.

The AWS adapters join these lists when they land (S3BlobStore / DynamoFileRepository on moto,
OpenSearchIndex on osmem + recorded DSL, OpenAIEmbedder on a fake HTTP server).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from semfs.adapters.local.blobs import LocalBlobStore
from semfs.adapters.local.search_index import LocalSearchIndex
from semfs.adapters.local.sqlite_repository import SqliteFileRepository
from semfs.ports import BlobStore, FileRepository, SearchIndex

BLOB_STORES: dict[str, Callable[[Path], BlobStore]] = {"local": lambda p: LocalBlobStore(p / "blobs")}
REPOSITORIES: dict[str, Callable[[Path], FileRepository]] = {"sqlite": lambda p: SqliteFileRepository(p / "r.db")}
INDEXES: dict[str, Callable[[Path], SearchIndex]] = {"sqlite": lambda p: LocalSearchIndex(p / "i.db")}


@pytest.fixture(params=sorted(BLOB_STORES))
def blob_store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    return BLOB_STORES[request.param](tmp_path)


@pytest.fixture(params=sorted(REPOSITORIES))
def repository(request: pytest.FixtureRequest, tmp_path: Path) -> FileRepository:
    return REPOSITORIES[request.param](tmp_path)


@pytest.fixture(params=sorted(INDEXES))
def search_index(request: pytest.FixtureRequest, tmp_path: Path) -> SearchIndex:
    return INDEXES[request.param](tmp_path)
