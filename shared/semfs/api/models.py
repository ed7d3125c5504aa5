"""Request and response models of the API: what the OpenAPI document says each route takes and returns.

Requests reject unknown fields (a misspelt ``{"add": […]}`` is a 422, not a silent no-op). ``FileOut`` is
the public view of a ``FileRecord`` (storage keys left out); a test keeps the two in step.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from semfs.domain.access import NAME_PATTERN
from semfs.domain.mail_accounts import MailRule
from semfs.domain.mentions import FileEntity
from semfs.domain.models import (
    NOTE_MAX_CHARS,
    Activity,
    Extraction,
    IsoDate,
    JsonInt,
    Location,
    Note,
    SavedView,
    SearchFilters,
    StageTiming,
)
from semfs.domain.outcomes import Outcome, Status
from semfs.domain.results import (
    Answer,
    BriefingItem,
    Capabilities,
    EntityInfo,
    EntityPage,
    FacetCounts,
    HistoryEntry,
    MergeSuggestion,
    QueueView,
    SimilarFile,
)
from semfs.domain.tags import MAX_LABEL_LEN
from semfs.domain.vocabulary import SourceType

# not in a file's public view: storage keys, and its share links (GET /files/{id}/links, for its owner)
HIDDEN = frozenset({"blob_key", "text_key", "chunks_key", "source_key", "links"})


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _query_bool(value: Any) -> Any:
    """A boolean in a query string is ``true`` or ``false``: "0", "yes" and "" are refused, not guessed."""
    if isinstance(value, str):
        if value.lower() not in ("true", "false"):
            raise ValueError("a boolean is true or false")
        return value.lower() == "true"
    return value


QueryBool = Annotated[bool, BeforeValidator(_query_bool)]

# A tag as a person types it: what the document declares (at most 48 characters, a letter or digit, none of
# the characters of links and markup); the route still answers 400 for the rest of what is no tag (a URL).
TAG_SCHEMA = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_LABEL_LEN,
    "pattern": "^[^<>{}\\[\\]`@]*[A-Za-z0-9][^<>{}\\[\\]`@]*$",
}
TagLabel = Annotated[str, WithJsonSchema(TAG_SCHEMA)]


# -- requests ----------------------------------------------------------------------------------------
class AskRequest(Strict):
    question: str = Field(min_length=1, max_length=2000, description="A question the files should answer.")
    filters: SearchFilters = SearchFilters()
    file_id: str | None = Field(default=None, description="Answer from this file only.")
    thread_id: str | None = Field(default=None, description="Answer from this thread only (its id or subject).")
    limit: JsonInt = Field(default=6, ge=1, le=20, description="Passages to consider.")
    follows: list[Annotated[str, Field(max_length=2000)]] = Field(
        default_factory=list,
        max_length=10,
        description="A follow-up's earlier questions, oldest first: the last two are read with the question to "
        "find its passages ('and for contractors?'), in the same scope.",
    )


class ContextRequest(Strict):
    subject: str = Field(default="", max_length=1000)
    body: str = Field(default="", max_length=20_000)
    contact_id: str | None = Field(default=None, description="A contact id, name or address.")
    thread_id: str | None = Field(default=None, description="A thread id or subject.")
    limit: JsonInt = Field(default=5, ge=1, le=20)


class TagPatch(Strict):
    add_tags: list[TagLabel] = Field(default_factory=list, max_length=50)
    remove_tags: list[TagLabel] = Field(default_factory=list, max_length=50)


class TagMerge(Strict):
    merge: TagLabel = Field(description="The tag that goes away.")
    into: TagLabel = Field(description="The tag that stays.")


class NoteIn(Strict):
    text: str = Field(min_length=1, max_length=NOTE_MAX_CHARS, description="The note, plain text")


class ViewParams(Strict):
    """The Documents listing's parameters a saved view keeps (as its address names them)."""

    tag: str | None = Field(default=None, max_length=200)
    source: str | None = Field(default=None, max_length=200)
    type: str | None = Field(default=None, max_length=200)
    thread: str | None = Field(default=None, max_length=200)
    contact: str | None = Field(default=None, max_length=200)
    since: str | None = Field(default=None, max_length=200)
    until: str | None = Field(default=None, max_length=200)
    sort: Literal["newest", "oldest", "name", "size"] | None = None


class ViewIn(Strict):
    params: ViewParams = Field(default_factory=ViewParams)
    # who else sees it: private, tenant (the default), group:NAME or user:NAME
    share_with: list[
        Annotated[str, Field(max_length=80, pattern=f"^(private|tenant|(group|user):{NAME_PATTERN})$")]
    ] = Field(default_factory=lambda: ["tenant"], max_length=16)


