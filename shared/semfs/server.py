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
import builtins
import functools
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

from semfs.deadlines import request_deadline
from semfs.domain.errors import Busy, Disabled, NotFound, RetryableError
from semfs.domain.tenants import checked_tenant_id, is_tenant_id
from semfs.http_host import HttpServer, error_body, serve
from semfs.observability import get_logger
from semfs.pipeline.intake.mail import ingest_mail, tenant_for, tenants_for
from semfs.ports.blobs import INLINE_TYPES

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
                except (RetryableError, Busy, Disabled) as e:  # the sender retries later: nothing is lost
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
@dataclass(frozen=True)
class KeyHolder:
    """Who a local API key speaks for: its tenant, the user it belongs to (``None``: a key from before users,
    which acts as the tenant's first admin) and, for an agent's key, the agent's name."""

    tenant: str
    user: str | None = None
    agent: str | None = None


class ApiKeys:
    """Local API keys → who holds them (a tenant, a user, an agent), stored hashed in
    ``$SEMFS_DATA_DIR/api-keys.json`` (mode 0600). A key written before users holds its tenant alone."""

    def __init__(self, path: Path) -> None:
        self._path = path

    def _load(self) -> dict[str, Any]:
        if not self._path.exists():
            return {}
        data: dict[str, Any] = json.loads(self._path.read_text())
        return data

    def create(self, tenant: str, user: str | None = None, agent: str | None = None) -> str:
        """A new key for ``tenant`` (``InvalidRequest`` for what is no tenant id), a user of it and, for an
        agent acting for that user, the agent's name; shown once."""
        checked_tenant_id(tenant)
        key = "semfs_" + secrets.token_urlsafe(32)
        keys = self._load()
        held: Any = tenant if user is None and agent is None else {"tenant": tenant, "user": user, "agent": agent}
        keys[hashlib.sha256(key.encode()).hexdigest()] = held
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._path.write_text(json.dumps(keys, indent=1))
        self._path.chmod(0o600)
        return key

    @staticmethod
    def _holder(value: Any) -> KeyHolder | None:
        if isinstance(value, dict):
            tenant, user, agent = value.get("tenant"), value.get("user"), value.get("agent")
            if not is_tenant_id(tenant) or not isinstance(user, (str, type(None))):
                return None
            return KeyHolder(str(tenant), user, agent if isinstance(agent, str) else None)
        return KeyHolder(str(value)) if is_tenant_id(value) else None

    def holder(self, key: str | None) -> KeyHolder | None:
        """Who the key speaks for; ``None`` for no key, an unknown one, or one a version without the tenant-id
        rule issued for what is no tenant id (its files could never be reached safely)."""
        if not key:
            return None
        return self._holder(self._load().get(hashlib.sha256(key.encode()).hexdigest()))

    def tenant_for(self, key: str | None) -> str | None:
        held = self.holder(key)
        return held.tenant if held else None

    def list(self) -> builtins.list[tuple[str, str]]:
        """``(fingerprint, tenant)`` per key: the first 12 hex digits of its hash (the key is not stored)."""
        return [(h, held.tenant) for h, held in self.holders()]

    def holders(self) -> builtins.list[tuple[str, KeyHolder]]:
        """``(fingerprint, holder)`` per key, by fingerprint."""
        found = ((h[:12], self._holder(v)) for h, v in self._load().items())
        return sorted(((h, held) for h, held in found if held is not None), key=lambda x: x[0])

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
        return {held.tenant for _, held in self.holders()}


# api.app.PUBLIC_ROUTES and the two pages of the document (the router is imported on the first request)
PUBLIC_PATHS = {
    "/health",
    "/docs",
    "/openapi.json",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
}
LINK_PREFIX = "/s/"  # a share link's page and download: the link is the credential (api/routes/links.py)


