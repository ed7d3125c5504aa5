"""The one composition root: ``build_container(settings)`` picks adapters by backend.

Heavy packages are imported inside the chosen branch, and no adapter connects or loads a model
until first use, so building a container is cheap (a Lambda cold start, a CLI call).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from semfs.config import Settings
from semfs.extractors.dispatch import ExtractLimits, ExtractOutput
from semfs.extractors.guard import ArchiveLimits

if TYPE_CHECKING:
    from semfs.ports import BlobStore, Embedder, Enricher, EventPublisher, FileRepository, Ocr, SearchIndex
    from semfs.ports.starter import PipelineStarter


class Extractor(Protocol):
    def extract(self, data: bytes, filename: str) -> ExtractOutput: ...

    def render(self, data: bytes, kind: str, pages: list[int], dpi: int) -> list[tuple[int, bytes]]: ...

    def close(self) -> None: ...


@dataclass
class Container:
    """Everything the pipeline needs, behind ports."""

    settings: Settings
    blobs: BlobStore
    repo: FileRepository
    index: SearchIndex
    embedder: Embedder
    enricher: Enricher
    fallback_enricher: Enricher
    extractor: Extractor
    events: EventPublisher
    starter: PipelineStarter = field(init=False)
    ocr: Ocr | None = None

    def close(self) -> None:
        self.extractor.close()

    def query_embedder(self) -> Embedder:
        """The embedder of the index's active model: during a model switch, queries keep being embedded
        by the model whose vectors are searchable, until the switch happens."""
        active = self.index.active_model()
        if active is None or active == self.embedder.model:
            return self.embedder
        cache = self.__dict__.setdefault("_query_embedders", {})
        if active not in cache:
            cache[active] = embedder_for(self.settings, active)
        return cache[active]  # type: ignore[no-any-return]


def extract_limits(settings: Settings) -> ExtractLimits:
    return ExtractLimits(
        max_chars=settings.max_text_chars,
        archive=ArchiveLimits(
            max_entries=settings.max_archive_entries,
            max_uncompressed=int(settings.max_archive_uncompressed_mb * 1024 * 1024),
            max_ratio=settings.max_archive_ratio,
        ),
    )


def embedder_for(settings: Settings, model: str) -> Embedder:
    """An embedder for a model id recorded in the index (the model searches use until a switch)."""
    hashed = re.fullmatch(r"hash-(\d+)(-[\w.]+)?", model)
    if hashed:
        from semfs.adapters.local.hash_embedder import HashEmbedder

        return HashEmbedder(dim=int(hashed.group(1)), model_id=model)
    if model == "all-MiniLM-L6-v2-int8":
        from semfs.adapters.local.onnx_embedder import OnnxEmbedder

        return OnnxEmbedder(model, settings.embed_threads, settings.embed_batch_size)
    from semfs.adapters.aws.openai_client import OpenAIEmbedder

    return OpenAIEmbedder(settings.model_copy(update={"embedding_model": model, "embedding_dim": None}))


def _embedder(settings: Settings) -> Embedder:
    match settings.embedder:
        case "hash":
            from semfs.adapters.local.hash_embedder import HashEmbedder

            return HashEmbedder(dim=settings.embedding_dim or 384, model_id=settings.embedding_model)
        case "onnx":
            from semfs.adapters.local.onnx_embedder import OnnxEmbedder

            return OnnxEmbedder(settings.resolved_embedding_model, settings.embed_threads, settings.embed_batch_size)
        case "openai":
            from semfs.adapters.aws.openai_client import OpenAIEmbedder

            return OpenAIEmbedder(settings)
    raise AssertionError(settings.embedder)  # pragma: no cover - Literal exhausts the match


def build_container(
    settings: Settings,
    *,
    embedder: Embedder | None = None,
    enricher: Enricher | None = None,
    events: EventPublisher | None = None,
    extractor: Extractor | None = None,
    ocr: Ocr | None = None,
) -> Container:
    """Wire the adapters for ``settings.backend``; tests pass doubles for the model-backed ports."""
    from semfs.adapters.local.extractive_enricher import ExtractiveEnricher
    from semfs.adapters.local.recording_events import LogEventPublisher
    from semfs.pipeline.runner import LocalAslStarter

    match settings.backend:
        case "local":
            from semfs.adapters.local.blobs import LocalBlobStore
            from semfs.adapters.local.search_index import LocalSearchIndex
            from semfs.adapters.local.sqlite_repository import SqliteFileRepository
            from semfs.extractors.runner import SubprocessExtractor

            settings.data_dir.mkdir(parents=True, exist_ok=True)
            blobs: BlobStore = LocalBlobStore(settings.blobs_dir, f"http://{settings.http_host}:{settings.http_port}")
            repo: FileRepository = SqliteFileRepository(settings.records_db)
            index: SearchIndex = LocalSearchIndex(settings.index_db)
            extractor = extractor or SubprocessExtractor(
                extract_limits(settings), settings.extract_timeout_s, settings.extract_memory_mb
            )
        case "aws":
            from semfs.adapters.aws.dynamodb import DynamoFileRepository
            from semfs.adapters.aws.opensearch import OpenSearchIndex
            from semfs.adapters.aws.s3 import S3BlobStore
            from semfs.extractors.runner import InProcessExtractor

            blobs = S3BlobStore(settings)
            repo = DynamoFileRepository(settings)
            embedder = embedder or _embedder(settings)
            index = OpenSearchIndex(settings, dim=embedder.dim, model=embedder.model)
            # Lambda bounds each invocation's time and memory; a worker process would only add a cold start.
            extractor = extractor or InProcessExtractor(extract_limits(settings))
            if events is None:
                from semfs.adapters.aws.eventbridge import EventBridgePublisher

                events = EventBridgePublisher(settings)

    if enricher is None and settings.llm_base_url:
        from semfs.adapters.aws.openai_client import OpenAIEnricher

        enricher = OpenAIEnricher(settings)
    if ocr is not None or not settings.ocr_enabled:
        pass
    elif settings.backend == "local":
        from semfs.adapters.local.tesseract_ocr import TesseractOcr, tesseract_available

        ocr = TesseractOcr(settings.ocr_languages) if tesseract_available() else None
    else:
        from semfs.adapters.aws.textract import TextractOcr

        ocr = TextractOcr(settings)
    container = Container(
        settings=settings,
        blobs=blobs,
        repo=repo,
        index=index,
        embedder=embedder or _embedder(settings),
        enricher=enricher or ExtractiveEnricher(),
        fallback_enricher=ExtractiveEnricher(),
        extractor=extractor,
        events=events or LogEventPublisher(),
        ocr=ocr,
    )
    if settings.backend == "aws" and settings.state_machine_arn:
        from semfs.adapters.aws.stepfunctions import StepFunctionsStarter

        container.starter = StepFunctionsStarter(settings)
    else:
        container.starter = LocalAslStarter(container)
    return container
