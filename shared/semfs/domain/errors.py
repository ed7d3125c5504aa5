"""The error taxonomy. Class names are the Step Functions contract (docs/outcomes.md).

The ASL's ``ErrorEquals`` matches the raised class name exactly, so a task boundary re-raises the
family name (``RetryableError`` / ``PermanentError``) and keeps the leaf and outcome in the message.
Code never branches on message text: it reads ``.outcome``.
"""

from __future__ import annotations

from semfs.domain.outcomes import Outcome, RequestOutcome


class SemfsError(Exception):
    """Base of every error semfs raises on purpose."""

    outcome: Outcome = Outcome.FAILED_INTERNAL

    def __init__(self, reason: str, *, outcome: Outcome | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        if outcome is not None:
            self.outcome = outcome

    def __reduce__(self) -> tuple[object, ...]:
        # Errors cross the extraction subprocess boundary; keep the outcome through pickling.
        return (_rebuild, (type(self), self.reason, self.outcome))


def _rebuild(cls: type[SemfsError], reason: str, outcome: Outcome) -> SemfsError:
    return cls(reason, outcome=outcome)


class RetryableError(SemfsError):
    """Transient: the same call may succeed later (throttling, a timeout talking to a service)."""


class PermanentError(SemfsError):
    """Retrying cannot help: the input or configuration is the problem. Ends the file with ``outcome``."""


class FileRejected(PermanentError):
    """The input is refused before or while parsing (too large, bomb, wrong type, …)."""


class FileSkipped(PermanentError):
    """Nothing to index, and that is not a failure (empty, encrypted, unsupported, duplicate)."""


class ParseFailed(PermanentError):
    outcome = Outcome.FAILED_PARSE


class EmbeddingUnavailable(RetryableError):
    """The embedder cannot answer now; search degrades to keyword-only."""

    outcome = Outcome.FAILED_EMBED


class RerankUnavailable(SemfsError):
    """The rerank endpoint failed; the search keeps its fused order."""


class EnrichmentFailed(RetryableError):
    outcome = Outcome.FAILED_LLM


class EnrichmentUnavailable(EnrichmentFailed):
    """The LLM endpoint is throttling (429), timing out or unreachable: the extractive fallback is for now,
    and the file is enriched again later (``FileRecord.enrich_again``, the reconcile sweep)."""


class EmbeddingKeyRefused(PermanentError):
    """The embeddings endpoint refused semfs's key (401/403): a configuration error, neither the file's
    nor for now, so no retry can help until a person fixes the key. A file ends ``FAILED_CONFIG`` (the
    reconcile sweep retries those, a few a sweep); a request degrades as for ``EmbeddingUnavailable``."""

    outcome = Outcome.FAILED_CONFIG


class ChatKeyRefused(EnrichmentUnavailable):
    """The chat endpoint refused semfs's key (401/403): enrichment falls back and is done again later
    (``enrich_again``), /ask answers extractively; nothing waits on a retry that cannot succeed."""

    outcome = Outcome.FAILED_CONFIG


class IndexUnavailable(RetryableError):
    outcome = Outcome.FAILED_INDEX


class RequestError(SemfsError):
    """The family of a caller's request that cannot be done as asked: it changes nothing and says why.
    Each leaf has its own ``request_outcome`` and HTTP status; its ``outcome`` stays ``FAILED_INTERNAL``
    only for the case that one escapes inside a stage, where it means the pipeline's own request failed."""

    request_outcome: RequestOutcome = RequestOutcome.INVALID_REQUEST
    http_status: int = 400


class NotFound(RequestError):
    """No such record in this tenant (another tenant's file is also NotFound, never Forbidden)."""

    request_outcome = RequestOutcome.NOT_FOUND
    http_status = 404


class Conflict(RequestError):
    """A conditional write lost (the record exists, or a newer version is already latest)."""

    request_outcome = RequestOutcome.CONFLICT
    http_status = 409


class InvalidRequest(RequestError):
    """A caller's request is malformed (bad filter, unknown mode)."""

    request_outcome = RequestOutcome.INVALID_REQUEST
    http_status = 400


class Busy(RequestError):
    """The tenant already has ``SEMFS_TENANT_MAX_QUEUED`` files waiting to start: nothing was stored,
    and the same request succeeds once some of them have run (HTTP 429 with ``Retry-After``; SMTP 451)."""

    request_outcome = RequestOutcome.BUSY
    http_status = 429

    def __init__(self, reason: str, retry_after_s: int = 10, *, outcome: Outcome | None = None) -> None:
        super().__init__(reason, outcome=outcome)
        self.retry_after_s = retry_after_s


class Disabled(RequestError):
    """The feature the request needs is switched off here (``SEMFS_ENABLE_*``): nothing was done or
    stored, and the same request succeeds once it is on again (HTTP 503; SMTP 451)."""

    request_outcome = RequestOutcome.DISABLED
    http_status = 503


def family_name(error: BaseException) -> str:
    """The name the state machine matches: the family, never the leaf."""
    if isinstance(error, RetryableError):
        return "RetryableError"
    if isinstance(error, PermanentError):
        return "PermanentError"
    return type(error).__name__


# What a file's reason says when a worker process could not start because it imported the caller's script
# (extractors/runner.py), and why build_container refuses to run inside such a worker (bootstrap.py)
UNGUARDED_MAIN = (
    "the extraction worker could not start: a worker process imports the script that started this one (Python's "
    "rule for forkserver and spawn), and this script calls semfs as it is imported. Put the calls under "
    '`if __name__ == "__main__":` (https://docs.python.org/3/library/multiprocessing.html, "Safe importing of '
    'main module")'
)


class MailboxUnavailable(RetryableError):
    """A mail account's server could not be reached or dropped the connection: the next poll tries again
    from the folder's cursor, and nothing read so far is read twice."""


class MailboxRefused(PermanentError):
    """A mail account's server refused its login (a wrong password, an expired token, a folder it does not
    have): polling it again changes nothing until the account is corrected."""

    outcome = Outcome.FAILED_CONFIG