def to_event(
    method: str,
    target: str,
    headers: dict[str, str],
    body: bytes,
    tenant: str | None,
    query: str | None = None,
    caller: str | None = None,
    user: str | None = None,
    agent: str | None = None,
) -> dict[str, Any]:
    """An HTTP request as the API Gateway HTTP API (payload 2.0) event the router expects; the tenant
    goes where an authorizer puts it, exactly like the JWT claims in AWS. ``target`` is a path and query
    (``/files?limit=5``), or with ``query`` given the decoded path alone: a "?" or "#" in it came from "%3F"
    or "%23" and starts nothing."""
    path, _, raw_query = (target, "", query) if query is not None else target.partition("?")
    params = {k: v[-1] for k, v in parse_qs(raw_query, keep_blank_values=True).items()}  # as API Gateway does
    lowered = {k.lower(): v for k, v in headers.items()}
    text_like = lowered.get("content-type", "").startswith(("application/json", "text/"))
    return {
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": raw_query,
        "headers": lowered,
        "queryStringParameters": params or None,
        "requestContext": {
            "http": {
                "method": method,
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": lowered.get("user-agent", ""),
            },
            "authorizer": {"lambda": {"tenant": tenant, "caller": caller, "user": user, "agent": agent}}
            if tenant
            else {},
            "requestId": secrets.token_hex(8),
            "routeKey": "$default",
            "stage": "$default",
        },
        "body": body.decode("utf-8") if text_like else base64.b64encode(body).decode(),
        "isBase64Encoded": not text_like,
    }


def page_policy(connect: Sequence[str] = (), frames: Sequence[str] = ()) -> str:
    """The web page's Content-Security-Policy: its own scripts, styles and images only, nothing inline,
    nothing framing it; ``connect``: the origins it calls besides its own (an API elsewhere, the sign-in's
    token endpoint, the bucket uploads go to); ``frames``: where a PDF it previews comes from. The template
    sends the same policy from CloudFront with AWS's origins (``tests/integration/test_template.py`` compares)."""
    extra_connect = "".join(f" {o}" for o in connect)
    extra_frames = "".join(f" {o}" for o in frames)
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; font-src 'self'; "
        f"connect-src 'self'{extra_connect}; frame-src 'self'{extra_frames}; manifest-src 'self'; "
        "base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
    )


def _origin(url: object) -> str | None:
    from urllib.parse import urlsplit

    parts = urlsplit(url) if isinstance(url, str) else None
    return f"{parts.scheme}://{parts.netloc}" if parts and parts.scheme in ("http", "https") and parts.netloc else None


def _local_page_policy(config: Path | None) -> str:
    """The policy for the page ``semfs serve`` serves: its own origin, and what its configuration names."""
    named: dict[str, Any] = {}
    if config is not None and config.is_file():
        try:
            named = json.loads(config.read_text())
        except ValueError:
            named = {}
    auth: dict[str, Any] = named["auth"] if isinstance(named.get("auth"), dict) else {}
    origins = [_origin(named.get("api")), _origin(auth.get("token_url"))]
    return page_policy(connect=[o for o in dict.fromkeys(origins) if o])


