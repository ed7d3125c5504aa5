"""``semfs serve``: the local HTTP API host and the SMTP listener (aiosmtpd) that turns mail into files.

Recipients map to tenants through ``SEMFS_MAILBOXES``; mail to any other address is refused at RCPT
with 550, so nothing is ever ingested into a default tenant. Each accepted message goes through the
same path as SES mail and ``semfs ingest *.eml``.

The HTTP host turns each request into the API Gateway event the Lambda router receives, with the
tenant of the caller's API key where AWS puts the JWT claims, and serves the web page.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlsplit

from semfs.domain.errors import NotFound, RetryableError
from semfs.observability import get_logger
from semfs.pipeline.mail import ingest_mail, tenant_for, tenants_for

if TYPE_CHECKING:
    from semfs.ports import Container

log = get_logger(__name__)


class MailHandler:
    """aiosmtpd handler: validate recipients, then ingest the message off the event loop."""

    def __init__(self, container: Container) -> None:
        self._c = container
        self._lock = asyncio.Lock()  # one message at a time: the local pipeline is single-writer

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: Any) -> str:  # noqa: N802
        if tenant_for(self._c, [address]) is None:
            return "550 5.1.1 Mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        tenants = tenants_for(self._c, list(envelope.rcpt_tos))
        if not tenants:
            return "550 5.1.1 Mailbox unavailable"
        raw = envelope.original_content or envelope.content
        recipients = list(envelope.rcpt_tos)
        async with self._lock:
            for tenant in tenants:  # a message to two tenants' mailboxes is delivered to each
                try:
                    result = await asyncio.get_running_loop().run_in_executor(
                        None, functools.partial(ingest_mail, self._c, tenant, raw, recipients=recipients, source="smtp")
                    )
                    log.info("mail delivered", tenant=tenant, files=len(result.files))
                except RetryableError as e:  # the sender should retry later rather than lose the message
                    log.error("mail not ingested", error=type(e).__name__)
                    return "451 4.3.0 Temporary failure, try again later"
                except Exception as e:  # retrying cannot help: refuse for good instead of "try again" forever
                    log.error("mail refused", error=type(e).__name__)
                    return "554 5.6.0 The message cannot be processed"
        return "250 Message accepted for delivery"


def start_smtp(container: Container, host: str, port: int) -> Any:
    """Start the SMTP listener in a background thread; returns the aiosmtpd Controller (``.stop()``)."""
    from aiosmtpd.controller import Controller

    controller = Controller(MailHandler(container), hostname=host, port=port, data_size_limit=60 * 1024 * 1024)
    controller.start()
    return controller


# -- the local HTTP host --------------------------------------------------------------------------
class ApiKeys:
    """Local API keys → tenants, stored hashed in ``$SEMFS_DATA_DIR/api-keys.json`` (mode 0600)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def _load(self) -> dict[str, str]:
        if not self._path.exists():
            return {}
        data: dict[str, str] = json.loads(self._path.read_text())
        return data

    def create(self, tenant: str) -> str:
        key = "semfs_" + secrets.token_urlsafe(32)
        keys = self._load()
        keys[hashlib.sha256(key.encode()).hexdigest()] = tenant
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._path.write_text(json.dumps(keys, indent=1))
        self._path.chmod(0o600)
        return key

    def tenant_for(self, key: str | None) -> str | None:
        if not key:
            return None
        return self._load().get(hashlib.sha256(key.encode()).hexdigest())

    def list(self) -> list[tuple[str, str]]:
        """``(fingerprint, tenant)`` per key: the first 12 hex digits of its hash (the key is not stored)."""
        return sorted((h[:12], t) for h, t in self._load().items())

    def revoke(self, key_or_fingerprint: str) -> int:
        """Remove the key given in full or by its fingerprint; returns how many were removed."""
        keys = self._load()
        full = hashlib.sha256(key_or_fingerprint.encode()).hexdigest()
        gone = [h for h in keys if h == full or (len(key_or_fingerprint) >= 8 and h.startswith(key_or_fingerprint))]
        for h in gone:
            del keys[h]
        if gone:
            self._path.write_text(json.dumps(keys, indent=1))
            self._path.chmod(0o600)
        return len(gone)

    def tenants(self) -> set[str]:
        return set(self._load().values())