# a saved view's name in its address: a letter or digit somewhere, no "/" (it is one path segment)
VIEW_NAME_PATTERN = "^[^/]*[A-Za-z0-9][^/]*$"


class ViewsOut(BaseModel):
    views: list[SavedView]


class History(BaseModel):
    """What happened to a file version, oldest first."""

    entries: list[HistoryEntry]


class VersionLink(Strict):
    previous_version_id: str = Field(min_length=1, max_length=100)


# -- responses ---------------------------------------------------------------------------------------
class FileFilters(BaseModel):
    """Which files ``GET /files`` lists and ``GET /files/facets`` counts: one model for both, so the two
    can never disagree on what a filter means. Threads and contacts may be given by name or id."""

    tag: str | None = None
    source_type: SourceType | None = None
    mime_type: str | None = None
    thread_id: str | None = None
    contact_id: str | None = None
    entity: str | None = Field(default=None, max_length=200, description="An entity id, or its name as written")
    status: Status | None = None
    since: IsoDate | None = None
    until: IsoDate | None = None
    include_history: QueryBool = False
    include_duplicates: QueryBool | None = Field(
        default=None,
        description="copies of files already here (SKIPPED_DUPLICATE); default: yes, but not under "
        "listing=problems (a copy is no problem: the file is here)",
    )
    listing: Literal["all", "documents", "problems"] = Field(
        default="all",
        description="documents: files read or being read; problems: files skipped or failed, with their reasons",
    )


class ErrorDetail(BaseModel):
    code: str = Field(description="Machine-readable: not_found, unauthorized, validation_error, …")
    message: str
    details: list[dict[str, Any]] = Field(default_factory=list)


class ErrorOut(BaseModel):
    """The one error body every status uses."""

    error: ErrorDetail


class FileOut(BaseModel):
    """A file version: identity, provenance, meaning and processing outcome."""

    file_id: str
    tenant_id: str
    lineage_id: str
    version: int
    previous_version_id: str | None = None
    is_latest: bool
    owner: str | None = Field(default=None, description="The user who owns it (none: the tenant's)")
    readers: list[str] = Field(
        default_factory=list, description="Who may read it: tenant, u:NAME, g:NAME or admins (none: tenant)"
    )
    sha256: str
    filename: str
    normalised_name: str
    mime_type: str
    size_bytes: int
    source_type: SourceType
    version_key: str | None = None
    source_message_id: str | None = None
    uploaded_by: str | None = None
    upload_context: str | None = None
    came_from: str = Field(
        default="", description="Where the file came from, for a person: its path, mail, drop folder or agent"
    )
    contact_ids: list[str] = Field(default_factory=list)
    thread_id: str | None = None
    thread_subject: str | None = Field(default=None, description="GET /files/{id} only: the thread's subject")
    contact_names: dict[str, str] = Field(
        default_factory=dict, description="GET /files/{id} only: contact id → the contact's name or address"
    )
    provenance: dict[str, Any] = Field(default_factory=dict)
    title: str | None = None
    summary: str | None = None
    tags: list[str] = Field(default_factory=list)
    tag_labels: dict[str, str] = Field(default_factory=dict)
    auto_tags: list[str] = Field(default_factory=list)
    entities: list[str] = Field(
        default_factory=list, description="Entity ids the text names, most mentioned first (GET /files/{id}/entities)"
    )
    change_summary: str | None = None
    notes: list[Note] = Field(default_factory=list, description="People's notes on this version, oldest first")
    activity: list[Activity] = Field(
        default_factory=list, description="What people did to it, oldest first (GET /files/{id}/history: all of it)"
    )
    status: Status
    outcome: Outcome | None = None
    enrich_again: bool = False  # enriched by the fallback while the LLM was unavailable; redone by reconcile
    error: str | None = None
    duplicate_of: str | None = None
    timings: list[StageTiming] = Field(default_factory=list)
    pages: int | None = None
    extraction: Extraction | None = None
    ocr_engine: str | None = None
    ocr_confidence: float | None = None
    ocr_low_confidence: bool = False
    document_date: datetime | None = None
    chunk_count: int = Field(default=0, description="chunks embedded, found by meaning and by their words")
    keyword_chunks: int = Field(
        default=0, description="chunks past the embedding cap (a large table's rows): found by their words only"
    )
    embedding_model: str | None = None
    embedding_dim: int | None = None
    embedded_at: datetime | None = None
    attempt: int = 0
    revision: int = 0
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None


class CreatedFileOut(FileOut):
    created: bool = Field(description="False when these bytes from this source were registered before.")
    status_url: str = Field(default="", description="Where the file's progress and outcome are read.")


