from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Protocol

# what a browser may show inline (the web page's preview): formats it displays without running anything of
# the file's. HTML, SVG and the rest are only ever downloaded.
INLINE_TYPES = frozenset({"application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp", "text/plain"})


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

    def delete_prefix(self, prefix: str) -> int:
        """Remove every key under ``prefix`` (which ends with ``/``), in S3 every version of each, also
        of keys deleted earlier whose noncurrent versions remain; how many objects (versions) went.
        For erasing a whole tenant. Idempotent."""
        ...

    def download_url(
        self, key: str, filename: str, expires_s: int, ref: str | None = None, inline_type: str | None = None
    ) -> str:
        """A short-lived URL that downloads ``key`` as ``filename`` without other credentials
        (a presigned GET in S3, a signed link served by ``semfs serve`` locally). ``ref``
        (``tenant/file_id``) is signed into a local link so the host can refuse it once the file is
        deleted; an S3 link works until it expires. ``inline_type`` (one of ``INLINE_TYPES``): a link the
        browser shows as that type instead of saving it (the web page's preview)."""
        ...

    def open_download(self, token: str) -> tuple[str, bytes, str | None]:
        """``(filename, bytes, ref)`` for a link this store made with ``download_url`` and serves itself
        (locally, ``/download/{token}``). Raises ``NotFound`` for a forged or expired link, and always
        for a store whose links go straight to the service (S3)."""
        ...

    def presign_upload(
        self, tenant_id: str, filename: str, max_bytes: int, expires_s: int, metadata: dict[str, str] | None = None
    ) -> dict[str, Any] | None:
        """Where a client uploads a new file directly (an S3 presigned POST under ``uploads/{tenant}/``, with
        ``metadata`` pinned by its policy: the client cannot change it), or ``None`` when uploads come through
        the API's own request body (the local host)."""
        ...

    def metadata(self, key: str) -> dict[str, str]:
        """The metadata an object was stored with (an S3 object's user metadata: what ``presign_upload``
        pinned); ``{}`` for none, or a store that keeps none (local). ``NotFound`` when there is no object."""
        ...

    def list(self, prefix: str, after: str | None = None) -> Iterator[tuple[str, int]]:
        """``(key, size in bytes)`` of every object whose key starts with ``prefix`` (and sorts after
        ``after``, to resume a listing), in lexical order."""
        ...
