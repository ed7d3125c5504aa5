"""What the query and catalogue use cases return: typed, so the API, the CLI and agents read fields the
type names instead of keys a dict may or may not hold. The API's response models are these models
(``api/models.py`` only names them for the OpenAPI document)."""

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from semfs.domain.models import Citation, Frozen
from semfs.domain.vocabulary import EntityKind


class CitedPassage(Frozen):
    """One citation of an answer: the file and version, the chunk, where it is, and the exact quote."""

    file_id: str
    filename: str = Field(default="", description="The cited file's name")
    version: int
    chunk_id: str
    location: dict[str, Any]
    quote: str

    @classmethod
    def of(cls, citation: Citation) -> "CitedPassage":
        return cls.model_validate(citation.as_dict())


class Answer(Frozen):
    """``answered`` with its citations and the method that wrote it, or ``no_answer`` with the reason."""

    status: Literal["answered", "no_answer"]
    answer: str | None = None
    citations: list[CitedPassage] = Field(default_factory=list)
    method: str | None = None
    reason: str | None = None

    @classmethod
    def refused(cls, reason: str) -> "Answer":
        return cls(status="no_answer", reason=reason)


class BriefingItem(Frozen):
    """A file an agent should know about for a message, and the passage that shows why."""

    file_id: str
    filename: str
    title: str | None
    summary: str | None
    score: float
    relevance: float = 0.0  # calibrated, as a search result's (``domain/relevance.py``)
    why: str
    entities: list[str] = Field(default_factory=list, description="What the message names that this file names too")
    # where it came from, as a search result says it (issue 52): an agent weighs a contract and a draft apart
    came_from: str = ""
    source_type: str = "upload"
    version: int = 1
    is_latest: bool = True


class FacetValue(Frozen):
    value: str = Field(description="What the filter takes (a tag, a MIME type, a thread or contact id, YYYY-MM)")
    label: str = Field(description="What a person reads: a thread's subject, a contact's name")
    count: int


class FacetCounts(Frozen):
    total: int = Field(description="Files counted")
    capped: bool = Field(description="True when only the first 10,000 matching files were counted")
    tag: list[FacetValue]
    type: list[FacetValue]
    source: list[FacetValue]
    thread: list[FacetValue]
    contact: list[FacetValue]
    month: list[FacetValue]
    entity: list[FacetValue] = Field(default_factory=list, description="People, organisations, … the files name")
    more: dict[str, int] = Field(default_factory=dict, description="Per facet: how many values were left out")


class QueuedFile(Frozen):
    file_id: str
    filename: str
    state: Literal["queued", "running"]
    stage: str = Field(description="The status the file's record names: received, enriching, …")
    enqueued_at: float
    started_at: float | None = None


class QueueView(Frozen):
    jobs: list[QueuedFile]
    counts: dict[str, int] = Field(description="queued, and running files per stage")


class TagEvidence(Frozen):
    manual: int
    auto: int
    examples: list[str]


class MergeSuggestion(Frozen):
    """Two tags that probably mean the same: merge the less used into the more used, with the reasons."""

    merge: str
    into: str
    reasons: list[str]
    evidence: dict[str, TagEvidence] = Field(description="Counts and example files of both tags")


class SimilarFile(Frozen):
    """A file near another by meaning ("more like this"): its latest version, with the cosine similarity
    of the two files' cards (1 is the same meaning) and where it came from."""

    file_id: str
    filename: str
    title: str | None = None
    score: float
    came_from: str = ""


class Capability(Frozen):
    """One feature: on, or off and why (switched off, not configured, not installed)."""

    on: bool
    why_off: str | None = None


class Capabilities(Frozen):
    """What this server does now: each ``SEMFS_ENABLE_*`` switch, and whether what it needs is there."""

    ingest: Capability
    ocr: Capability
    llm: Capability
    semantic: Capability
    ask: Capability
    mail: Capability
    entities: Capability
    mcp: Capability
    answers: Literal["llm", "extractive"] = Field(description="how an answer is written when ask is on")


class HistoryEntry(Frozen):
    """One line of a file version's history: what happened, when, by whom where a person did it."""

    at: datetime
    action: str = Field(
        description="received, versioned, processed, tagged, untagged, noted, unnoted, trashed, restored, "
        "detached, linked, shared or unshared"
    )
    detail: str = ""
    by: str | None = None


class EntityInfo(Frozen):
    """An entity of the tenant's files (``domain/mentions.py``), as the entity store keeps it."""

    entity_id: str = Field(description="kind:key, e.g. organisation:acme, identifier:INV-2024-0042")
    kind: EntityKind
    label: str = Field(description="How the files write it most often")
    files: int = Field(description="Stored files that name it (every version counted)")
    detail: str | None = Field(default=None, description="What an identifier is: invoice, order, iban, …")
    contact_id: str | None = Field(default=None, description="The contact it is, or whose organisation it is")


class EntityFile(Frozen):
    """A file that names an entity."""

    file_id: str
    filename: str
    title: str | None
    came_from: str
    mentions: int
    location: str
    thread_id: str | None = None
    created_at: datetime


class EntityContact(Frozen):
    contact_id: str
    email: str
    name: str
    organisation: str | None = None


class EntityThread(Frozen):
    thread_id: str
    subject: str
    files: int


class EntityPage(Frozen):
    """One entity: what it is, its contact, the files that name it (latest versions, not trashed), and the
    mail threads those files came in."""

    entity: EntityInfo
    contact: EntityContact | None = None
    files: list[EntityFile]
    threads: list[EntityThread]