class UploadTarget(BaseModel):
    """Where to send the bytes (AWS): a presigned POST for a key under ``uploads/{tenant}/``."""

    key: str
    url: str
    fields: dict[str, str]
    expires_in: int
    file_id: str | None = Field(
        default=None, description="With ?sha256=: the id the file will have once the bucket's notice is read."
    )
    status_url: str | None = Field(default=None, description="With ?sha256=: poll it (404 until it arrives).")


class FileList(BaseModel):
    files: list[FileOut]
    next_cursor: str | None = Field(description="Pass as ?cursor= for the next page; null on the last.")


class Versions(BaseModel):
    versions: list[FileOut]


class TextBlock(BaseModel):
    kind: str
    text: str
    location: Location
    level: int = 0
    truncated: bool = False  # the block alone did not fit a page: its text is cut


class FileText(BaseModel):
    file_id: str
    blocks: list[TextBlock]
    next_offset: int | None = None  # ?offset= for the next page; none: this is the last


class SimilarOut(BaseModel):
    files: list[SimilarFile]


class Download(BaseModel):
    url: str
    expires_in: int


class Deleted(BaseModel):
    deleted: list[str] = Field(description="The versions deleted by this request")
    in_trash: bool = Field(description="True: restorable (POST /files/{id}/restore) until purge_on; false: erased")
    purge_on: str | None = Field(default=None, description="The date the trash purges them (ISO 8601)")


class Restored(BaseModel):
    restored: list[FileOut]


class TrashItem(BaseModel):
    file_id: str
    filename: str
    title: str | None
    version: int
    deleted_at: datetime | None
    purge_on: str | None


class TrashOut(BaseModel):
    items: list[TrashItem]
    total: int


class Purged(BaseModel):
    purged: list[str]


class TagCount(BaseModel):
    tag: str
    manual: int
    auto: int


class TagsOut(BaseModel):
    tags: list[TagCount]


class SuggestionsOut(BaseModel):
    suggestions: list[MergeSuggestion]


class MergeOut(BaseModel):
    merged: str
    into: str
    files: int


class StatusCount(BaseModel):
    status: str
    outcome: str | None
    count: int


class StatusOut(BaseModel):
    tenant: str = Field(description="The tenant the caller's credentials belong to (the web page's sign-in check)")
    counts: list[StatusCount]
    warnings: list[str] = Field(default_factory=list, description="What must be fixed (a refused model key)")


class Health(BaseModel):
    status: Literal["ok"]


class ProtectedResourceOut(BaseModel):
    """OAuth 2.0 Protected Resource Metadata (RFC 9728) of the MCP endpoint: where an MCP client signs its user
    in (the MCP authorization specification), with the fields semfs sets."""

    resource: str = Field(description="The MCP endpoint these tokens are for, as a client dials it")
    authorization_servers: list[str] = Field(description="The issuer whose tokens this API accepts")
    scopes_supported: list[str]
    bearer_methods_supported: list[Literal["header"]] = ["header"]
    resource_name: str = "semfs"


# The use cases' typed results, named as the OpenAPI document has always named them.
class AskOut(Answer):
    """A grounded answer, or why there is none."""


class ContextItem(BriefingItem):
    pass


class ContextOut(BaseModel):
    items: list[ContextItem]


class Facets(FacetCounts):
    pass


class JobsOut(QueueView):
    pass


class CapabilitiesOut(Capabilities):
    """What this server does now: each feature on, or off and why."""


class EntityList(BaseModel):
    entities: list[EntityInfo]


class EntityOut(EntityPage):
    """One entity's page."""


class FileEntities(BaseModel):
    entities: list[FileEntity]


class ShareRequest(BaseModel):
    """Who to share a file with and who to stop sharing it with: ``private``, ``tenant``, ``group:NAME`` or
    ``user:NAME`` each."""

    model_config = ConfigDict(extra="forbid")
    add: list[Annotated[str, Field(max_length=80)]] = Field(default_factory=list, max_length=64)
    revoke: list[Annotated[str, Field(max_length=80)]] = Field(default_factory=list, max_length=64)


class SharingOut(BaseModel):
    """Who may read a file: its owner (none: the tenant's) and its readers (``tenant``: everyone in it,
    ``u:NAME`` a user, ``g:NAME`` a group, ``admins`` the tenant's admins only)."""

    file_id: str
    owner: str | None
    readers: list[str]


class LinkIn(Strict):
    days: int = Field(default=7, ge=1, le=90, description="How long the link works")


class LinkOut(BaseModel):
    link_id: str
    by: str | None = None
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None = None
    live: bool


class LinksOut(BaseModel):
    links: list[LinkOut]


