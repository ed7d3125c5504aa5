"""Typed records: the file record (source of truth), extracted documents, chunks, search I/O."""

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, StrictBool

from semfs.domain.outcomes import Outcome, Status
from semfs.domain.vocabulary import SearchMode, SourceType

Extraction = Literal["text_layer", "ocr", "mixed"]


def utcnow() -> datetime:
    return datetime.now(UTC)


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Location(Frozen):
    """Where in a file a piece of text sits. Only the fields that apply are set."""

    page: int | None = None
    sheet: str | None = None
    row_start: int | None = None
    row_end: int | None = None
    slide: int | None = None
    paragraph: int | None = None
    section: str | None = None

    def label(self) -> str:
        parts: list[str] = []
        if self.page is not None:
            parts.append(f"page {self.page}")
        if self.sheet is not None:
            rows = ""
            if self.row_start is not None:
                rows = f" rows {self.row_start}-{self.row_end or self.row_start}"
            parts.append(f"sheet {self.sheet}{rows}")
        if self.sheet is None and self.row_start is not None:
            parts.append(f"rows {self.row_start}-{self.row_end or self.row_start}")
        if self.slide is not None:
            parts.append(f"slide {self.slide}")
        if self.section:
            parts.append(f"§ {self.section}")
        if self.paragraph is not None and not parts:
            parts.append(f"paragraph {self.paragraph}")
        return ", ".join(parts) or "document"


# "title": a plain-text file's first line taken as its title — shown with the text, and indexed as the
# title (on every chunk, and at the head of each chunk's embedding text) rather than as chunk text
BlockKind = Literal["title", "heading", "paragraph", "table", "notes", "code"]


class Block(Frozen):
    """One structural unit of an extracted document."""

    kind: BlockKind = "paragraph"
    text: str
    location: Location = Location()
    level: int = 0  # heading level, 1 = top


class ExtractedDocument(Frozen):
    """What an extractor returns: ordered blocks plus metadata. Stored as a blob, never in state."""

    blocks: list[Block]
    title: str | None = None
    pages: int | None = None
    extraction: Extraction = "text_layer"
    truncated: bool = False
    truncated_by: str | None = None  # which bound cut it and what was kept (the OK_PARTIAL reason)
    warnings: list[str] = Field(default_factory=list)
    # when the document says it was written (PDF/Office metadata, a message's Date:), not when it arrived
    document_date: datetime | None = None

    @property
    def text(self) -> str:
        return "\n\n".join(b.text for b in self.blocks)


class Chunk(Frozen):
    n: int
    text: str
    location: Location
    tokens: int


class EntityCandidate(Frozen):
    """An entity an LLM says a document names; kept only where the text holds it (``domain/mentions.py``)."""

    kind: str
    text: str


class Enrichment(Frozen):
    title: str
    summary: str
    auto_tags: list[str]
    fallback: bool = False
    entities: list[EntityCandidate] = Field(default_factory=list)  # the LLM's; the extractive enricher names none


class StageTiming(Frozen):
    stage: str
    ms: float


# one note is a paragraph or a few, not a document (that is a file of its own); with the history, a file's
# notes keep its record well inside DynamoDB's 400 KB item
NOTE_MAX_CHARS = 2000
NOTES_MAX = 50  # notes on one file version
ACTIVITY_MAX = 200  # entries of a file's history kept, the newest


LINKS_MAX = 20  # share links on one file version (revoked and expired ones included)
LINK_DAYS_MAX = 90


class ShareLink(Frozen):
    """A read-only link to one file version that needs no account: its token is shown once, and kept as its
    SHA-256 (like an API key); it stops working when it expires, is revoked, or the file is deleted."""

    link_id: str
    token_sha256: str
    by: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    expires_at: datetime
    revoked_at: datetime | None = None

    def live(self, now: datetime) -> bool:
        return self.revoked_at is None and now < self.expires_at


class Note(Frozen):
    """A person's note on a file version: stored with its record, searchable through the file's card."""

    note_id: str
    text: str
    author: str | None = None
    at: datetime = Field(default_factory=utcnow)


VIEWS_MAX = 100  # saved views of one tenant