def make_wsgi_app(
    container: Container,
    keys: ApiKeys,
    static_dir: Path | None = None,
    max_body: int | None = None,
    closing: list[Callable[[], None]] | None = None,
) -> Callable[..., Iterable[bytes]]:
    """The local host as a WSGI application: static page, signed downloads, API key → tenant, then
    the same router API Gateway invokes in AWS, or for ``/mcp`` the MCP server over streamable HTTP
    (``mcp_server.McpOverHttp``, started on its first request; its stop is added to ``closing``). Every
    answer it makes itself has the uniform error body."""
    from semfs.api.app import app, has_route

    limit = max_body if max_body is not None else container.settings.limits.max_file_bytes + 1024 * 1024
    mcp_host: list[Any] = []  # the McpOverHttp, once a request needs it (the SDK is imported then)
    mcp_lock = threading.Lock()

    def _mcp(held: KeyHolder, environ: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        if not container.settings.features.mcp:
            from semfs.domain.features import OFF

            return _json_error(503, "disabled", OFF["mcp"])
        with mcp_lock:
            if not mcp_host:
                from semfs.mcp_server import McpOverHttp

                mcp_host.append(McpOverHttp(container, limit))
                if closing is not None:
                    closing.append(mcp_host[0].close)
        answered: tuple[int, list[tuple[str, str]], bytes] = mcp_host[0].answer(
            held.tenant, environ, user=held.user, agent=held.agent
        )
        return answered

    def wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        started = time.perf_counter()
        status, headers, body = _answer(environ)
        path = environ.get("PATH_INFO", "")
        # a signed download link and a share link are secrets: never in a log
        shown = "/download/…" if path.startswith("/download/") else "/s/…" if path.startswith("/s/") else path[:200]
        ms = round((time.perf_counter() - started) * 1000, 1)
        log.info("http request", method=environ.get("REQUEST_METHOD"), path=shown, status=status, ms=ms)
        headers = [(k, v) for k, v in headers if k.lower() != "content-length"]
        headers += [("Content-Length", str(len(body))), ("X-Content-Type-Options", "nosniff")]
        start_response(f"{status} {_phrase(status)}", headers)
        return [body]

    def _json_error(status: int, code: str, message: str) -> tuple[int, list[tuple[str, str]], bytes]:
        return status, [("Content-Type", "application/json")], error_body(code, message)

    def _answer(environ: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        method = str(environ.get("REQUEST_METHOD", "GET"))
        # WSGI hands the path as latin-1 of its bytes: recover them, and refuse what is not UTF-8
        try:
            path = str(environ.get("PATH_INFO", "")).encode("latin-1").decode("utf-8")
        except UnicodeError:
            return _json_error(404, "not_found", "no such path")
        query = str(environ.get("QUERY_STRING", ""))
        if path.startswith("/download/"):
            return _download(path.removeprefix("/download/"), inline="inline=1" in query.split("&"))
        if static_dir is not None and method == "GET" and path == "/favicon.ico":
            path = "/static/favicon.svg"  # browsers ask for it before any key is known: no auth, no 401
        if static_dir is not None and method == "GET" and path == "/static/config.json":
            config = container.settings.http.web_config
            # none configured: an empty one (the page calls this host and asks for a key), not a 404 in the
            # console of every page load
            body = config.read_bytes() if config is not None and config.is_file() else b"{}"
            return 200, [("Content-Type", "application/json"), ("Cache-Control", "no-store")], body
        if static_dir is not None and method == "GET" and (path == "/" or path.startswith("/static/")):
            target = static_dir / ("index.html" if path == "/" else path.removeprefix("/static/"))
            if target.resolve().is_relative_to(static_dir.resolve()) and target.is_file():
                ctype = {
                    ".html": "text/html; charset=utf-8",
                    ".js": "text/javascript; charset=utf-8",
                    ".css": "text/css; charset=utf-8",
                    ".svg": "image/svg+xml",
                }.get(target.suffix, "application/octet-stream")
                # read with the configuration the page reads (a file that may change while the host runs)
                csp = _local_page_policy(container.settings.http.web_config)
                policy = [("Content-Security-Policy", csp)] if target.suffix == ".html" else []
                return 200, [("Content-Type", ctype), *policy], target.read_bytes()
        headers = {k[5:].replace("_", "-").lower(): str(v) for k, v in environ.items() if k.startswith("HTTP_")}
        if environ.get("CONTENT_TYPE"):
            headers["content-type"] = str(environ["CONTENT_TYPE"])
        if path != "/mcp" and not has_route(path):  # before the key: an old or mistyped address is a 404
            if static_dir is not None and method == "GET" and "text/html" in headers.get("accept", ""):
                csp = _local_page_policy(container.settings.http.web_config)
                page = [("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", csp)]
                return 404, page, (static_dir / "404.html").read_bytes()
            return _json_error(404, "not_found", "no such route")  # as the router says it
        auth = headers.get("authorization", "")
        key = auth.removeprefix("Bearer ").strip() if auth.startswith("Bearer ") else headers.get("x-api-key")
        if method == "OPTIONS" and "access-control-request-method" in headers:
            return 204, [], b""  # a CORS preflight carries no key: answered as the Lambda answers it
        held = keys.holder(key)
        tenant = held.tenant if held else None
        if tenant is None and path not in PUBLIC_PATHS and not path.startswith(LINK_PREFIX):
            status, out, body = _json_error(
                401, "unauthorized", "missing or invalid API key (send Authorization: Bearer <key>)"
            )
            return status, [*out, ("WWW-Authenticate", 'Bearer realm="semfs"')], body
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return _json_error(400, "bad_request", "Content-Length is not a number")
        if length < 0:
            return _json_error(400, "bad_request", "Content-Length is negative")
        if length > limit:
            return _json_error(413, "too_large", f"the body is over {limit} bytes (SEMFS_MAX_FILE_MB)")
        if path == "/mcp" and held is not None:  # the MCP transport reads its own body
            return _mcp(held, environ)
        body = environ["wsgi.input"].read(length) if length else b""
        try:
            # who did it, in a file's history: the key by its fingerprint (as `semfs keys list` shows it)
            caller = f"key {hashlib.sha256(key.encode()).hexdigest()[:12]}" if tenant and key else None
            if held is not None and held.user:
                caller = held.user if not held.agent else f"{held.agent} for {held.user}"
            user, agent = (held.user, held.agent) if held else (None, None)
            event = to_event(method, path, headers, body, tenant, query=query, caller=caller, user=user, agent=agent)
        except UnicodeDecodeError:
            return _json_error(400, "bad_request", "the body is not valid UTF-8")
        # no lock: the resolver keeps each request's event and context per thread (api/resolver.py)
        app.append_context(container=container)  # type: ignore[no-untyped-call]
        try:
            with request_deadline(container.settings.http.request_deadline_s):
                response = app.resolve(event, _LocalContext())
        except RecursionError:
            return _json_error(400, "bad_request", "the JSON body is nested too deeply")
        except Exception as e:  # a bug must answer 500, never a traceback or a dropped connection
            log.error("request failed", path=path[:200], error=type(e).__name__)
            return _json_error(500, "internal", "internal error")
        payload = response.get("body") or ""
        data = base64.b64decode(payload) if response.get("isBase64Encoded") else payload.encode()
        out = list((response.get("headers") or {}).items())
        for k, values in (response.get("multiValueHeaders") or {}).items():
            out += [(k, v) for v in values]
        return int(response["statusCode"]), out, data

    def _download(token: str, inline: bool) -> tuple[int, list[tuple[str, str]], bytes]:
        mime = "application/octet-stream"
        try:
            name, data, ref = container.blobs.open_download(token)
            if ref is not None:  # a link stops working when its file is deleted
                tenant, _, file_id = ref.partition("/")
                record = container.repo.get(tenant, file_id)
                if record.deleted_at is not None:
                    raise NotFound("deleted")
                mime = record.mime_type
        except NotFound:
            return _json_error(404, "not_found", "this download link is invalid, has expired or its file is gone")
        if inline and mime in INLINE_TYPES:  # the page's preview: the browser shows it, nothing runs in it
            headers = [("Content-Type", mime), ("Content-Disposition", f"inline; filename*=UTF-8''{quote(name)}")]
            if mime != "application/pdf":  # (Chromium's PDF viewer does not open in a sandbox)
                headers.append(("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self'"))
            return 200, headers, data
        return (
            200,
            [
                ("Content-Type", "application/octet-stream"),
                ("Content-Disposition", f"attachment; filename*=UTF-8''{quote(name)}"),
            ],
            data,
        )

    return wsgi


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Status"


class _LocalContext:
    function_name = "semfs-local"
    memory_limit_in_mb = 0
    invoked_function_arn = "arn:aws:lambda:local:0:function:semfs-local"
    aws_request_id = "local"


def start_http(container: Container, keys: ApiKeys, host: str, port: int, static_dir: Path | None = None) -> HttpServer:
    """Serve the API (and the web page) on ``host:port`` in a background thread: waitress (a maintained
    WSGI server: worker threads, keep-alive, a request-body limit) with the deadlines and per-client cap
    of ``semfs/http_host.py``."""
    limit = container.settings.limits.max_file_bytes + 1024 * 1024
    closing: list[Callable[[], None]] = []
    app = make_wsgi_app(container, keys, static_dir, limit, closing)
    server = serve(app, host, port, container.settings.http, limit)
    server.closing = closing  # what the app started (the MCP transport) stops with the host
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
    from semfs.pipeline.intake.ingest import ingest_bytes
    from semfs.pipeline.intake.register import Provenance

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


# -- mail accounts ----------------------------------------------------------------------------------
def poll_mail_accounts(container: Container, stop: threading.Event, interval_s: float) -> None:
    """Read every enabled mail account of every tenant now and then every ``interval_s`` until ``stop``
    (``pipeline/intake/mailboxes.py``: each poll is bounded, a server that fails is the account's error)."""
    from semfs.pipeline.intake.mailboxes import poll_all

    while not stop.is_set():
        try:
            poll_all(container)
        except Exception as e:  # keep polling; each account's own failure is already on the account
            log.error("mail accounts not polled", error=type(e).__name__)
        stop.wait(interval_s)


def start_mail_polling(container: Container, interval_s: float) -> threading.Event:
    """Poll the mail accounts in a background thread; set the returned event to stop."""
    stop = threading.Event()
    threading.Thread(
        target=poll_mail_accounts, args=(container, stop, interval_s), daemon=True, name="semfs-mail"
    ).start()
    return stop