PUBLIC_PATHS = {"/health", "/docs", "/openapi.json"}


def to_event(method: str, target: str, headers: dict[str, str], body: bytes, tenant: str | None) -> dict[str, Any]:
    """An HTTP request as the API Gateway HTTP API (payload 2.0) event the router expects; the tenant
    goes where an authorizer puts it, exactly like the JWT claims in AWS."""
    parsed = urlsplit(target)
    query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    lowered = {k.lower(): v for k, v in headers.items()}
    text_like = lowered.get("content-type", "").startswith(("application/json", "text/"))
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": parsed.path,
        "rawQueryString": parsed.query,
        "headers": lowered,
        "queryStringParameters": query or None,
        "requestContext": {
            "http": {
                "method": method,
                "path": parsed.path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": lowered.get("user-agent", ""),
            },
            "authorizer": {"lambda": {"tenant": tenant}} if tenant else {},
            "requestId": secrets.token_hex(8),
            "routeKey": "$default",
            "stage": "$default",
        },
        "body": body.decode("utf-8") if text_like else base64.b64encode(body).decode(),
        "isBase64Encoded": not text_like,
    }


def make_http_handler(
    container: Container, keys: ApiKeys, static_dir: Path | None = None
) -> type[BaseHTTPRequestHandler]:
    from semfs.api.app import app

    lock = threading.Lock()  # the router keeps per-request context: one request at a time

    class Handler(BaseHTTPRequestHandler):
        server_version = "semfs"

        def log_message(self, format: str, *args: Any) -> None:
            pass  # one structured line per request comes from _handle (never query strings or tokens)

        def _error(self, status: int, code: str, message: str) -> None:
            body = json.dumps({"error": {"code": code, "message": message}}).encode()
            self._send(status, body, {"Content-Type": "application/json"})

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self._status = status
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            started = time.perf_counter()
            self._status = 0
            try:
                self._route()
            finally:
                path = urlsplit(self.path).path
                shown = "/download/…" if path.startswith("/download/") else path  # a signed link is a secret
                ms = round((time.perf_counter() - started) * 1000, 1)
                log.info("http request", method=self.command, path=shown[:200], status=self._status, ms=ms)

        def _route(self) -> None:
            path = urlsplit(self.path).path
            if path.startswith("/download/"):
                try:
                    name, data = container.blobs.open_download(path.removeprefix("/download/"))
                except NotFound:
                    self._error(404, "not_found", "this download link is invalid or has expired")
                    return
                self._send(
                    200,
                    data,
                    {
                        "Content-Type": "application/octet-stream",
                        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(name)}",
                    },
                )
                return
            if static_dir is not None and self.command == "GET" and (path == "/" or path.startswith("/static/")):
                target = static_dir / ("index.html" if path == "/" else path.removeprefix("/static/"))
                if target.resolve().is_relative_to(static_dir.resolve()) and target.is_file():
                    ctype = {".html": "text/html", ".js": "text/javascript", ".css": "text/css"}.get(
                        target.suffix, "application/octet-stream"
                    )
                    self._send(200, target.read_bytes(), {"Content-Type": f"{ctype}; charset=utf-8"})
                    return
            auth = self.headers.get("Authorization", "")
            key = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else self.headers.get("X-Api-Key")
            tenant = keys.tenant_for(key)
            if tenant is None and path not in PUBLIC_PATHS:
                self._error(401, "unauthorized", "missing or invalid API key (send Authorization: Bearer <key>)")
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            event = to_event(self.command, self.path, dict(self.headers.items()), body, tenant)
            with lock:
                app.append_context(container=container)  # type: ignore[no-untyped-call]
                try:
                    response = app.resolve(event, _LocalContext())  # type: ignore[arg-type]
                except Exception as e:  # a bug must answer 500, never a traceback or a dropped connection
                    log.error("request failed", path=path, error=type(e).__name__)
                    self._error(500, "internal", "internal error")
                    return
            payload = response.get("body") or ""
            data = base64.b64decode(payload) if response.get("isBase64Encoded") else payload.encode()
            headers = {k: v for k, v in (response.get("headers") or {}).items() if k.lower() != "content-length"}
            for k, values in (response.get("multiValueHeaders") or {}).items():
                headers.setdefault(k, values[-1])
            self._send(int(response["statusCode"]), data, headers)

        do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = _handle  # noqa: N815 - BaseHTTPRequestHandler's names

    return Handler


