"""`semfs serve`'s host: uploads are queued (202), nothing waits for ingestion, malformed requests get
the uniform error body, and download links honour the port and the file's deletion."""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from semfs.adapters.local.sqlite_jobs import SqliteJobQueue
from semfs.bootstrap import Container, build_container
from semfs.extractors.dispatch import ExtractOutput
from semfs.ports import RecordQuery
from semfs.server import ApiKeys, HttpServer, start_http
from tests.conftest import make_settings
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration


class SlowExtractor:
    """The real extractor, made to take ``delay`` seconds for files named slow-*."""

    def __init__(self, inner: Any, delay: float) -> None:
        self.inner, self.delay = inner, delay
        self.gate = threading.Event()

    def extract(self, data: bytes, filename: str) -> ExtractOutput:
        if filename.startswith("slow-"):
            self.gate.wait(self.delay)
        out: ExtractOutput = self.inner.extract(data, filename)
        return out

    def render(self, data: bytes, kind: str, pages: list[int], dpi: int) -> list[tuple[int, bytes]]:
        return self.inner.render(data, kind, pages, dpi)  # type: ignore[no-any-return]

    def run(self, fn: Any, args: tuple[Any, ...], timeout_s: float) -> Any:
        return self.inner.run(fn, args, timeout_s)

    def close(self) -> None:
        self.gate.set()


@dataclass
class Host:
    base: str
    port: int
    key: str
    c: Container
    server: HttpServer
    extractor: SlowExtractor

    def call(self, method: str, path: str, body: bytes | None = None, ctype: str = "application/json") -> Any:
        request = urllib.request.Request(self.base + path, data=body, method=method)
        request.add_header("Authorization", f"Bearer {self.key}")
        if body is not None:
            request.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(request, timeout=CEILING_S) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _multipart(name: str, data: bytes) -> tuple[bytes, str]:
    b = "hostb0undary"
    body = (
        f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n'.encode()
        + data
        + f"\r\n--{b}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={b}"


@pytest.fixture
def host(tmp_path: Path, shared_extractor: Any) -> Iterator[Host]:
    port = _free_port()
    slow = SlowExtractor(shared_extractor, delay=CEILING_S)  # held until the test sets its gate
    c = build_container(
        make_settings(tmp_path, http_port=port, max_file_mb=1, tenant_max_queued=2),
        extractor=slow,
        background_workers=1,  # type: ignore[arg-type]
    )
    keys = ApiKeys(c.settings.api_keys_file)
    key = keys.create("acme")
    server = start_http(c, keys, "127.0.0.1", port)
    yield Host(f"http://127.0.0.1:{port}", port, key, c, server, slow)
    slow.gate.set()
    server.shutdown()
    c.starter.close()


def _until(predicate: Any, timeout: float = CEILING_S) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"the condition did not hold within {timeout} s")


def test_uploads_are_queued_and_searches_never_wait(host: Host) -> None:
    # given: a file whose ingestion does not end until the test lets it
    body, ctype = _multipart("slow-report.md", b"# Slow\n\nA report about cargo bikes.")
    status, queued = host.call("POST", "/files", body, ctype)
    assert status == 202 and queued["status"] == "received" and queued["status_url"] == f"/files/{queued['file_id']}"
    # when: the same host answers health, search and the queue while it is being ingested
    assert host.call("GET", "/health")[0] == 200
    assert host.call("POST", "/search", json.dumps({"query": "cargo bikes"}).encode())[0] == 200
    status, jobs = host.call("GET", "/jobs")
    assert status == 200 and [j["file_id"] for j in jobs["jobs"]] == [queued["file_id"]]
    # then: a second upload waits in the queue and can be cancelled; the first finishes
    body2, _ = _multipart("notes.md", b"# Notes\n\nSecond file.")
    _, second = host.call("POST", "/files", body2, ctype)
    status, cancelled = host.call("POST", f"/files/{second['file_id']}/cancel")
    assert status == 200 and cancelled["outcome"] == "SKIPPED_CANCELLED"
    assert host.call("POST", f"/files/{second['file_id']}/cancel")[0] == 400  # not queued any more
    host.extractor.gate.set()
    _until(lambda: host.call("GET", f"/files/{queued['file_id']}")[1]["status"] == "indexed")
    assert host.call("GET", "/jobs")[1]["jobs"] == []


