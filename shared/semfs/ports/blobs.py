from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol


class BlobStore(Protocol):
    """Bytes by key. Keys are ``/``-separated, relative, and never contain ``..``."""

    def put(self, key: str, data: bytes) -> None:
        """Store ``data`` under ``key``, replacing what was there. Idempotent. Atomic: a reader sees
        the old bytes or the new ones, never a part. Raises ``RetryableError`` on transient failure."""
        ...

    def get(self, key: str) -> bytes:
        """The bytes under ``key``. Raises ``NotFound`` if absent."""
        ...

    def exists(self, key: str) -> bool:
        """Whether ``key`` holds bytes."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key``; removing a missing key is not an error (idempotent)."""
        ...

    def download_url(self, key: str, filename: str, expires_s: int) -> str:
        """A short-lived URL that downloads ``key`` as ``filename`` without other credentials
        (a presigned GET in S3, a signed link served by ``semfs serve`` locally)."""
        ...

    def list(self, prefix: str) -> Iterator[str]:
        """Every key starting with ``prefix``, in lexical order."""
        ...
