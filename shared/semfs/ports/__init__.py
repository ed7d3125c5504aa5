"""Ports: one ``typing.Protocol`` per capability. The pipeline depends on these only."""

from semfs.ports.blobs import BlobStore
from semfs.ports.embedder import Embedder
from semfs.ports.enricher import Enricher, EnrichInput
from semfs.ports.events import EventPublisher
from semfs.ports.index import SearchIndex
from semfs.ports.ocr import Ocr
from semfs.ports.repository import FileRepository, RecordQuery
from semfs.ports.starter import PipelineStarter

__all__ = [
    "BlobStore",
    "Embedder",
    "EnrichInput",
    "Enricher",
    "EventPublisher",
    "FileRepository",
    "Ocr",
    "PipelineStarter",
    "RecordQuery",
    "SearchIndex",
]
