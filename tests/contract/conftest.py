"""Each port's contract suite is parametrized over every adapter of that port.

The AWS adapters join these lists when they land (S3BlobStore / DynamoFileRepository on moto,
OpenSearchIndex on osmem + recorded DSL, OpenAIEmbedder on a fake HTTP server).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from semfs.adapters.local.blobs import LocalBlobStore
from semfs.adapters.local.search_index import LocalSearchIndex
from semfs.adapters.local.sqlite_mail import SqliteMailRepository
from semfs.adapters.local.sqlite_repository import SqliteFileRepository
from semfs.adapters.local.sqlite_tags import SqliteTagRepository
from semfs.config import Settings
from semfs.ports import (
    BlobStore,
    EntityRepository,
    FileRepository,
    MailAccountRepository,
    MailRepository,
    SearchIndex,
    SecretStore,
    TagRepository,
    ViewRepository,
)

BLOB_STORES: dict[str, Callable[[Path], BlobStore]] = {"local": lambda p: LocalBlobStore(p / "blobs")}
REPOSITORIES: dict[str, Callable[[Path], FileRepository]] = {"sqlite": lambda p: SqliteFileRepository(p / "r.db")}
INDEXES: dict[str, Callable[[Path], SearchIndex]] = {"sqlite": lambda p: LocalSearchIndex(p / "i.db")}


@pytest.fixture(params=["local", "s3"])
def blob_store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    if request.param in BLOB_STORES:
        return BLOB_STORES[request.param](tmp_path)
    return AWS_BLOB_STORES[request.param](request.getfixturevalue("aws_settings"))


@pytest.fixture(params=["sqlite", "dynamodb"])
def repository(request: pytest.FixtureRequest, tmp_path: Path) -> FileRepository:
    if request.param in REPOSITORIES:
        return REPOSITORIES[request.param](tmp_path)
    return AWS_REPOSITORIES[request.param](request.getfixturevalue("aws_settings"))


@pytest.fixture(params=["sqlite", "dynamodb"])
def mail_repository(request: pytest.FixtureRequest, tmp_path: Path) -> MailRepository:
    if request.param == "sqlite":
        return SqliteMailRepository(tmp_path / "r.db")
    from semfs.adapters.aws.dynamo_mail import DynamoMailRepository

    return DynamoMailRepository(request.getfixturevalue("aws_settings"))


@pytest.fixture(params=["sqlite", "dynamodb"])
def tag_repository(request: pytest.FixtureRequest, tmp_path: Path) -> TagRepository:
    if request.param == "sqlite":
        return SqliteTagRepository(tmp_path / "r.db")
    from semfs.adapters.aws.dynamo_tags import DynamoTagRepository

    return DynamoTagRepository(request.getfixturevalue("aws_settings"))


@pytest.fixture(params=["sqlite", "dynamodb"])
def view_repository(request: pytest.FixtureRequest, tmp_path: Path) -> ViewRepository:
    if request.param == "sqlite":
        from semfs.adapters.local.sqlite_views import SqliteViewRepository

        return SqliteViewRepository(tmp_path / "r.db")
    from semfs.adapters.aws.dynamo_views import DynamoViewRepository

    return DynamoViewRepository(request.getfixturevalue("aws_settings"))


@pytest.fixture(params=["sqlite", "dynamodb"])
def entity_repository(request: pytest.FixtureRequest, tmp_path: Path) -> EntityRepository:
    if request.param == "sqlite":
        from semfs.adapters.local.sqlite_entities import SqliteEntityRepository

        return SqliteEntityRepository(tmp_path / "r.db")
    from semfs.adapters.aws.dynamo_entities import DynamoEntityRepository

    return DynamoEntityRepository(request.getfixturevalue("aws_settings"))


@pytest.fixture(params=["local", "opensearch"])
def search_index(request: pytest.FixtureRequest, tmp_path: Path) -> SearchIndex:
    """Every SearchIndex adapter on its keyword, filter, bulk and delete paths. OpenSearch runs on
    osmem-server, which has no k-NN: its knn and hybrid bodies are checked as compiled DSL."""
    if request.param == "local":
        return INDEXES["sqlite"](tmp_path)
    from semfs.adapters.aws.opensearch import OpenSearchIndex

    url = request.getfixturevalue("osmem_url")
    return OpenSearchIndex(Settings(opensearch_endpoint=url, index_name="semfs-test"), dim=384)


@pytest.fixture(params=["exact", "hnsw"])
def vector_index(request: pytest.FixtureRequest, tmp_path: Path) -> SearchIndex:
    """Adapters whose k-NN leg can execute here: the local one with its exact scan (a tenant under the
    graph threshold), and with every write extending its HNSW graph (threshold and tail of one row)."""
    if request.param == "hnsw":
        return LocalSearchIndex(tmp_path / "i.db", ann_min=1, tail_max=1)
    return INDEXES["sqlite"](tmp_path)


@pytest.fixture
def atomic_requests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """DynamoDB executes each request atomically (a transaction's condition and writes included); moto
    does not when threads call it at once. One lock per *request* restores the service's rule while the
    adapter's operations, each several requests, still interleave freely."""
    if "dynamodb" not in request.node.name:
        return
    import threading

    from moto.core.botocore_stubber import BotocoreStubber

    lock = threading.Lock()
    original = BotocoreStubber.__call__

    def atomic(self: BotocoreStubber, *args: object, **kwargs: object) -> object:
        with lock:
            return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(BotocoreStubber, "__call__", atomic)


# -- AWS adapters on moto ---------------------------------------------------------------------------
@pytest.fixture
def aws_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Settings]:
    from moto import mock_aws

    from semfs.adapters.aws.clients import _session_client
    from semfs.adapters.aws.dynamodb import table_definition
    from semfs.adapters.aws.item_table import entity_table_definition

    for key, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "eu-west-1",
        "AWS_REGION": "eu-west-1",
    }.items():
        monkeypatch.setenv(key, value)
    _session_client.cache_clear()
    with mock_aws():
        import boto3

        boto3.client("s3", region_name="eu-west-1").create_bucket(
            Bucket="semfs-test", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
        )
        boto3.client("s3", region_name="eu-west-1").put_bucket_versioning(  # as template.yaml's bucket is
            Bucket="semfs-test", VersioningConfiguration={"Status": "Enabled"}
        )
        boto3.client("dynamodb", region_name="eu-west-1").create_table(**table_definition("semfs-files"))
        boto3.client("dynamodb", region_name="eu-west-1").create_table(**entity_table_definition("semfs-entities"))
        yield Settings(
            data_dir=tmp_path,
            bucket="semfs-test",
            table="semfs-files",
            entity_table="semfs-entities",
            aws_region="eu-west-1",
            opensearch_endpoint="http://localhost:9200",
            state_machine_arn="arn:aws:states:x",
        )
    _session_client.cache_clear()


