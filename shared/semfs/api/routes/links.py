"""Share links: made, listed and revoked by a file's owner or an admin; opened by anyone holding one, with no
account, showing that one file (its text, and its original to download) and nothing else."""

from __future__ import annotations

import html
from typing import Annotated

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.params import Path

from semfs.api.models import LinkCreated, LinkIn, LinksOut
from semfs.api.request import (
    changeable_in_tenant,
    container,
    current_caller,
    current_principal,
    new_router,
    ok,
)
from semfs.api.request import (
    router as request_router,
)
from semfs.domain.errors import NotFound
from semfs.domain.models import FileRecord, utcnow
from semfs.pipeline.catalogue import links
from semfs.pipeline.documents import load_document

router = new_router()
SHOWN_CHARS = 2_000_000  # the text a link's page shows at most (the original is there to download)
Token = Annotated[str, Path(min_length=10, max_length=300, description="The link's token")]


def _links(record: FileRecord) -> LinksOut:
    now = utcnow()
    return LinksOut.model_validate(
        {"links": [{**x.model_dump(exclude={"token_sha256"}), "live": x.live(now)} for x in record.links]}
    )


@router.get("/files/<file_id>/links", summary="The file's share links", responses=ok(LinksOut))
def list_links(file_id: str) -> LinksOut:
    """Every share link of this file version, live or not (the tokens themselves are not kept)."""
    return _links(changeable_in_tenant(file_id))


@router.post("/files/<file_id>/links", summary="Make a read-only link that needs no account", responses=ok(LinkCreated))
def make_link(file_id: str, request: LinkIn) -> LinkCreated:
    """A link to this file version for ``days`` (1 to 90): anyone holding it reads the file's text and
    downloads its original, until it expires or is revoked. Its owner or an admin only (403)."""
    record = changeable_in_tenant(file_id)
    _, link, token = links.create_link(container(), current_principal(), record, request.days, by=current_caller())
    return LinkCreated(
        link_id=link.link_id, path=f"/s/{token}", url=_absolute(f"/s/{token}"), expires_at=link.expires_at
    )


@router.delete("/files/<file_id>/links/<link_id>", summary="Revoke a share link", responses=ok(LinksOut))
def revoke(file_id: str, link_id: str) -> LinksOut:
    record = changeable_in_tenant(file_id)
    try:
        return _links(links.revoke_link(container(), current_principal(), record, link_id, by=current_caller()))
    except NotFound as e:
        raise NotFoundError(e.reason) from e


def _absolute(path: str) -> str:
    """``path`` on the host the request came to (the local server, or the API's domain in AWS)."""
    event = request_router.current_event
    context = event.raw_event.get("requestContext") or {}
    host = context.get("domainName") or event.headers.get("host") or "127.0.0.1:8080"
    scheme = event.headers.get("x-forwarded-proto") or ("https" if context.get("domainName") else "http")
    return f"{scheme}://{host}{path}"


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>{title} · shared with semfs</title>
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:0 auto;padding:1rem;color:#1a1a1a}}
header{{border-bottom:1px solid #ccc;margin-bottom:1rem}}pre{{white-space:pre-wrap;word-wrap:break-word;
font:inherit}}a{{color:#0645ad}}p.meta{{color:#444}}</style></head>
<body><header><h1>{title}</h1><p class="meta">{filename} · shared read-only until {until}</p>
<p><a href="{download}">Download the original</a></p></header>
<main><h2>Text</h2><pre>{text}</pre></main></body></html>"""


def _page(status: int, body: str) -> Response[str]:
    headers = {
        "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
        "X-Robots-Tag": "noindex",
    }
    return Response(status_code=status, content_type=content_types.TEXT_HTML, body=body, headers=headers)


_GONE = (
    "<!doctype html><html lang=en><title>Link not valid</title><main><h1>This link is not valid</h1>"
    "<p>It has expired, was revoked, or its file is gone. Ask whoever shared it for a new one.</p></main></html>"
)


@router.get("/s/<token>", summary="A shared file's page (no account)", include_in_schema=False)
def open_link(token: Token) -> Response[str]:
    """The file a live link opens: its title, name, expiry, text and a download link; no other file, no
    account. Any other token (forged, expired, revoked, deleted) gets the same 404 page."""
    c = container()
    try:
        record = links.open_link(c, token)
    except NotFound:
        return _page(404, _GONE)
    text = load_document(c, record).text if record.text_key else "(no text was extracted from this file)"
    until = min(x.expires_at for x in record.links if x.live(utcnow()))
    page = _PAGE.format(
        title=html.escape(record.title or record.filename),
        filename=html.escape(record.filename),
        until=f"{until:%Y-%m-%d %H:%M} UTC",
        download=html.escape(f"/s/{token}/download"),
        text=html.escape(text[:SHOWN_CHARS]),
    )
    return _page(200, page)


@router.get("/s/<token>/download", summary="A shared file's original (no account)", include_in_schema=False)
def download_link(token: Token) -> Response[str]:
    """Redirects to a short-lived link to the original (the local host's signed link, or S3's presigned)."""
    c = container()
    try:
        record = links.open_link(c, token)
    except NotFound:
        return _page(404, _GONE)
    if not record.blob_key:
        return _page(404, _GONE)
    url = c.blobs.download_url(record.blob_key, record.filename, 300, f"{record.tenant_id}/{record.file_id}")
    return Response(status_code=302, headers={"Location": url, "Cache-Control": "no-store"}, body="")
