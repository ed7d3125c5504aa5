"""The local HTTP host's socket side: waitress, bounded against slow and greedy clients.

Waitress reads every request whole on one event loop before a worker thread sees it, so a slow client
never holds a worker, but on its own it bounds a client only by idle time and a total connection
count: 150 connections each sending a header byte every 5 s were never idle, filled the connection
limit, and nobody else was served. Here each connection also has

- a header deadline (``header_timeout_s`` from a request's first byte),
- a body deadline (``body_timeout_s`` more, extended one second per ``body_min_rate`` bytes received,
  as Apache's mod_reqtimeout does: a slow phone's upload goes through, a trickle does not),
- a send deadline (``send_timeout_s`` without a byte taken while a response waits to be read),
- a cap per client address (``per_client``; more is answered 429 and closed),

and a request refused before its body was read (413) is answered and the rest of the body drained for
a moment before closing, so the client reads the answer instead of a connection reset.

A request that timed out while being sent is answered 408 with the uniform error body.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.server import MultiSocketServer, TcpWSGIServer
from waitress.task import ErrorTask, ThreadedTaskDispatcher

from semfs.config import HttpSettings
from semfs.observability import get_logger

log = get_logger(__name__)

LINGER_S = 2.0  # how long a refused request's body is read and dropped after the answer
MAINTENANCE_S = 1.0  # how often the deadlines are checked


def error_body(code: str, message: str) -> bytes:
    """The uniform error body (api/app.py) for answers the host makes itself."""
    return json.dumps({"error": {"code": code, "message": message, "details": []}}).encode()


def _raw_answer(status: str, code: str, message: str, extra: str = "") -> bytes:
    body = error_body(code, message)
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        f"Connection: close\r\n{extra}\r\n"
    )
    return head.encode() + body


class JsonErrorTask(ErrorTask):  # type: ignore[misc]
    """Waitress's own answers to malformed HTTP (a bad Content-Length, a bad URI, a body over the limit)
    in the uniform error body; the rest of the request is drained before the connection closes."""

    def execute(self) -> None:
        e = self.request.error
        code = {400: "bad_request", 413: "too_large", 431: "headers_too_large"}.get(e.code, "bad_request")
        message = f"{e.reason}: {e.body}".strip(": ")
        if e.code == 413:
            limit = self.channel.adj.max_request_body_size
            message = f"the body is over the limit of {limit} bytes (SEMFS_MAX_FILE_MB)"
        body = error_body(code, message)
        self.status = f"{e.code} {e.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)
        if hasattr(self.channel, "linger"):
            self.channel.linger = True


class GuardedChannel(HTTPChannel):  # type: ignore[misc]
    """One client connection, with the deadlines of the module docstring."""

    error_task_class = JsonErrorTask
    bounds: HttpSettings  # set on the subclass made per server
    started: float | None = None  # monotonic time of the first byte of the request being received
    body_bytes = 0  # body bytes of that request received so far
    linger = False  # drain what the client still sends after the answer, then close
    linger_until: float | None = None

    def received(self, data: bytes) -> bool:
        before = self.request
        if before is None:
            self.started, self.body_bytes = time.monotonic(), 0
        elif before.headers_finished:
            self.body_bytes += len(data)
        taken: bool = super().received(data)
        if self.request is None:
            self.started = None
        elif self.request is not before:  # a pipelined request began within this read
            self.started, self.body_bytes = time.monotonic(), 0
        return taken

    def overdue(self, now: float) -> str | None:
        """What the client has failed to send in time, or ``None``."""
        if self.started is None or self.request is None or self.requests:
            return None
        waited, b = now - self.started, self.bounds
        if not self.request.headers_finished:
            return "headers" if waited > b.header_timeout_s else None
        allowed = b.header_timeout_s + b.body_timeout_s + self.body_bytes / b.body_min_rate
        return "body" if waited > allowed else None

    def time_out(self, what: str) -> None:
        """Answer 408 and close (only between responses: nothing of another answer is in the buffers)."""
        answer = _raw_answer("408 Request Timeout", "request_timeout", f"the request's {what} did not arrive in time")
        with self.outbuf_lock:
            self.outbufs[-1].append(answer)
            self.current_outbuf_count += len(answer)
            self.total_outbufs_len += len(answer)
        self.request, self.started = None, None
        self.close_when_flushed = True

    def stalled(self, now: float) -> bool:
        """A response waits in the buffers and the client has taken none of it for ``send_timeout_s``."""
        return bool(self.total_outbufs_len) and now - self.last_activity > self.bounds.send_timeout_s

    # lingering close: after an answer to a request whose body was never read, stop writing, read and
    # drop what the client still sends (so its kernel does not see a reset and discard our answer)
    def handle_close(self) -> None:
        if self.linger and self.linger_until is None and self.connected:
            self.linger_until = time.monotonic() + LINGER_S
            self.will_close = self.close_when_flushed = False
            try:
                self.socket.shutdown(socket.SHUT_WR)
                return
            except OSError:
                pass
        super().handle_close()

    def readable(self) -> bool:
        return self.linger_until is not None or bool(super().readable())

    def writable(self) -> bool:
        return self.linger_until is None and bool(super().writable())

    def handle_read(self) -> None:
        if self.linger_until is None:
            super().handle_read()
            return
        try:
            data = self.recv(64 * 1024)  # b"" at the end: recv has closed the channel
        except OSError:
            data = b""
        if data and time.monotonic() > self.linger_until:
            super().handle_close()


class GuardedServer(TcpWSGIServer):  # type: ignore[misc]
    """A waitress TCP server whose channels are ``GuardedChannel`` and whose maintenance, run every
    second, enforces their deadlines."""

    channel_type: type[GuardedChannel]

    def channel_class(self, server: Any, conn: socket.socket, addr: Any, adj: Adjustments, map: Any = None) -> Any:
        """Called by waitress's ``handle_accept`` for each new connection: admit it or refuse it."""
        client = _client(addr)
        held = sum(1 for ch in self.active_channels.values() if _client(ch.addr) == client)
        if held >= self.channel_type.bounds.per_client:
            answer = _raw_answer(
                "429 Too Many Requests",
                "too_many_connections",
                "this client has too many open connections",
                "Retry-After: 5\r\n",
            )
            try:
                conn.setblocking(False)
                conn.send(answer)
            except OSError:
                pass
            conn.close()
            return None
        return self.channel_type(server, conn, addr, adj, map=map)

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # idle connections (waitress's channel_timeout)
        mono = time.monotonic()
        for channel in list(self.active_channels.values()):
            if not isinstance(channel, GuardedChannel):
                continue
            if channel.linger_until is not None and mono > channel.linger_until:
                channel.linger = False
                channel.handle_close()
            elif (what := channel.overdue(mono)) is not None:
                log.info("http client too slow", what=what)
                channel.time_out(what)
            elif channel.stalled(now):
                log.info("http client stopped reading")
                channel.will_close = True


