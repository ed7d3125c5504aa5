"""Slow and greedy clients are bounded, and everybody else is still served: the local host's sockets
(semfs/http_host.py), exercised over real TCP on loopback.

Each test waits on a condition (an answer, a closed connection) under the shared ceiling; the short
deadlines configured here only make the conditions come soon. A second client address is
127.0.0.2, which Linux routes to loopback like 127.0.0.1.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from semfs.config import HttpSettings
from semfs.http_host import serve
from semfs.ports import Container
from semfs.server import ApiKeys, make_wsgi_app
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration

OTHER_CLIENT = "127.0.0.2"


@pytest.fixture
def host(container: Container) -> Iterator[Callable[..., int]]:
    """Start the host with the given bounds (and body limit); returns its port."""
    servers: list[Any] = []

    def start(max_body: int = 10 * 1024 * 1024, **bounds: Any) -> int:
        app = make_wsgi_app(container, ApiKeys(container.settings.api_keys_file), None, max_body)
        server = serve(app, "127.0.0.1", 0, HttpSettings(**bounds), max_body)
        servers.append(server)
        return server.port

    yield start
    for server in servers:
        server.shutdown()


def _connect(port: int, source: str = "127.0.0.1") -> socket.socket:
    return socket.create_connection(("127.0.0.1", port), timeout=CEILING_S, source_address=(source, 0))


def _read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    out = b""
    while chunk := sock.recv(65536):
        out += chunk
    return out


def _health(port: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CEILING_S)
    conn.request("GET", "/health")
    return conn.getresponse().status


def test_a_client_sending_its_headers_a_byte_at_a_time_is_answered_408_and_others_are_served(
    host: Callable[..., int],
) -> None:
    """Before: waitress counted only idle time, so a byte every few seconds held the connection for
    ever (150 of them took the server off the air)."""
    port = host(header_timeout_s=1)
    slow = _connect(port, OTHER_CLIENT)
    slow.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
    assert _health(port) == 200  # another client meanwhile
    answer = _read_all(slow)  # the server closes it: this returns instead of waiting for ever
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert json.loads(answer.split(b"\r\n\r\n", 1)[1])["error"]["code"] == "request_timeout"


def test_a_body_that_stops_arriving_is_answered_408(host: Callable[..., int]) -> None:
    port = host(header_timeout_s=1, body_timeout_s=1)
    slow = _connect(port)
    slow.sendall(b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
    answer = _read_all(slow)
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b"body did not arrive in time" in answer


def test_one_client_address_holds_at_most_its_share_of_connections(host: Callable[..., int]) -> None:
    """A client over its cap is answered 429 with Retry-After and closed; another address is served."""
    port = host(per_client=4)
    held = [_connect(port, OTHER_CLIENT) for _ in range(4)]
    for sock in held:
        sock.sendall(b"GET /health HTTP/1.1\r\n")  # each one busy sending its request
    extra = _connect(port, OTHER_CLIENT)
    answer = _read_all(extra)
    assert answer.startswith(b"HTTP/1.1 429 ")
    assert b"Retry-After: 5" in answer
    assert _health(port) == 200
    held.pop().close()  # one of the four goes, and the client may connect again (once the server has seen it go)
    assert _until_served(port, OTHER_CLIENT)


def _until_served(port: int, source: str) -> bool:
    deadline = time.monotonic() + CEILING_S
    while time.monotonic() < deadline:
        try:
            sock = _connect(port, source)
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if _read_all(sock).startswith(b"HTTP/1.1 200 "):
                return True
        except OSError:  # refused while the server still counted the closed one
            pass
        time.sleep(0.05)
    return False


def test_a_body_over_the_limit_is_answered_413_that_the_client_can_read(host: Callable[..., int]) -> None:
    """Before: waitress answered and closed at once while the client was still sending, so the client's
    kernel saw a reset and the answer was lost (the fuzzer read 'connection reset')."""
    port = host(max_body=64 * 1024)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CEILING_S)
    conn.request("POST", "/search", body=b"x" * (8 * 1024 * 1024), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 413
    assert json.loads(response.read())["error"]["code"] == "too_large"
