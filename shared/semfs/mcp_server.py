"""semfs as an agent's context over the Model Context Protocol (the official ``mcp`` SDK's ``MCPServer``).

``semfs mcp`` serves one tenant's files over stdio to a local agent (a desktop assistant, a coding agent):
the tenant is ``--tenant`` (the local default), or the one an API key names (``--key`` or
``SEMFS_API_KEY``), so an agent handed a key sees exactly what that key sees over HTTP.

The tools are ``mcp_tools``' functions, over the same use cases and models as the HTTP API (``SearchRequest``,
``AskRequest``, …), so the same rules refuse the same inputs; what a tool cannot do comes back as an MCP tool
error with the API's wording ("no such file" for another tenant's id as for none), never a traceback. Files
are also resources, ``semfs://files/{file_id}`` (their extracted text). This module hosts them: stdio, and
streamable HTTP for ``semfs serve`` and the Lambda.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from semfs.domain.errors import NotFound, SemfsError
from semfs.domain.tenants import checked_tenant_id
from semfs.mcp_tools import TOOLS, Caller, bound
from semfs.observability import get_logger
from semfs.pipeline.documents import load_document

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from semfs.ports import Container

log = get_logger(__name__)

INSTRUCTIONS = (
    "semfs holds this organisation's files (uploads, mail attachments, agents' artifacts), extracted, "
    "summarised and indexed. Use `search` to find files by meaning or keyword, `ask` for an answer quoted from "
    "them with citations, `context` for what to know before replying to a message, `entity` for everything the "
    "files say about a person, organisation or invoice number, `read_passages` to read what a search found, "
    "`read_file` to read one, "
    "and `save_artifact` to store what you produced with where it came from."
)


def _failure(e: Exception) -> str:
    """The API's wording for what went wrong (``api/resolver.py`` answers the same families)."""
    if isinstance(e, NotFound):
        return "no such file"
    if isinstance(e, ValidationError):
        first = e.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "input"
        return f"{where}: {first['msg']}"
    if isinstance(e, SemfsError):
        return e.reason
    return "semfs could not do that (an internal error; the server log has the details)"


def build_server(
    c: Container,
    tenant: str,
    user: str | None = None,
    agent: str | None = None,
    groups: tuple[str, ...] | None = None,
) -> MCPServer:
    """The MCP server over ``c`` for ``tenant``: every tool (``mcp_tools.TOOLS``) and resource reads and writes
    that tenant only, as ``user`` (or, for an agent's key, as ``agent`` acting for ``user``) sees it: a file not
    shared with them is "no such file" and no search, answer or list holds it (``domain/access.py``).
    ``groups``: the signed-in user's groups from a JWT (AWS); none, the user is one of the tenant's own (a
    local key)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceNotFoundError
    from mcp.types import ToolAnnotations

    from semfs import __version__

    caller = Caller(c, checked_tenant_id(tenant), user, agent, groups)  # a caller in code is held to the rule too
    server = MCPServer("semfs", instructions=INSTRUCTIONS, version=__version__)
    for fn, title, hints in TOOLS:
        annotations = ToolAnnotations(
            read_only_hint=hints.read_only,
            destructive_hint=False,
            idempotent_hint=hints.idempotent,
            open_world_hint=False,
        )
        server.tool(title=title, annotations=annotations)(_answered(bound(fn, caller)))

    @server.resource("semfs://files/{file_id}", title="A file's text", mime_type="text/plain")
    def file_resource(file_id: str) -> str:
        """The extracted text of one file of this tenant."""
        try:
            return load_document(c, caller.record(file_id)).text
        except NotFound:
            raise ResourceNotFoundError("no such file") from None

    return server


def _answered(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """``fn`` with what it cannot do answered as a tool error in the API's words, never a traceback."""
    from mcp.server.mcpserver.exceptions import ToolError

    @functools.wraps(fn)  # its name, description and signature, which the SDK reads
    def answered(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except (SemfsError, ValidationError, ValueError) as e:
            raise ToolError(_failure(e)) from None
        except Exception as e:  # a crash is logged here by its type, and the model told plainly
            log.error("mcp tool failed", tool=fn.__name__, error=type(e).__name__)
            raise ToolError(_failure(e)) from None

    return answered


def wsgi_environ(event: dict[str, Any]) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) request as the WSGI environ ``McpOverHttp.answer`` takes."""
    import base64
    import io

    raw = event.get("body") or ""
    body = base64.b64decode(raw) if event.get("isBase64Encoded") else raw.encode("utf-8")
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    http = (event.get("requestContext") or {}).get("http") or {}
    environ: dict[str, Any] = {
        "REQUEST_METHOD": http.get("method", "POST"),
        "SCRIPT_NAME": "",
        "PATH_INFO": "/mcp",
        "QUERY_STRING": event.get("rawQueryString") or "",
        "SERVER_NAME": headers.get("host", "lambda"),
        "SERVER_PORT": "443",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "CONTENT_TYPE": headers.get("content-type", ""),
        "CONTENT_LENGTH": str(len(body)),
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": io.StringIO(),
        "wsgi.url_scheme": "https",
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": False,
        "wsgi.run_once": False,
    }
    for name, value in headers.items():
        if name not in ("content-type", "content-length"):
            environ["HTTP_" + name.upper().replace("-", "_")] = value
    return environ


def serve_stdio(c: Container, tenant: str, user: str | None = None, agent: str | None = None) -> None:
    """Speak MCP on this process's stdin and stdout until the client closes them, as ``user`` sees the files
    (none: the tenant's first admin)."""
    build_server(c, tenant, user, agent).run("stdio")


_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailers", "transfer-encoding",
     "upgrade"}
)  # fmt: skip


