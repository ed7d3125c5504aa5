"""``LocalBlobStore``: blobs as files under a directory, written atomically."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

from semfs.domain.errors import InvalidRequest, NotFound


class LocalBlobStore:
    """Files under ``root``; a put writes a temp file and renames it over the key (atomic)."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def _path(self, key: str) -> Path:
        parts = key.split("/")
        if not key or key.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise InvalidRequest(f"invalid blob key: {key!r}")
        return self._root.joinpath(*parts)

    def put(self, key: str, data: bytes) -> None:
        path = self._path(key)
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

    def list(self, prefix: str) -> Iterator[str]:
        if not self._root.exists():
            return
        keys = (
            p.relative_to(self._root).as_posix()
            for p in self._root.rglob("*")
            if p.is_file() and not p.name.startswith(".tmp-")
        )
        yield from sorted(k for k in keys if k.startswith(prefix))
