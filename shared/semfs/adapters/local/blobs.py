"""``LocalBlobStore``: blobs as files under a directory, written atomically."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from semfs.domain.errors import InvalidRequest, NotFound
from semfs.ports.blobs import INLINE_TYPES


class LocalBlobStore:
    """Files under ``root``; a put writes a temp file and renames it over the key (atomic)."""

    def __init__(self, root: Path, base_url: str = "http://127.0.0.1:8080") -> None:
        self._root = root
        self._base_url = base_url

    def _secret(self) -> bytes:
        path = self._root.parent / "signing.key"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(secrets.token_bytes(32))
            path.chmod(0o600)
        return path.read_bytes()

    def download_url(
        self, key: str, filename: str, expires_s: int, ref: str | None = None, inline_type: str | None = None
    ) -> str:
        claims = {"k": self._check(key), "f": filename, "e": int(time.time()) + expires_s, "r": ref}
        body = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        mac = hmac.new(self._secret(), body.encode(), hashlib.sha256).hexdigest()
        # (the host shows inline only the types it allows, whatever the link asks)
        return f"{self._base_url}/download/{body}.{mac}" + ("?inline=1" if inline_type in INLINE_TYPES else "")

    def open_download(self, token: str) -> tuple[str, bytes, str | None]:
        """(filename, bytes, ref) for a link made by ``download_url``; ``NotFound`` if forged or expired."""
        body, _, mac = token.rpartition(".")
        good = hmac.new(self._secret(), body.encode(), hashlib.sha256).hexdigest()
        if not body or not hmac.compare_digest(mac, good):
            raise NotFound("invalid download link")
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        if claims["e"] < time.time():
            raise NotFound("expired download link")
        ref = claims.get("r")
        return str(claims["f"]), self.get(str(claims["k"])), str(ref) if ref else None

    def presign_upload(
        self, tenant_id: str, filename: str, max_bytes: int, expires_s: int, metadata: dict[str, str] | None = None
    ) -> dict[str, Any] | None:
        return None  # the local host takes uploads in the request body

    def metadata(self, key: str) -> dict[str, str]:
        if not self._path(key).exists():
            raise NotFound(f"no blob {key}")
        return {}  # the local host takes uploads in its request body: who sent one is known there

    def _check(self, key: str) -> str:
        self._path(key)
        return key

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if not key or key.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise InvalidRequest(f"invalid blob key: {key!r}")
        return self._root.joinpath(*parts)

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
        try:  # the folder is there for all but a tenant's first blobs: no mkdir for each (four a file)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        except FileNotFoundError:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            Path(tmp).replace(path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError as e:
            raise NotFound(f"no blob {key}") from e

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def delete_prefix(self, prefix: str) -> int:
        """Every file under the folder ``prefix`` names (it ends with ``/``); how many went."""
        if not prefix.endswith("/"):
            raise InvalidRequest(f"a prefix to delete ends with '/': {prefix!r}")
        folder = self._path(prefix[:-1])  # exactly the folder named: "a//" is no way to say "a/"
        if not folder.is_dir():
            return 0
        gone = sum(1 for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".tmp-"))
        shutil.rmtree(folder, ignore_errors=True)
        return gone

    def list(self, prefix: str, after: str | None = None) -> Iterator[tuple[str, int]]:
        # walk only the folder the prefix names (a file's derived/ folder, not every file of every tenant)
        folder = self._root / prefix.rsplit("/", 1)[0] if "/" in prefix else self._root
        if not folder.is_dir():
            return
        found = (
            (p.relative_to(self._root).as_posix(), p)
            for p in folder.rglob("*")
            if p.is_file() and not p.name.startswith(".tmp-")
        )
        keys = sorted((k, p) for k, p in found if k.startswith(prefix) and (after is None or k > after))
        for key, path in keys:
            yield key, path.stat().st_size