class LinkCreated(BaseModel):
    """A new share link: ``url`` is shown this once (semfs keeps only its hash)."""

    link_id: str
    url: str
    path: str
    expires_at: datetime


class Me(BaseModel):
    user: str | None = Field(description="Your user name (none: the tenant's implicit admin, a tenant without users)")
    role: str
    groups: list[str]
    admin: bool


class PersonOut(BaseModel):
    name: str
    role: str
    groups: list[str]
    addresses: list[str] = Field(description="An admin sees them; others get none")


class GroupOut(BaseModel):
    name: str
    members: list[str]
    addresses: list[str] = Field(description="An admin sees them; others get none")


class PeopleOut(BaseModel):
    me: Me
    users: list[PersonOut]
    groups: list[GroupOut]


# What the document promises is what the server takes (the fuzzer's schema-valid "0000…" address and "" group
# names were refused with a 400): a mail address with one "@" and no space, control character or lone surrogate
# (checked with Python's re, which reads those: pydantic's own engine refuses such a string before any pattern);
# its length in the pattern too, as RFC 5321 bounds it (64 before the "@", 254 in all): a maxLength beside the
# pattern had the fuzzer make addresses without an "@"
_ADDRESS_CHAR = r"[^\s@\x00-\x1f\x7f-\x9f]"
Address = Annotated[str, Field(pattern=f"^{_ADDRESS_CHAR}{{1,64}}@{_ADDRESS_CHAR}{{1,189}}$")]
PersonName = Annotated[str, Field(max_length=63, pattern=f"^{NAME_PATTERN}$")]


class UserIn(Strict):
    model_config = ConfigDict(extra="forbid", regex_engine="python-re")

    role: Literal["admin", "member"] = "member"
    groups: list[PersonName] = Field(default_factory=list, max_length=64)
    addresses: list[Address] = Field(default_factory=list, max_length=32)


class GroupIn(Strict):
    model_config = ConfigDict(extra="forbid", regex_engine="python-re")

    addresses: list[Address] = Field(default_factory=list, max_length=32)
    members: list[PersonName] | None = Field(default=None, max_length=1000)


class MailAccountIn(Strict):
    """A mail account as an admin sets it (``domain/mail_accounts.py``); ``secret`` (a password, or the OAuth
    grant's JSON with ``auth`` xoauth2) only when it is new or changes: it is never read back. Strict: ``0`` is
    no ``false`` and ``"993"`` no port (the fuzzer's ``enabled: 0`` was taken)."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        # the rule between two fields, in the document too: moving processed messages needs a folder to move to
        json_schema_extra={
            "if": {"properties": {"after": {"const": "move"}}, "required": ["after"]},
            "then": {"properties": {"move_to": {"type": "string", "minLength": 1}}, "required": ["move_to"]},
        },
    )

    host: str = Field(min_length=1, max_length=253)
    port: int | None = Field(default=None, ge=1, le=65535)
    security: Literal["tls", "starttls", "none"] = "tls"
    username: str = Field(min_length=1, max_length=320)
    auth: Literal["password", "xoauth2"] = "password"
    secret: str | None = Field(default=None, min_length=1, max_length=8000)
    folders: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        default_factory=lambda: ["INBOX"], min_length=1
    )
    after: Literal["none", "seen", "flag", "move"] = "seen"
    move_to: str | None = Field(default=None, max_length=200)
    address: str | None = Field(default=None, max_length=320)
    enabled: bool = True


class MailRulesIn(Strict):
    rules: list[MailRule] = Field(default_factory=list, max_length=50)  # the domain's rule, as it is stored


class MailPreviewIn(Strict):
    rules: list[MailRule] | None = Field(default=None, max_length=50)  # unsaved rules to try; none: the saved ones
    count: int = Field(default=50, ge=1, le=200)


class MailAccountOut(BaseModel):
    name: str
    host: str
    port: int
    security: str
    username: str
    auth: str
    folders: list[str]
    after: str
    move_to: str | None
    address: str | None
    rules: list[MailRule]
    enabled: bool
    last_poll_at: datetime | None
    last_error: str | None


class MailAccountsOut(BaseModel):
    accounts: list[MailAccountOut]


class MailFolderPollOut(BaseModel):
    folder: str
    read: int
    ingested: int
    duplicates: int
    skipped: int
    files: int
    restarted: bool
    more: bool


class MailPollOut(BaseModel):
    account: str
    folders: list[MailFolderPollOut]
    error: str | None


class MailPreviewLineOut(BaseModel):
    uid: int
    subject: str
    sender: str | None
    attachments: list[str]
    rule: str | None
    take: str


class MailPreviewOut(BaseModel):
    messages: list[MailPreviewLineOut]
