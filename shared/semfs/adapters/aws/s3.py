"""``S3BlobStore``: blobs in the versioned, encrypted bucket."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote

from semfs.config import Settings
from semfs.deadlines import stop_if_late
from semfs.domain.errors import InvalidRequest, NotFound, PermanentError
from semfs.domain.outcomes import Outcome
from semfs.ports.blobs import INLINE_TYPES

from .clients import client, error_code, is_retryable, retryable


class S3BlobStore:
    """Objects under ``bucket``; server-side encryption (SSE-S3) on every put."""

    def __init__(self, settings: Settings) -> None:
        assert settings.aws.bucket
        self._settings = settings
        self._bucket = settings.aws.bucket

    @property
    def _s3(self) -> Any:
        return client(self._settings, "s3")

    @staticmethod
    def _check(key: str) -> str:
        if not key or key.startswith("/") or any(p in ("", ".", "..") for p in key.split("/")):
            raise InvalidRequest(f"invalid blob key: {key!r}")
        return key

    def _fail(self, e: Exception, what: str) -> Exception:
        if is_retryable(e):
            return retryable(e, what)
        return PermanentError(f"{what}: {error_code(e) or type(e).__name__}", outcome=Outcome.FAILED_INTERNAL)

    def put(self, key: str, data: bytes) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self._s3.put_object(Bucket=self._bucket, Key=self._check(key), Body=data, ServerSideEncryption="AES256")
        except (ClientError, BotoCoreError) as e:
            raise self._fail(e, "s3 put failed") from e

    def get(self, key: str) -> bytes:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            body: bytes = self._s3.get_object(Bucket=self._bucket, Key=self._check(key))["Body"].read()
            return body
        except ClientError as e:
            if error_code(e) in ("NoSuchKey", "404", "NotFound"):
                raise NotFound(f"no blob {key}") from e
            raise self._fail(e, "s3 get failed") from e
        except BotoCoreError as e:
            raise self._fail(e, "s3 get failed") from e

    def exists(self, key: str) -> bool:
        from botocore.exceptions import ClientError

        try:
            self._s3.head_object(Bucket=self._bucket, Key=self._check(key))
            return True
        except ClientError as e:
            if error_code(e) in ("404", "NoSuchKey", "NotFound"):
                return False
            raise self._fail(e, "s3 head failed") from e

    def delete(self, key: str) -> None:
        """Every version of ``key`` and its delete markers: in a versioned bucket a plain delete only
        adds a marker, and the bytes stay as a noncurrent version (until the lifecycle rule expires
        them, ``NoncurrentVersionDays``)."""
        key = self._check(key)
        self._delete_versions(key, lambda k: k == key)  # the prefix also lists longer keys

    def delete_prefix(self, prefix: str) -> int:
        """Every version and delete marker of every key under ``prefix`` (a tenant's erasure): keys whose
        current version was deleted already still hold noncurrent versions, so the listing is of versions,
        not of objects. Returns how many versions went."""
        if not prefix.endswith("/"):
            raise InvalidRequest(f"a prefix to delete ends with '/': {prefix!r}")
        self._check(prefix[:-1])  # each segment a real one: "uploads/a//" is refused, never read as "a/"
        return self._delete_versions(prefix, lambda k: k.startswith(prefix))

    def _delete_versions(self, prefix: str, wanted: Callable[[str], bool]) -> int:
        from botocore.exceptions import ClientError

        gone = 0
        try:
            pages = self._s3.get_paginator("list_object_versions").paginate(Bucket=self._bucket, Prefix=prefix)
            for n, page in enumerate(pages):  # a page at a time: a tenant's prefix may hold millions of versions
                if n:  # a tenant's erasure in passes: the next one lists only what is left
                    stop_if_late(gone)
                versions = [
                    {"Key": v["Key"], "VersionId": v["VersionId"]}
                    for v in page.get("Versions", []) + page.get("DeleteMarkers", [])
                    if wanted(v["Key"])
                ]
                for i in range(0, len(versions), 1000):  # DeleteObjects takes 1,000 at a time
                    answer = self._s3.delete_objects(
                        Bucket=self._bucket, Delete={"Objects": versions[i : i + 1000], "Quiet": True}
                    )
                    if answer.get("Errors"):
                        error = answer["Errors"][0]
                        raise PermanentError(
                            f"s3 delete failed: {error.get('Code')} ({len(answer['Errors'])} versions)",
                            outcome=Outcome.FAILED_INTERNAL,
                        )
                gone += len(versions)
        except ClientError as e:
            raise self._fail(e, "s3 delete failed") from e
        return gone

    def download_url(
        self, key: str, filename: str, expires_s: int, ref: str | None = None, inline_type: str | None = None
    ) -> str:
        # the response headers are part of what is signed: a link is made to show inline, never changed
        # into one afterwards (an added query parameter breaks a SigV4 signature)
        shown = inline_type in INLINE_TYPES
        disposition = f"{'inline' if shown else 'attachment'}; filename*=UTF-8''{quote(filename)}"
        params = {"Bucket": self._bucket, "Key": self._check(key), "ResponseContentDisposition": disposition}
        params["ResponseContentType"] = inline_type if shown and inline_type else "application/octet-stream"
        url: str = self._s3.generate_presigned_url("get_object", ExpiresIn=expires_s, Params=params)
        return url

    def open_download(self, token: str) -> tuple[str, bytes, str | None]:
        raise NotFound("S3 download links are served by S3")  # never through the API host

    def presign_upload(
        self, tenant_id: str, filename: str, max_bytes: int, expires_s: int, metadata: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """A presigned POST for a server-generated key under ``uploads/{tenant}/`` (the S3 event then
        ingests it); the size range, the expiry and each ``metadata`` value (``x-amz-meta-…``: who uploads
        it and who may read it) are conditions of its policy, so S3 refuses a form that changes them."""
        base = PurePosixPath(filename.replace("\\", "/")).name  # a name, never a path
        safe = "".join(ch if ch.isalnum() or ch in "._- " else "_" for ch in base).strip(". ")[:200] or "upload.bin"
        key = f"uploads/{tenant_id}/{uuid.uuid4().hex}/{safe}"
        fields = {f"x-amz-meta-{k}": v for k, v in (metadata or {}).items()}
        post: dict[str, Any] = self._s3.generate_presigned_post(
            Bucket=self._bucket,
            Key=key,
            Fields=fields or None,
            ExpiresIn=min(expires_s, 900),
            Conditions=[["content-length-range", 1, max_bytes], *({k: v} for k, v in fields.items())],
        )
        return {"key": key, "url": post["url"], "fields": post["fields"], "expires_in": min(expires_s, 900)}

    def metadata(self, key: str) -> dict[str, str]:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            head = self._s3.head_object(Bucket=self._bucket, Key=self._check(key))
        except ClientError as e:
            if error_code(e) in ("NoSuchKey", "404", "NotFound"):
                raise NotFound(f"no blob {key}") from e
            raise self._fail(e, "s3 head failed") from e
        except BotoCoreError as e:
            raise self._fail(e, "s3 head failed") from e
        return {str(k).lower(): str(v) for k, v in (head.get("Metadata") or {}).items()}

    def list(self, prefix: str, after: str | None = None) -> Iterator[tuple[str, int]]:
        paginator = self._s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self._bucket, Prefix=prefix, **({"StartAfter": after} if after else {})):
            for obj in page.get("Contents", []):
                yield obj["Key"], int(obj["Size"])