class _LocalContext:
    function_name = "semfs-local"
    memory_limit_in_mb = 0
    invoked_function_arn = "local"
    aws_request_id = "local"


def start_http(container: Container, keys: ApiKeys, host: str, port: int, static_dir: Path | None = None) -> Any:
    """Serve the API (and the web page) on ``host:port`` in a background thread; returns the server."""
    server = ThreadingHTTPServer((host, port), make_http_handler(container, keys, static_dir))
    threading.Thread(target=server.serve_forever, daemon=True, name="semfs-http").start()
    return server


# -- the drop folder --------------------------------------------------------------------------------
def watch_inbox(
    container: Container,
    folder: Path,
    tenant: str,
    stop: threading.Event,
    interval_s: float = 2.0,
    settle_s: float = 5.0,
) -> None:
    """Ingest every file that appears in ``folder`` (for ``tenant``), then move it to ``folder/processed/``.

    A file is taken once it is complete: its size and modification time unchanged since the last look
    and not modified for ``settle_s`` seconds (a copy or a slow writer in progress is not read
    half-written). Names a writer uses while writing (dotfiles, ``*.part``, ``*.tmp``, ``*.crdownload``)
    are never taken: write there and rename. Its path in the folder is the file's identity, so the
    same name dropped again with new content is the next version (if the text agrees). Runs until
    ``stop`` is set.
    """
    from semfs.pipeline.ingest import ingest_bytes
    from semfs.pipeline.register import Provenance

    done = folder / "processed"
    done.mkdir(parents=True, exist_ok=True)
    seen: dict[Path, tuple[int, int]] = {}
    refused: set[Path] = set()  # symlinks pointing out of the folder: never followed
    while not stop.is_set():
        for path in sorted(p for p in folder.iterdir() if p.is_file() and not _in_progress(p.name)):
            st = path.stat()
            look = (st.st_size, st.st_mtime_ns)
            if seen.get(path) != look or time.time() - st.st_mtime < settle_s:
                seen[path] = look  # new, still growing or touched recently: look again next round
                continue
            try:
                where = f"inbox:{path.relative_to(folder).as_posix()}"
                prov = Provenance(source_key=where, version_key=where)
                if path.is_symlink() and not path.resolve().is_relative_to(folder.resolve()):
                    if path not in refused:
                        log.warning("inbox symlink out of the folder skipped")
                        refused.add(path)
                    continue
                reg = ingest_bytes(container, tenant, path.read_bytes(), path.name, prov)
                log.info("inbox file ingested", file_id=reg.record.file_id, outcome=str(reg.record.outcome))
            except Exception as e:  # keep watching; the file stays for the next round
                log.error("inbox file not ingested", error=type(e).__name__)
                continue
            target = done / path.name
            if target.exists():
                target = done / f"{path.stem}-{int(time.time())}{path.suffix}"
            path.replace(target)
            seen.pop(path, None)
        stop.wait(interval_s)


def _in_progress(name: str) -> bool:
    return name.startswith(".") or name.endswith((".part", ".tmp", ".crdownload", "~"))


def start_inbox(
    container: Container, folder: Path, tenant: str, interval_s: float = 2.0, settle_s: float = 5.0
) -> threading.Event:
    """Watch ``folder`` in a background thread; set the returned event to stop."""
    folder.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    threading.Thread(
        target=watch_inbox,
        args=(container, folder, tenant, stop, interval_s, settle_s),
        daemon=True,
        name="semfs-inbox",
    ).start()
    return stop
