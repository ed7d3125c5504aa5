"""The bundle of ports the composition root builds and the pipeline receives.

The pipeline, the API and the CLI depend on this type only, never on ``semfs.bootstrap``: which
adapter sits behind each port is the root's decision alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from semfs.config import Settings
from semfs.ports.admission import Admission
from semfs.ports.answerer import Answerer
from semfs.ports.blobs import BlobStore
from semfs.ports.callbacks import JobWaits
from semfs.ports.embedder import Embedder
from semfs.ports.enricher import Enricher
from semfs.ports.entity_repository import EntityRepository
from semfs.ports.events import EventPublisher
from semfs.ports.extractor import Extractor
from semfs.ports.index import SearchIndex
from semfs.ports.jobs import JobQueue
from semfs.ports.mail import MailRepository
from semfs.ports.mail_accounts import MailAccountRepository, MailboxOpener, SecretStore
from semfs.ports.ocr import Ocr
from semfs.ports.principals import PrincipalRepository
from semfs.ports.repository import FileRepository
from semfs.ports.reranker import Reranker
from semfs.ports.starter import PipelineStarter
from semfs.ports.tags import TagRepository
from semfs.ports.views import ViewRepository


@dataclass(frozen=True)
class Container:
    """Everything the pipeline needs, behind ports. Frozen: built once by ``build_container``."""

    settings: Settings
    blobs: BlobStore
    repo: FileRepository
    mail: MailRepository
    tags: TagRepository
    views: ViewRepository
    principals: PrincipalRepository  # a tenant's users and groups: who may read what (domain/access.py)
    entities: EntityRepository  # the people, organisations, amounts… named in each file
    index: SearchIndex
    embedder: Embedder
    enricher: Enricher
    fallback_enricher: Enricher
    extractor: Extractor
    events: EventPublisher
    starter: PipelineStarter
    jobs: JobQueue
    # the embedder for a model id the index reports as active (the root caches what it builds)
    embedder_for_model: Callable[[str], Embedder]
    answerer: Answerer  # writes /ask's answers: the LLM when an endpoint is configured, else extraction
    admission: Admission  # bounds the executions in flight (AWS: the gate table; locally unbounded: the queue is)
    job_waits: JobWaits  # an execution waiting on a Textract job meets the job's end (locally: none can wait)
    ocr: Ocr  # NoOcr where no engine is installed or OCR is switched off: pages without text stay unread
    reranker: Reranker  # reorders the fused top files (/rerank endpoint); NoReranking keeps the fused order
    mail_accounts: MailAccountRepository  # the tenant's own mailboxes (IMAP) and how far each folder is read
    secrets: SecretStore  # their passwords and OAuth secrets, encrypted at rest (a key file; Secrets Manager)
    open_mailbox: MailboxOpener  # a connection to one of them (adapters/mailbox/imap.py)

    def close(self) -> None:
        self.starter.close()
        self.extractor.close()

    def query_embedder(self) -> Embedder:
        """The embedder of the index's active model: during a model switch, queries keep being embedded
        by the model whose vectors are searchable, until the switch happens."""
        active = self.index.active_model()
        if active is None or active == self.embedder.model:
            return self.embedder
        return self.embedder_for_model(active)
