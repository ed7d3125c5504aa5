"""Share links: a read-only link to one file version that opens without an account, expiring and revocable.

The token names its tenant and file (so opening it is one record read) and carries 256 random bits; the
record keeps only the bits' SHA-256, so the data folder or the table never holds a working link. Opening
checks the hash in constant time, the expiry, the revocation and that the file is not deleted. Only the
file's owner or an admin makes, lists and revokes its links; each is in the file's history."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import timedelta
from typing import TYPE_CHECKING

from semfs.domain.access import Principal
from semfs.domain.errors import InvalidRequest, NotFound
from semfs.domain.models import LINK_DAYS_MAX, LINKS_MAX, FileRecord, ShareLink, utcnow
from semfs.domain.tenants import is_tenant_id
from semfs.pipeline.record_update import update

if TYPE_CHECKING:
    from semfs.ports import Container

PREFIX = "sl1"


def _may_manage(principal: Principal, record: FileRecord) -> None:
    if not (principal.is_admin or record.owner is None or record.owner == principal.user):
        raise InvalidRequest("only the file's owner or an admin may manage its share links")


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_link(
    c: Container, principal: Principal, record: FileRecord, days: int = 7, by: str | None = None
) -> tuple[FileRecord, ShareLink, str]:
    """A new link to ``record`` for ``days`` (1 to ``LINK_DAYS_MAX``): the record after, the link, and the
    token (shown this once)."""
    _may_manage(principal, record)
    if not 1 <= days <= LINK_DAYS_MAX:
        raise InvalidRequest(f"a share link lasts 1 to {LINK_DAYS_MAX} days")
    secret = secrets.token_urlsafe(32)
    link = ShareLink(
        link_id="l_" + secrets.token_hex(6),
        token_sha256=_hash(secret),
        by=by,
        expires_at=utcnow() + timedelta(days=days),
    )

    def edit(current: FileRecord) -> FileRecord:
        if current.deleted_at is not None:
            raise InvalidRequest("the file is deleted")
        if len(current.links) >= LINKS_MAX:
            raise InvalidRequest(f"a file keeps at most {LINKS_MAX} share links: revoke one")
        detail = f"a link until {link.expires_at:%Y-%m-%d}"
        return current.evolve(links=[*current.links, link], activity=current.did("shared", detail, by))

    changed = update(c.repo, record.tenant_id, record.file_id, edit)
    return changed, link, f"{PREFIX}.{record.tenant_id}.{record.file_id}.{secret}"


def revoke_link(
    c: Container, principal: Principal, record: FileRecord, link_id: str, by: str | None = None
) -> FileRecord:
    """Revoke one of ``record``'s links (``NotFound`` for a link it has not); revoking twice changes nothing."""
    _may_manage(principal, record)
    if not any(x.link_id == link_id for x in record.links):
        raise NotFound("no such share link on this file")

    def edit(current: FileRecord) -> FileRecord:
        now = utcnow()
        links = [x.model_copy(update={"revoked_at": now}) if x.link_id == link_id and not x.revoked_at else x
                 for x in current.links]  # fmt: skip
        return current.evolve(links=links, activity=current.did("unshared", "a link", by))

    return update(c.repo, record.tenant_id, record.file_id, edit)


def open_link(c: Container, token: str) -> FileRecord:
    """The file a live link opens; ``NotFound`` for anything else (forged, expired, revoked, deleted), all
    alike, so a guess learns nothing."""
    prefix, tenant, file_id, secret = [*token.split(".", 3), "", "", ""][:4]
    if prefix != PREFIX or not is_tenant_id(tenant) or not file_id.startswith("f_") or len(secret) < 40:
        raise NotFound("this link is invalid, has expired or was revoked")
    try:
        record = c.repo.get(tenant, file_id)
    except NotFound:
        raise NotFound("this link is invalid, has expired or was revoked") from None
    digest, now = _hash(secret), utcnow()
    live = [x for x in record.links if hmac.compare_digest(x.token_sha256, digest) and x.live(now)]
    if not live or record.deleted_at is not None:
        raise NotFound("this link is invalid, has expired or was revoked")
    return record