class SavedView(Frozen):
    """A named listing a tenant keeps: the Documents view's filters and sort, as its address has them
    (``tag``, ``source``, ``type``, ``thread``, ``contact``, ``since``, ``until``, ``sort``)."""

    name: str = Field(min_length=1, max_length=80)
    params: dict[str, str] = Field(default_factory=dict)
    by: str | None = None
    at: datetime = Field(default_factory=utcnow)
    # who sees it (``domain/access.py`` tokens): its maker alone, a group, or the whole tenant (a view saved
    # before access lists has none: the tenant's); ``owner`` is the user who saved it
    owner: str | None = None
    shared_with: list[str] = Field(default_factory=list)


class User(Frozen):
    """A person of a tenant (``domain/access.py``): their role, groups, and the mail addresses that are theirs
    (mail delivered to one of them is theirs to read)."""

    name: str
    role: Literal["admin", "member", "agent"] = "member"
    groups: list[str] = Field(default_factory=list)
    addresses: list[str] = Field(default_factory=list)  # lowercased
    created_at: datetime = Field(default_factory=utcnow)


class Group(Frozen):
    """A group of a tenant's users; mail to one of its addresses (a distribution list, a shared mailbox) is
    the group's to read."""

    name: str
    addresses: list[str] = Field(default_factory=list)  # lowercased
    created_at: datetime = Field(default_factory=utcnow)


ActivityAction = Literal[
    "tagged", "untagged", "noted", "unnoted", "trashed", "restored", "detached", "linked", "shared", "unshared"
]


class Activity(Frozen):
    """One thing a person did to a file version, for its history (what the pipeline did is in its own
    fields: received, processed, versioned)."""

    action: ActivityAction
    detail: str = ""
    by: str | None = None
    at: datetime = Field(default_factory=utcnow)