@pytest.mark.parametrize(
    ("raw", "status"),
    [
        (b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
        (b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
        (b"POST /search HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000000\r\n\r\n", 413),
        (b"POST /files HTTP/1.1\r\nHost: x\r\nContent-Length: 3000000\r\n\r\n" + b"x" * 1000, 413),
        (b"GET /download/\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ],
)
def test_malformed_http_gets_a_4xx_with_the_error_body(host: Host, raw: bytes, status: int) -> None:
    with socket.create_connection(("127.0.0.1", host.port), timeout=CEILING_S) as s:
        s.sendall(raw)
        reply = b""
        while chunk := s.recv(65536):  # the server closes the connection after an error
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == str(status).encode()
    assert json.loads(body)["error"]["code"]


def test_malformed_bodies_get_a_4xx_with_the_error_body(host: Host) -> None:
    for body, ctype, status in [
        (b"\xff\xfe not utf-8", "application/json", 400),
        (b"[" * 100_000 + b"]" * 100_000, "application/json", 400),
        (b'{"query": ', "application/json", 422),
    ]:
        got, payload = host.call("POST", "/search", body, ctype)
        assert got == status and set(payload) == {"error"}, (got, payload)


def test_an_address_with_no_route_is_404_before_any_key_is_asked_for(host: Host) -> None:
    """Issue 49: `/no/such/page` answered a JSON 401 about API keys. An address no route answers is a 404,
    with or without a key (the routes are public in /openapi.json); a route's own answer still needs one."""
    for key in (host.key, None):
        request = urllib.request.Request(host.base + "/no/such/page", headers={"Accept": "application/json"})
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=CEILING_S)
        assert refused.value.code == 404 and json.loads(refused.value.read())["error"]["code"] == "not_found"
    with pytest.raises(urllib.error.HTTPError) as asked:
        urllib.request.urlopen(host.base + "/files/f_0", timeout=CEILING_S)
    assert asked.value.code == 401


def test_download_links_use_the_serving_port_and_die_with_the_file(host: Host) -> None:
    body, ctype = _multipart("terms.md", b"# Terms\n\nPayable within thirty days.")
    _, created = host.call("POST", "/files", body, ctype)
    _until(lambda: host.call("GET", f"/files/{created['file_id']}")[1]["status"] == "indexed")
    _, link = host.call("GET", f"/files/{created['file_id']}/download")
    assert link["url"].startswith(f"http://127.0.0.1:{host.port}/download/")
    with urllib.request.urlopen(link["url"], timeout=CEILING_S) as r:
        assert r.read().startswith(b"# Terms")
    assert host.call("DELETE", f"/files/{created['file_id']}")[0] == 200
    with pytest.raises(urllib.error.HTTPError) as gone:
        urllib.request.urlopen(link["url"], timeout=CEILING_S)
    assert gone.value.code == 404 and json.loads(gone.value.read())["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    ("name", "data", "shown"),
    [
        ("notes.txt", b"Plain notes about the harbour.", "text/plain"),
        ("page.html", b"<html><body><script>alert(1)</script>Harbour page</body></html>", None),
        # semfs reads an SVG as text: it is shown as its source (text/plain, nosniff, sandboxed), never drawn
        ("drawing.svg", b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', "text/plain"),
    ],
)
def test_only_formats_that_run_nothing_are_shown_inline(host: Host, name: str, data: bytes, shown: str | None) -> None:
    """The page previews a file with ``?inline=1``: a PDF, an image or plain text is shown in the browser;
    HTML, SVG and every other format stay a download, so nothing a file carries runs on semfs's origin."""
    body, ctype = _multipart(name, data)
    _, created = host.call("POST", "/files", body, ctype)
    _until(lambda: host.call("GET", f"/files/{created['file_id']}")[1]["status"] in ("indexed", "skipped"))
    _, link = host.call("GET", f"/files/{created['file_id']}/download")
    with urllib.request.urlopen(link["url"] + "?inline=1", timeout=CEILING_S) as r:
        disposition, content_type = r.headers["Content-Disposition"], r.headers["Content-Type"]
        assert r.headers["X-Content-Type-Options"] == "nosniff"
        if shown:
            assert (content_type, disposition.split(";")[0]) == (shown, "inline")
            assert "sandbox" in r.headers["Content-Security-Policy"]
        else:
            assert (content_type, disposition.split(";")[0]) == ("application/octet-stream", "attachment")


def test_a_tenant_with_its_share_waiting_is_answered_429_and_nothing_is_stored(host: Host) -> None:
    """Before: the queue took every upload (it grew to ~1,300 for one tenant) and never said 429."""
    body, ctype = _multipart("slow-first.md", b"# First\n\nHeld in extraction.")
    first = host.call("POST", "/files", body, ctype)[1]
    _until(lambda: host.call("GET", "/jobs")[1]["jobs"][0]["state"] == "running")
    for n in (1, 2):  # the tenant's share (tenant_max_queued=2) waits behind it
        assert host.call("POST", "/files", *_multipart(f"waiting-{n}.md", f"# Waiting {n}".encode()))[0] == 202
    before = host.c.repo.query(RecordQuery(tenant_id="acme", limit=100))
    request = urllib.request.Request(host.base + "/files", data=_multipart("one-more.md", b"# One more")[0])
    request.add_header("Authorization", f"Bearer {host.key}")
    request.add_header("Content-Type", ctype)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=CEILING_S)
    assert refused.value.code == 429 and refused.value.headers["Retry-After"] == "10"
    assert json.loads(refused.value.read())["error"]["code"] == "busy"
    assert host.c.repo.query(RecordQuery(tenant_id="acme", limit=100)) == before  # nothing stored
    # another tenant is not refused for it, and its file is the next one started
    other = ApiKeys(host.c.settings.api_keys_file).create("globex")
    request = urllib.request.Request(host.base + "/files", data=_multipart("theirs.md", b"# Theirs")[0])
    request.add_header("Authorization", f"Bearer {other}")
    request.add_header("Content-Type", ctype)
    with urllib.request.urlopen(request, timeout=CEILING_S) as r:
        assert r.status == 202
        theirs = json.loads(r.read())["file_id"]
    host.extractor.gate.set()
    _until(lambda: host.c.repo.get("globex", theirs).status.terminal)
    done = host.c.repo.get("globex", theirs).updated_at
    waiting = [r for r in host.c.repo.query(RecordQuery(tenant_id="acme", limit=100)) if r.file_id != first["file_id"]]
    # at most one of acme's waiting files went first: compared by when each finished, not by how many had
    # finished when this thread looked (on a quick machine acme's two tiny files finish right after globex's)
    assert sum(r.status.terminal and r.updated_at < done for r in waiting) <= 1


def test_workers_take_tenants_in_turn(tmp_path: Path) -> None:
    """The queue's own order: one tenant's 150 queued files delay another's one file by one turn, not by 150
    (before: oldest first, so globex's file was the 151st claimed)."""
    queue = SqliteJobQueue(tmp_path / "jobs.db")
    for n in range(150):
        queue.enqueue(f"acme-{n}", "acme", f"f{n}", {})
    queue.enqueue("globex-0", "globex", "g0", {})
    claimed = [queue.claim() for _ in range(4)]
    order = [c[0] for c in claimed if c is not None]
    assert order[:2] in (["acme-0", "globex-0"], ["globex-0", "acme-0"])
    assert order[2:] == ["acme-1", "acme-2"]  # and acme's own files stay oldest first
    assert queue.backlog("acme") == 147 and queue.backlog("globex") == 0