def _client(addr: Any) -> Any:
    return addr[0] if isinstance(addr, tuple) else addr


def serve(app: Callable[..., Iterable[bytes]], host: str, port: int, bounds: HttpSettings, max_body: int) -> HttpServer:
    """Serve ``app`` as waitress's ``create_server`` would, with a ``GuardedServer`` for each address
    it listens on, in a background thread."""
    adj = Adjustments(
        host=host,
        port=port,
        threads=bounds.threads,
        max_request_body_size=max_body,
        channel_timeout=bounds.idle_timeout_s,
        cleanup_interval=MAINTENANCE_S,
        connection_limit=bounds.connection_limit,
        asyncore_use_poll=True,  # select() stops at 1,024 descriptors
        ident="semfs",
        clear_untrusted_proxy_headers=True,
    )
    channel_type = type("Channel", (GuardedChannel,), {"bounds": bounds})
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adj.threads)
    shared_map: dict[int, Any] = {}
    servers = []
    for sockinfo in adj.listen:
        server = GuardedServer(app, shared_map, True, None, dispatcher=dispatcher, adj=adj, sockinfo=sockinfo)
        server.channel_type = channel_type
        servers.append(server)
    listening = [(s.effective_host, s.effective_port) for s in servers]
    runner = servers[0] if len(servers) == 1 else MultiSocketServer(shared_map, adj, listening, dispatcher)
    return HttpServer(runner, shared_map, dispatcher, int(servers[0].effective_port))


class HttpServer:
    """A running local host (waitress, threads) in a background thread: ``.port``, ``.shutdown()``."""

    def __init__(self, runner: Any, channels: dict[int, Any], dispatcher: ThreadedTaskDispatcher, port: int) -> None:
        self._server, self._map, self._dispatcher = runner, channels, dispatcher
        self._stopping = threading.Event()
        self.port = port
        self.closing: list[Callable[[], None]] = []  # run by shutdown, after the last request
        self._thread = threading.Thread(target=self._run, daemon=True, name="semfs-http")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._server.run()
        except (OSError, ValueError):  # the listening socket closed under the loop by shutdown()
            if not self._stopping.is_set():
                raise

    def shutdown(self) -> None:
        self._stopping.set()
        for channel in list(self._map.values()):  # the listeners and every open connection
            channel.close()
        self._dispatcher.shutdown(timeout=5)
        self._thread.join(timeout=10)
        for close in self.closing:
            close()