class FileRecord(Frozen):
    """The source of truth for one version of one file."""

    # identity
    file_id: str
    tenant_id: str
    lineage_id: str
    version: int = 1
    previous_version_id: str | None = None
    is_latest: bool = True
    sha256: str
    blob_key: str
    filename: str
    normalised_name: str
    mime_type: str = "application/octet-stream"
    size_bytes: int
    # provenance
    source_type: SourceType = "upload"
    source_key: str = ""
    # where "the same document" is recognised: the S3 key, the file's path, the drop-folder path, or the
    # filename within a thread; a new file with this key may be the next version (if its text agrees)
    version_key: str | None = None
    source_message_id: str | None = None
    uploaded_by: str | None = None
    upload_context: str | None = None
    contact_ids: list[str] = Field(default_factory=list)
    thread_id: str | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)
    # access (``domain/access.py``): the user who owns it, and who may read it (``tenant``, ``u:…``, ``g:…``);
    # a record from before access lists has none and reads as ``tenant``
    owner: str | None = None
    readers: list[str] = Field(default_factory=list)
    links: list[ShareLink] = Field(default_factory=list)  # read-only links to this version, newest last
    # meaning
    title: str | None = None
    summary: str | None = None
    tags: list[str] = Field(default_factory=list)  # manual tags, as slugs
    tag_labels: dict[str, str] = Field(default_factory=dict)  # slug → the label as typed, where it differs
    auto_tags: list[str] = Field(default_factory=list)
    # the entities the text names (``domain/mentions.py`` ids, most mentioned first, at most
    # MAX_FILE_ENTITIES): for facets and filters; every mention is in the entity store
    entities: list[str] = Field(default_factory=list)
    change_summary: str | None = None
    notes: list[Note] = Field(default_factory=list)  # oldest first, at most NOTES_MAX
    activity: list[Activity] = Field(default_factory=list)  # oldest first, the newest ACTIVITY_MAX kept
    # the enrichment fell back because the LLM was unavailable (429, timeout): the reconcile sweep runs
    # the file again, a bounded number per sweep, until an enrichment is the LLM's
    enrich_again: bool = False
    # processing
    status: Status = Status.RECEIVED
    outcome: Outcome | None = None
    error: str | None = None
    duplicate_of: str | None = None
    timings: list[StageTiming] = Field(default_factory=list)
    text_key: str | None = None
    chunks_key: str | None = None
    pages: int | None = None
    extraction: Extraction | None = None
    ocr_engine: str | None = None
    ocr_confidence: float | None = None
    ocr_low_confidence: bool = False  # mean OCR word confidence under SEMFS_OCR_MIN_CONFIDENCE: check the text
    # when the document says it was written (its metadata, a message's Date:); None: unknown
    document_date: datetime | None = None
    chunk_count: int = 0  # chunks embedded (and indexed for keywords)
    # chunks past the embedding cap or the file's time budget (a table of a million rows): indexed for keywords
    # only, from the derived ``keyword-chunks.json``; every row of a large table is found by its words
    keyword_chunks: int = 0
    # embeddings
    embedding_model: str | None = None
    embedding_dim: int | None = None
    embedded_at: datetime | None = None
    attempt: int = 0  # how often the file was run again (retry): part of its execution name
    # the stored revision this copy was read at: every write is conditional on it (optimistic locking)
    revision: int = 0
    # time
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    deleted_at: datetime | None = None

    def evolve(self, **changes: Any) -> "FileRecord":
        """A copy with ``changes`` applied and ``updated_at`` bumped (validated)."""
        data = self.model_dump()
        data.update(changes)
        data["updated_at"] = utcnow()
        return FileRecord.model_validate(data)

    def did(self, action: ActivityAction, detail: str = "", by: str | None = None) -> list[Activity]:
        """The history with one more entry (for ``evolve(activity=...)``), the oldest dropped past the cap."""
        return [*self.activity, Activity(action=action, detail=detail, by=by)][-ACTIVITY_MAX:]

    @property
    def all_tags(self) -> list[str]:
        return list(dict.fromkeys([*self.tags, *self.auto_tags]))

    @property
    def came_from(self) -> str:
        """Where the file came from, as a person tells two "Copyright" files apart: the path it was
        ingested from, the bucket key under the tenant's uploads, the drop folder's name, the mail it was
        attached to, or the agent and run that made it."""
        prov = self.provenance
        if self.source_type == "agent_generated" and prov.get("agent"):
            return f"agent {prov['agent']}" + (f", run {prov['run_id']}" if prov.get("run_id") else "")
        if self.source_type == "email_attachment" and self.upload_context:
            return self.upload_context
        kind, _, where = self.source_key.partition(":")
        if kind == "path":
            return where
        if kind == "s3":
            return where.removeprefix(f"uploads/{self.tenant_id}/")
        if kind == "inbox":
            return f"drop folder: {where}"
        return self.upload_context or (f"an upload by {self.uploaded_by}" if self.uploaded_by else "an upload")


DocKind = Literal["chunk", "card"]


class IndexDoc(Frozen):
    """One index document: a chunk, or the file card."""

    chunk_id: str
    kind: DocKind = "chunk"
    file_id: str
    lineage_id: str
    tenant_id: str
    version: int
    is_latest: bool
    contact_ids: list[str] = Field(default_factory=list)
    thread_id: str | None = None
    source_type: str
    tags: list[str] = Field(default_factory=list)
    readers: list[str] = Field(default_factory=lambda: ["tenant"])  # the file's readers (``domain/access.py``)
    mime_type: str
    filename: str
    title: str
    text: str
    location: Location = Location()
    embedding: list[float] | None = None
    embedding_model: str | None = None
    created_at: datetime


@dataclass(frozen=True)
class Citation:
    """A passage an answer rests on: the file and version, the chunk, where it is, and the quote."""

    file_id: str
    version: int
    chunk_id: str
    location: Location
    quote: str
    filename: str = ""  # what a person recognises the cited file by

    def as_dict(self) -> dict[str, Any]:
        return {
            "file_id": self.file_id,
            "filename": self.filename,
            "version": self.version,
            "chunk_id": self.chunk_id,
            "location": self.location.model_dump(exclude_none=True),
            "quote": self.quote,
        }


def iso_date(value: Any) -> Any:
    """A date as the API documents it (``YYYY-MM-DD``), not whatever pydantic can read as one: "0" was
    1970-01-01 (a Unix time) and an empty ``until=`` was taken."""
    if isinstance(value, str) and not (len(value) == 10 and value[4] == value[7] == "-"):
        raise ValueError("a date is YYYY-MM-DD")
    if isinstance(value, (int, float)):
        raise ValueError("a date is YYYY-MM-DD")
    return value


