"""Ports: one ``typing.Protocol`` per capability. The pipeline depends on these only."""

from semfs.ports.admission import Admission
from semfs.ports.answerer import Answerer
from semfs.ports.blobs import BlobStore
from semfs.ports.callbacks import JobWaits
from semfs.ports.chat import ChatModel
from semfs.ports.container import Container
from semfs.ports.embedder import Embedder
from semfs.ports.enricher import Enricher, EnrichInput
from semfs.ports.entity_repository import EntityRepository, FileMention
from semfs.ports.events import EventPublisher
from semfs.ports.extractor import Extractor
from semfs.ports.index import IndexWriter, Retriever, SearchIndex, VectorMigration
from semfs.ports.jobs import Job, JobQueue
from semfs.ports.mail import Contact, MailRepository, Person, Thread
from semfs.ports.mail_accounts import MailAccountRepository, Mailbox, MailboxOpener, SecretStore
from semfs.ports.ocr import Ocr
from semfs.ports.principals import PrincipalRepository
from semfs.ports.repository import FileRepository, RecordQuery
from semfs.ports.reranker import Reranker
from semfs.ports.starter import PipelineStarter
from semfs.ports.tags import TagRepository
from semfs.ports.views import ViewRepository

__all__ = [
    "Admission",
    "Answerer",
    "BlobStore",
    "ChatModel",
    "Contact",
    "Container",
    "Embedder",
    "EnrichInput",
    "Enricher",
    "EntityRepository",
    "EventPublisher",
    "Extractor",
    "FileMention",
    "FileRepository",
    "IndexWriter",
    "Job",
    "JobQueue",
    "JobWaits",
    "MailAccountRepository",
    "MailRepository",
    "Mailbox",
    "MailboxOpener",
    "Ocr",
    "Person",
    "PipelineStarter",
    "PrincipalRepository",
    "RecordQuery",
    "Reranker",
    "Retriever",
    "SearchIndex",
    "SecretStore",
    "TagRepository",
    "Thread",
    "VectorMigration",
    "ViewRepository",
]
