"""Outcome codes and processing statuses (docs/outcomes.md). Every file ends in exactly one outcome."""

from __future__ import annotations

from enum import StrEnum


class Status(StrEnum):
    RECEIVED = "received"
    EXTRACTING = "extracting"
    OCR = "ocr"
    ENRICHING = "enriching"
    EMBEDDING = "embedding"
    INDEXING = "indexing"
    INDEXED = "indexed"
    FAILED = "failed"
    SKIPPED = "skipped"
    TRASHED = "trashed"  # deleted, restorable until purged (pipeline/catalogue/trash.py)
    DELETED = "deleted"  # purged: a tombstone, what it stored erased

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_STATUSES


TERMINAL_STATUSES = frozenset({Status.INDEXED, Status.FAILED, Status.SKIPPED, Status.TRASHED, Status.DELETED})


class Outcome(StrEnum):
    OK = "OK"
    OK_PARTIAL = "OK_PARTIAL"
    OK_ENRICH_FALLBACK = "OK_ENRICH_FALLBACK"
    SKIPPED_EMPTY = "SKIPPED_EMPTY"
    SKIPPED_NO_TEXT = "SKIPPED_NO_TEXT"
    SKIPPED_UNSUPPORTED_TYPE = "SKIPPED_UNSUPPORTED_TYPE"
    SKIPPED_ENCRYPTED = "SKIPPED_ENCRYPTED"
    SKIPPED_DUPLICATE = "SKIPPED_DUPLICATE"
    SKIPPED_EMAIL_VERDICT = "SKIPPED_EMAIL_VERDICT"
    SKIPPED_CANCELLED = "SKIPPED_CANCELLED"  # taken out of the queue by a person before it was processed
    REJECTED_TOO_LARGE = "REJECTED_TOO_LARGE"
    REJECTED_TYPE_MISMATCH = "REJECTED_TYPE_MISMATCH"
    REJECTED_ARCHIVE_BOMB = "REJECTED_ARCHIVE_BOMB"
    REJECTED_UNSAFE_NAME = "REJECTED_UNSAFE_NAME"
    REJECTED_XML_ENTITY = "REJECTED_XML_ENTITY"
    REJECTED_IMAGE_PIXELS = "REJECTED_IMAGE_PIXELS"
    FAILED_PARSE = "FAILED_PARSE"
    FAILED_TIMEOUT = "FAILED_TIMEOUT"
    FAILED_MEMORY = "FAILED_MEMORY"
    FAILED_OCR = "FAILED_OCR"
    FAILED_LLM = "FAILED_LLM"
    FAILED_EMBED = "FAILED_EMBED"
    FAILED_INDEX = "FAILED_INDEX"
    FAILED_CONFIG = "FAILED_CONFIG"  # the model endpoint refused semfs's key (401/403): fixed by a person
    FAILED_INTERNAL = "FAILED_INTERNAL"

    @property
    def final_status(self) -> Status:
        """The terminal status a file with this outcome ends in."""
        if self.value.startswith("OK"):
            return Status.INDEXED
        if self.value.startswith(("SKIPPED", "REJECTED")):
            return Status.SKIPPED
        return Status.FAILED


class RequestOutcome(StrEnum):
    """What became of a caller's request that was not done as asked. A request is not a file: these are
    never a file's outcome, and they answer as a 4xx or, for a switched-off feature, 503 (the API) or exit
    code 1 or 2 (the CLI)."""

    NOT_FOUND = "NOT_FOUND"  # no such file (or thread, contact, key) in the caller's tenant
    CONFLICT = "CONFLICT"  # the state changed under the request (a newer version is latest, a race lost)
    INVALID_REQUEST = "INVALID_REQUEST"  # the request cannot be done as asked (a bad tag, a file not failed)
    BUSY = "BUSY"  # the tenant already has its share of files waiting: send this one again later
    DISABLED = "DISABLED"  # the feature asked for is switched off on this server (SEMFS_ENABLE_*)