IsoDate = Annotated[date, BeforeValidator(iso_date)]


def json_integer(value: Any) -> Any:
    """An integer as JSON Schema has it (``5`` or ``5.0``), not ``true`` or ``"5"``, which pydantic reads as 1
    and 5."""
    if isinstance(value, (bool, str)):
        raise ValueError("an integer is a JSON number")
    return value


JsonInt = Annotated[int, BeforeValidator(json_integer)]


# Every list a request takes has a bound (a filter of ~1,000 tags answered 500: SQLite's variables); past
# it the request is refused (422) with the field named. A file carries far fewer tags than this.
MAX_FILTER_TAGS = 32
MAX_FILTER_FILES = 1000  # a scope of named files (an entity's files are at most 500)


class SearchFilters(Frozen):
    tags: list[Annotated[str, Field(max_length=200)]] = Field(default_factory=list, max_length=MAX_FILTER_TAGS)
    source_type: SourceType | None = None
    contact_id: str | None = None
    thread_id: str | None = None
    mime_type: str | None = None
    date_from: IsoDate | None = None
    date_to: IsoDate | None = None
    include_history: StrictBool = False  # (0, "yes" and "on" were read as booleans)
    file_ids: list[Annotated[str, Field(max_length=100)]] = Field(default_factory=list, max_length=MAX_FILTER_FILES)
    # files naming this entity: its id ("organisation:acme") or as a person writes it ("Acme Corp")
    entity: str | None = Field(default=None, max_length=200)
    # files agents made (``agent_generated``): None leaves it to the use — search shows them, ``ask`` and
    # ``context`` leave them out, so an agent's own draft never becomes the source of its next answer
    include_agent_files: StrictBool | None = None
    # who the search reads as (``domain/access.py``): set from the verified caller only, never from input
    # (a private attribute: no request body or MCP argument can name it); ``None`` reads every file
    _readers: tuple[str, ...] | None = PrivateAttr(default=None)

    @property
    def readers(self) -> tuple[str, ...] | None:
        return self._readers

    def read_as(self, tokens: tuple[str, ...] | None) -> "SearchFilters":
        """These filters for a caller reading as ``tokens`` (``Principal.tokens()``)."""
        copy = self.model_copy()
        copy._readers = tokens
        return copy


class SearchRequest(Frozen):
    query: str = Field(min_length=1, max_length=2000)
    limit: JsonInt = Field(default=10, ge=1, le=100)
    mode: SearchMode = "hybrid"
    filters: SearchFilters = SearchFilters()


class IndexHit(Frozen):
    """One leg's hit: a chunk and its leg score (higher is better)."""

    chunk_id: str
    file_id: str
    score: float


class Snippet(Frozen):
    chunk_id: str
    text: str
    location: Location
    highlights: list[tuple[int, int]] = Field(default_factory=list)


class SearchResultItem(Frozen):
    file_id: str
    filename: str
    title: str | None
    summary: str | None
    score: float  # the fused ranking score: orders this response, means nothing across queries or modes
    # the calibrated probability that the file answers the query (``domain/relevance.py``): the same
    # meaning in every mode and query; ``weak`` below ``relevance.WEAK``
    relevance: float = 0.0
    weak: bool = False
    version: int
    is_latest: bool
    tags: list[str]
    source_type: str
    mime_type: str
    snippets: list[Snippet]
    document_date: datetime | None = None  # when the document says it was written
    ingested_at: datetime | None = None  # when semfs received it
    # where it came from, in brief: agent/run/derived_from for agent files, sender/subject for mail
    origin: dict[str, Any] = Field(default_factory=dict)
    came_from: str = ""  # the same as a line a person reads (FileRecord.came_from)


class SearchResponse(Frozen):
    results: list[SearchResultItem]
    degraded: bool = False
    mode: SearchMode
    left_out: int = 0  # files that matched but fell below the relevance floor, so are not shown
    note: str | None = None  # why there are no results, in words, when there are none
