"""Requests served at once stay apart, and none waits on another: the local host resolves requests on
many threads, and the Powertools resolver was written for one Lambda event at a time."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver

from semfs.api.request import new_router
from semfs.api.resolver import ConcurrentResolver
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.ports import Container
from semfs.server import ApiKeys, start_http
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration


@dataclass
class Host:
    url: str
    keys: dict[str, str]
    container: Container


@pytest.fixture
def served(container: Container) -> Iterator[Callable[..., Host]]:
    """``semfs serve``'s HTTP host on a free port, with a key for tenants a and b and their files."""
    servers: list[Any] = []

    def start(files: dict[str, list[str]] | None = None) -> Host:
        for tenant, names in (files or {}).items():
            for name in names:
                ingest_bytes(container, tenant, f"# {name}\n\nNotes of tenant {tenant}.".encode(), name)
        api_keys = ApiKeys(container.settings.api_keys_file)
        keys = {t: api_keys.create(t) for t in ("a", "b")}
        server = start_http(container, api_keys, "127.0.0.1", 0)
        servers.append(server)
        return Host(f"http://127.0.0.1:{server.port}", keys, container)

    yield start
    for server in servers:
        server.shutdown()


def _event(path: str, tenant: str) -> dict[str, Any]:
    return {
        "version": "2.0",
        "routeKey": f"GET {path}",
        "rawPath": path,
        "rawQueryString": "",
        "headers": {},
        "requestContext": {
            "http": {"method": "GET", "path": path, "sourceIp": "127.0.0.1"},
            "authorizer": {"lambda": {"tenant": tenant}},
            "stage": "$default",
        },
        "isBase64Encoded": False,
    }


def _resolver_with_a_route_that_waits(
    kind: type[APIGatewayHttpResolver],
) -> tuple[Any, threading.Event, threading.Event]:
    """A resolver whose route, for tenant a, pauses between reading its request and answering."""
    app, router = kind(), new_router()
    entered, release = threading.Event(), threading.Event()

    @router.get("/who")
    def who() -> dict[str, Any]:
        tenant = router.current_event.raw_event["requestContext"]["authorizer"]["lambda"]["tenant"]
        if tenant == "a":
            entered.set()
            assert release.wait(CEILING_S)
        # read again after the pause: the event, and the context the host attached, still this request's
        after = router.current_event.raw_event["requestContext"]["authorizer"]["lambda"]["tenant"]
        return {"before": tenant, "after": after, "attached": router.context.get("attached")}

    app.include_router(router)
    return app, entered, release


def _resolve(app: Any, tenant: str) -> dict[str, Any]:
    app.append_context(attached=tenant)
    return json.loads(app.resolve(_event("/who", tenant), None)["body"])  # type: ignore[no-any-return]


def test_a_request_paused_mid_route_still_sees_its_own_event_and_context() -> None:
    """Before: BaseRouter kept the event on the class, the resolver the context on itself, so tenant
    a's route read tenant b's event once b's request arrived; the host serialised every request on
    one lock to hide it."""
    app, entered, release = _resolver_with_a_route_that_waits(ConcurrentResolver)
    with ThreadPoolExecutor(2) as pool:
        slow = pool.submit(_resolve, app, "a")
        assert entered.wait(CEILING_S)
        assert _resolve(app, "b") == {"before": "b", "after": "b", "attached": "b"}  # served while a waits
        release.set()
        assert slow.result(CEILING_S) == {"before": "a", "after": "a", "attached": "a"}


def test_the_stock_resolver_shares_one_requests_state_with_the_next() -> None:
    """The oracle for the test above: Powertools' own resolver does mix the two requests, so that test
    would see it if ConcurrentResolver stopped keeping the state per thread."""
    app, entered, release = _resolver_with_a_route_that_waits(APIGatewayHttpResolver)
    with ThreadPoolExecutor(2) as pool:
        slow = pool.submit(_resolve, app, "a")
        assert entered.wait(CEILING_S)
        _resolve(app, "b")
        release.set()
        assert slow.result(CEILING_S)["after"] == "b"


def _get(url: str, key: str | None = None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"} if key else {})
    try:
        with urllib.request.urlopen(request, timeout=CEILING_S) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_health_and_another_tenant_answer_while_a_search_is_stuck(
    served: Callable[..., Any],
) -> None:
    """Before: every request waited on one lock, so a search stuck in its embedding call (an LLM or
    embeddings endpoint that does not answer) held /health and every other tenant."""
    stuck, release = threading.Event(), threading.Event()
    host = served()
    real = host.container.embedder.embed_query

    def embed_query(text: str) -> list[float]:
        if text == "stuck":
            stuck.set()
            assert release.wait(CEILING_S)
        return real(text)

    host.container.embedder.embed_query = embed_query  # type: ignore[method-assign]
    base, key_a, key_b = host.url, host.keys["a"], host.keys["b"]
    body = json.dumps({"query": "stuck"}).encode()
    search = urllib.request.Request(
        base + "/search", data=body, headers={"Authorization": f"Bearer {key_a}", "Content-Type": "application/json"}
    )
    with ThreadPoolExecutor(1) as pool:
        blocked = pool.submit(lambda: urllib.request.urlopen(search, timeout=CEILING_S).status)
        assert stuck.wait(CEILING_S)
        assert _get(base + "/health")[0] == 200
        status, page = _get(base + "/files", key_b)
        assert status == 200 and page["files"] == []
        assert not blocked.done()  # all of it answered while tenant a's search was still stuck
        release.set()
        assert blocked.result(CEILING_S) == 200


def test_two_tenants_at_once_each_read_only_their_own(served: Callable[..., Any]) -> None:
    """16 clients of two tenants list and search at the same time (400 requests): every answer is its own
    tenant's, none empty."""
    host = served(files={"a": ["alpha-notes.md"], "b": ["beta-notes.md"]})
    base = host.url

    def one(i: int) -> tuple[str, set[str]]:
        tenant = "ab"[i % 2]
        if i % 4 < 2:
            status, page = _get(base + "/files", host.keys[tenant])
            assert status == 200
            return tenant, {f["filename"] for f in page["files"]}
        search = urllib.request.Request(
            base + "/search",
            data=json.dumps({"query": "notes of tenant"}).encode(),
            headers={"Authorization": f"Bearer {host.keys[tenant]}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(search, timeout=CEILING_S) as response:
            found = json.loads(response.read())
        return tenant, {r["filename"] for r in found["results"]}

    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(one, range(400)))
    assert dict(answers) == {"a": {"alpha-notes.md"}, "b": {"beta-notes.md"}}
    assert all(names == {f"{'alpha' if t == 'a' else 'beta'}-notes.md"} for t, names in answers)