def _s3(settings: Settings) -> BlobStore:
    from semfs.adapters.aws.s3 import S3BlobStore

    return S3BlobStore(settings)


def _dynamo(settings: Settings) -> FileRepository:
    from semfs.adapters.aws.dynamodb import DynamoFileRepository

    return DynamoFileRepository(settings)


AWS_BLOB_STORES = {"s3": _s3}
AWS_REPOSITORIES = {"dynamodb": _dynamo}


@pytest.fixture(params=["sqlite", "dynamodb"])
def mail_account_repository(request: pytest.FixtureRequest, tmp_path: Path) -> MailAccountRepository:
    if request.param == "sqlite":
        from semfs.adapters.local.sqlite_mail_accounts import SqliteMailAccountRepository

        return SqliteMailAccountRepository(tmp_path / "r.db")
    from semfs.adapters.aws.dynamo_mail_accounts import DynamoMailAccountRepository

    return DynamoMailAccountRepository(request.getfixturevalue("aws_settings"))


@pytest.fixture(params=["fernet", "secretsmanager"])
def secret_store(request: pytest.FixtureRequest, tmp_path: Path) -> SecretStore:
    if request.param == "fernet":
        from semfs.adapters.local.sqlite_mail_accounts import FernetSecretStore

        return FernetSecretStore(tmp_path / "r.db", tmp_path / "secret.key")
    from semfs.adapters.aws.secrets import SecretsManagerStore

    return SecretsManagerStore(request.getfixturevalue("aws_settings"))