def _within(asgi: Callable[..., Any], deadline_s: float) -> Callable[..., Any]:
    """``asgi`` with the request's deadline around each exchange: past it the exchange is cancelled and
    answered 504 (or its answer ended, if it had begun), so no MCP request holds the host's thread longer
    than any other route. Every exchange also gets the deadline the API's routes run under
    (``deadlines.request_deadline``), so a tool's outbound calls (the LLM, embeddings) share it. A tool
    running in a worker thread when its exchange is cancelled finishes there, bounded by those calls."""
    import anyio

    from semfs.deadlines import request_deadline

    async def app(scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope.get("type") != "http":
            await asgi(scope, receive, send)
            return
        sent = {"started": False, "ended": False}

        async def watched(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                sent["started"] = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                sent["ended"] = True
            await send(message)

        with request_deadline(deadline_s), anyio.move_on_after(deadline_s) as scope_:
            await asgi(scope, receive, watched)
        if not scope_.cancelled_caught:
            return
        log.warning("mcp request past its deadline", deadline_s=deadline_s)
        if not sent["started"]:
            message = f"the request took longer than its {deadline_s:g} s deadline"
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": message}})
            headers = [(b"content-type", b"application/json")]
            await send({"type": "http.response.start", "status": 504, "headers": headers})
            await send({"type": "http.response.body", "body": body.encode(), "more_body": False})
        elif not sent["ended"]:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


class McpOverHttp:
    """The same server over streamable HTTP for ``semfs serve``'s ``/mcp``, one per tenant.

    The SDK's transport is an ASGI app; the local host is WSGI (waitress), so each tenant's app runs on one
    event loop in a thread of its own, reached through ``a2wsgi``. The transport is stateless with JSON
    responses (each POST a whole JSON-RPC exchange, no session to keep or resume), as a Lambda would need
    it. The caller is authenticated by the host before it gets here (the API key names the tenant, as for
    every route), so a tool never sees another tenant. A tenant's server is built on its first request.
    """

    def __init__(self, c: Container, max_body: int, host: str | None = None) -> None:
        import asyncio
        import threading

        # the host the SDK's DNS-rebinding checks guard: a loopback one turns them on (a browser on this
        # machine must not reach a local server through a hostile page); behind API Gateway there is none
        self._c, self._max_body, self._host = c, max_body, host or c.settings.http.host
        self._deadline_s = c.settings.http.request_deadline_s
        self._loop = asyncio.new_event_loop()
        self._closed = asyncio.Event()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True, name="semfs-mcp")
        self._thread.start()
        # one server per caller: (tenant, user, agent, the JWT's groups)
        self._apps: dict[tuple[str, str | None, str | None, tuple[str, ...] | None], Callable[..., Any]] = {}
        self._held: list[Any] = []
        self._lock = threading.Lock()

    def _app(self, key: tuple[str, str | None, str | None, tuple[str, ...] | None]) -> Callable[..., Any]:
        import asyncio
        import threading

        from a2wsgi import ASGIMiddleware

        with self._lock:
            if key not in self._apps:
                server = build_server(self._c, *key)
                asgi = server.streamable_http_app(
                    streamable_http_path="/mcp",
                    stateless_http=True,
                    json_response=True,
                    max_request_body_size=self._max_body,
                    host=self._host,  # on 127.0.0.1: the SDK's DNS-rebinding checks
                )
                ready = threading.Event()

                async def hold() -> None:  # the session manager's task group, for as long as the host runs
                    async with server.session_manager.run():
                        ready.set()
                        await self._closed.wait()

                self._held.append(asyncio.run_coroutine_threadsafe(hold(), self._loop))
                if not ready.wait(60):
                    raise RuntimeError("the MCP transport did not start")
                bounded = _within(asgi, self._deadline_s)
                self._apps[key] = ASGIMiddleware(bounded, loop=self._loop)
            return self._apps[key]

    def answer(
        self,
        tenant: str,
        environ: dict[str, Any],
        *,
        user: str | None = None,
        agent: str | None = None,
        groups: tuple[str, ...] | None = None,
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """One HTTP exchange with ``tenant``'s MCP server: status, headers and the whole body.

        Only POST reaches the SDK. A stateless server has no stream for a GET to open (the SDK would hold
        one open, and the thread serving it, until the client left: eight such GETs took every thread of
        ``semfs serve``), and no session for a DELETE to end; the specification's answer to both is 405."""
        if str(environ.get("REQUEST_METHOD", "")).upper() != "POST":
            message = "semfs serves MCP statelessly: POST each JSON-RPC message (no stream to open, no session)"
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
            return 405, [("Content-Type", "application/json"), ("Allow", "POST")], json.dumps(error).encode()
        said: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> None:
            # hop-by-hop headers are the host's to set (PEP 3333: waitress refuses an app that sets them)
            kept = [(k, v) for k, v in headers if k.lower() not in _HOP_BY_HOP]
            said[:] = [int(status.split(" ", 1)[0]), kept]

        body = b"".join(self._app((tenant, user, agent, groups))(environ, start_response))
        return said[0], said[1], body

    def close(self) -> None:
        """Stop every tenant's transport and the loop (``HttpServer.shutdown``)."""
        self._loop.call_soon_threadsafe(self._closed.set)
        for held in self._held:
            try:
                held.result(timeout=10)
            except Exception as e:  # shutting down: log what would not stop, stop the rest
                log.warning("mcp transport did not stop cleanly", error=type(e).__name__)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
