"""``semfs mcp``: files as an agent's context over MCP, driven by the official SDK's own client, in
process (every tool, the error paths) and over stdio against the real ``semfs mcp`` command."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from semfs import demo
from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.bootstrap import Container, build_container
from semfs.mcp_server import build_server
from semfs.pipeline.intake.ingest import ingest_bytes
from tests.conftest import make_settings
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration
T = "acme"
HANDBOOK = demo.TEXT_FILES["handbook/employee-handbook.md"].encode()


@pytest.fixture
def stocked(tmp_path: Path, shared_extractor: object) -> Iterator[tuple[Container, dict[str, str]]]:
    c = build_container(make_settings(tmp_path), extractor=shared_extractor)  # type: ignore[arg-type]
    ids = {
        "handbook": ingest_bytes(c, T, HANDBOOK, "employee-handbook.md").record.file_id,
        "policy": ingest_bytes(c, T, demo._security_pdf(), "security-policy.pdf").record.file_id,
        "theirs": ingest_bytes(c, "globex", b"# Globex secrets\n\nThe launch date is in March.", "s.md").record.file_id,
    }
    yield c, ids
    c.close()


def call(c: Container, tenant: str, tool: str, args: dict[str, Any]) -> Any:
    """One tool call through the SDK's client, connected to the server in process."""
    from mcp import Client

    async def go() -> Any:
        async with Client(build_server(c, tenant)) as client:
            return await client.call_tool(tool, args)

    return asyncio.run(go())


def ok(result: Any) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def refused(result: Any) -> str:
    assert result.is_error
    text = " ".join(getattr(b, "text", "") for b in result.content)
    assert "Traceback" not in text and 'File "' not in text
    return text


def test_the_tools_an_agent_sees_are_described_for_a_model(stocked: tuple[Container, dict[str, str]]) -> None:
    from mcp import Client

    c, _ = stocked

    async def go() -> Any:
        async with Client(build_server(c, T)) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in asyncio.run(go())}
    assert set(tools) == {
        "search", "ask", "context", "list_files", "read_file", "read_passages", "versions", "similar",
        "save_artifact", "add_note", "history", "entity",
    }  # fmt: skip
    for tool in tools.values():
        assert tool.description and len(tool.description) > 60, tool.name  # enough for a model to choose
        assert tool.input_schema["type"] == "object"


def test_search_ask_context_read_and_versions(stocked: tuple[Container, dict[str, str]]) -> None:
    c, ids = stocked
    found = ok(call(c, T, "search", {"query": "how many days of paid holiday", "limit": 3}))
    assert found["results"][0]["file_id"] == ids["handbook"]
    assert found["results"][0]["passages"][0]["text"] and 0 <= found["results"][0]["relevance"] <= 1
    answer = ok(call(c, T, "ask", {"question": "How many days of paid holiday do staff get?"}))
    assert answer["status"] == "answered" and answer["citations"][0]["file_id"] == ids["handbook"]
    brief = ok(call(c, T, "context", {"subject": "Lost laptop", "body": "I left my work laptop on the train"}))
    assert ids["policy"] in [i["file_id"] for i in brief["items"]]
    page = ok(call(c, T, "read_file", {"file_id": ids["policy"]}))
    assert "Passwords must be at least 14 characters" in " ".join(b["text"] for b in page["blocks"])
    assert page["blocks"][0]["location"].startswith("page")
    assert [v["file_id"] for v in ok(call(c, T, "versions", {"file_id": ids["handbook"]}))["versions"]] == [
        ids["handbook"]
    ]
    listed = ok(call(c, T, "list_files", {"limit": 1}))
    assert len(listed["files"]) == 1 and listed["next_offset"] == 1


def test_another_tenants_file_is_not_found_and_never_shown(stocked: tuple[Container, dict[str, str]]) -> None:
    c, ids = stocked
    for tool, args in [
        ("read_file", {"file_id": ids["theirs"]}),
        ("versions", {"file_id": ids["theirs"]}),
        ("similar", {"file_id": ids["theirs"]}),
        ("ask", {"question": "When is the launch date?", "file_id": ids["theirs"]}),
        ("save_artifact", {"content": "x", "filename": "x.md", "agent": "a", "run_id": "r", "derived_from": [ids["theirs"]]}),  # noqa: E501
        ("add_note", {"file_id": ids["theirs"], "text": "mine now", "agent": "a"}),
        ("history", {"file_id": ids["theirs"]}),
    ]:  # fmt: skip
        assert "no such file" in refused(call(c, T, tool, args)), tool
    assert ok(call(c, T, "search", {"query": "Globex launch date in March", "mode": "keyword"}))["results"] == []


def test_bad_inputs_are_tool_errors_with_the_apis_rules(stocked: tuple[Container, dict[str, str]]) -> None:
    c, ids = stocked
    assert "query" in refused(call(c, T, "search", {"query": ""}))
    assert "mode" in refused(call(c, T, "search", {"query": "holiday", "mode": "telepathic"}))
    assert "limit" in refused(call(c, T, "search", {"query": "holiday", "limit": 100_000}))
    assert "sort" in refused(call(c, T, "list_files", {"sort": "random"}))
    assert "offset" in refused(call(c, T, "read_file", {"file_id": ids["handbook"], "offset": -1}))
    assert "no such file" in refused(call(c, T, "read_file", {"file_id": "f_000000000000000000000000"}))
    assert "run_id" in refused(
        call(c, T, "save_artifact", {"content": "x", "filename": "x.md", "agent": "a", "run_id": " "})
    )


def test_an_artifact_is_saved_with_its_provenance_once_per_run(stocked: tuple[Container, dict[str, str]]) -> None:
    c, ids = stocked
    args = {
        "content": "# Leave summary\n\nStaff get 28 days of paid holiday a year plus public holidays.",
        "filename": "leave-summary.md",
        "agent": "hr-assistant",
        "run_id": "run-42",
        "derived_from": [ids["handbook"]],
    }
    first = ok(call(c, T, "save_artifact", args))
    again = ok(call(c, T, "save_artifact", args))
    assert first["file_id"] == again["file_id"] and first["indexed"] is True
    record = c.repo.get(T, first["file_id"])
    assert record.source_type == "agent_generated"
    assert record.provenance["agent"] == "hr-assistant" and record.provenance["derived_from"] == [ids["handbook"]]
    hits = ok(call(c, T, "search", {"query": "leave summary paid holiday", "source_type": "agent_generated"}))
    assert [r["file_id"] for r in hits["results"]] == [first["file_id"]]


def test_semfs_mcp_over_stdio_with_a_key_sees_only_its_tenant(
    stocked: tuple[Container, dict[str, str]], tmp_path: Path
) -> None:
    """The real command, spawned by the SDK's stdio client as an agent's configuration would spawn it."""
    from mcp import Client, StdioServerParameters

    from semfs.server import ApiKeys

    c, ids = stocked
    key = ApiKeys(c.settings.api_keys_file).create(T)
    semfs = str(Path(sys.executable).with_name("semfs"))
    env = {**os.environ, "SEMFS_DATA_DIR": str(c.settings.data_dir), "SEMFS_EMBEDDER": "hash", "SEMFS_API_KEY": key}
    params = StdioServerParameters(command=semfs, args=["mcp"], env=env)

    async def go() -> tuple[Any, Any, Any]:
        async with Client(params, read_timeout_seconds=CEILING_S) as client:
            found = await client.call_tool("search", {"query": "paid holiday days a year", "limit": 3})
            theirs = await client.call_tool("read_file", {"file_id": ids["theirs"]})
            text = await client.read_resource(f"semfs://files/{ids['handbook']}")
            return found, theirs, text

    found, theirs, text = asyncio.run(go())
    assert ok(found)["results"][0]["file_id"] == ids["handbook"]
    assert "no such file" in refused(theirs)
    assert "28 days of paid holiday" in json.dumps(text.model_dump(mode="json"))


def test_semfs_mcp_refuses_a_key_it_does_not_know(tmp_path: Path) -> None:
    import subprocess

    semfs = str(Path(sys.executable).with_name("semfs"))
    env = {**os.environ, "SEMFS_DATA_DIR": str(tmp_path / "data"), "SEMFS_EMBEDDER": "hash"}
    done = subprocess.run(
        [semfs, "mcp", "--key", "sk-not-a-key"], env=env, capture_output=True, text=True, timeout=CEILING_S, check=False
    )
    assert done.returncode == 2 and "not valid" in done.stderr and done.stdout == ""


def _http_client(url: str, key: str | None) -> Any:
    """The SDK's streamable HTTP transport to ``url`` with the bearer key an agent's config would hold."""
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers, timeout=CEILING_S))


@pytest.fixture
def served(stocked: tuple[Container, dict[str, str]]) -> Iterator[tuple[str, dict[str, str], dict[str, str]]]:
    """``semfs serve``'s HTTP host over the stocked container: its /mcp, and a key per tenant."""
    import socket

    from semfs.server import ApiKeys, start_http

    c, ids = stocked
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    keys = ApiKeys(c.settings.api_keys_file)
    issued = {T: keys.create(T), "globex": keys.create("globex")}
    server = start_http(c, keys, "127.0.0.1", port)
    yield f"http://127.0.0.1:{port}/mcp", issued, ids
    server.shutdown()


def test_the_same_server_over_streamable_http_at_mcp_with_the_apis_keys(
    served: tuple[str, dict[str, str], dict[str, str]],
) -> None:
    """An agent configured with semfs serve's URL and an API key: the SDK's own HTTP client lists the
    tools, searches and reads its tenant's files, gets "no such file" for the other tenant's id, and each
    tenant's key sees its own files alone (two clients at once on one host)."""
    from mcp import Client

    url, keys, ids = served

    async def as_tenant(key: str, query: str, other: str) -> tuple[Any, Any, Any]:
        async with Client(_http_client(url, key), read_timeout_seconds=CEILING_S) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            found = await client.call_tool("search", {"query": query, "limit": 3})
            theirs = await client.call_tool("read_file", {"file_id": other})
            return tools, found, theirs

    async def both() -> list[tuple[Any, Any, Any]]:
        return list(
            await asyncio.gather(
                as_tenant(keys[T], "paid holiday days a year", ids["theirs"]),
                as_tenant(keys["globex"], "launch date March", ids["handbook"]),
            )
        )

    (tools, found, theirs), (_, globex_found, globex_theirs) = asyncio.run(both())
    assert "save_artifact" in tools and "search" in tools
    assert ok(found)["results"][0]["file_id"] == ids["handbook"]
    assert "no such file" in refused(theirs)
    assert [r["file_id"] for r in ok(globex_found)["results"]] == [ids["theirs"]]
    assert "no such file" in refused(globex_theirs)


def test_mcp_over_http_without_a_valid_key_is_refused_before_any_tool_runs(
    served: tuple[str, dict[str, str], dict[str, str]],
) -> None:
    import urllib.error
    import urllib.request

    url, _, _ = served
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    for key in (None, "sk-not-a-key"):
        request = urllib.request.Request(url, data=hello, method="POST")
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/json, text/event-stream")
        if key:
            request.add_header("Authorization", f"Bearer {key}")
        with pytest.raises(urllib.error.HTTPError) as refused_:
            urllib.request.urlopen(request, timeout=CEILING_S)
        assert refused_.value.code == 401 and refused_.value.headers["WWW-Authenticate"].startswith("Bearer")
        assert json.loads(refused_.value.read())["error"]["code"] == "unauthorized"


def test_an_agent_leaves_a_signed_note_people_see_and_search_finds(stocked: tuple[Container, dict[str, str]]) -> None:
    """Issue 32: an agent annotates a file it used (what it checked); the note is signed with the agent, found by
    search, and in the file's history; bad notes are tool errors with the API's rules."""
    c, ids = stocked
    noted = ok(
        call(
            c,
            T,
            "add_note",
            {"file_id": ids["policy"], "text": "Checked the zeppelin clause for the audit", "agent": "audit-bot"},
        )
    )
    assert noted["notes"][-1]["author"] == "agent audit-bot"
    found = ok(call(c, T, "search", {"query": "zeppelin clause audit", "mode": "keyword"}))
    assert [r["file_id"] for r in found["results"]][:1] == [ids["policy"]]
    entries = ok(call(c, T, "history", {"file_id": ids["policy"]}))["entries"]
    assert entries[-1]["action"] == "received"  # newest first
    assert (entries[0]["action"], entries[0]["by"]) == ("noted", "agent audit-bot")
    assert "some text" in refused(call(c, T, "add_note", {"file_id": ids["policy"], "text": "  ", "agent": "a"}))
    assert "agent" in refused(call(c, T, "add_note", {"file_id": ids["policy"], "text": "x", "agent": " "}))


class _HeldEmbedder(HashEmbedder):
    """The hash embedder, but a query holding ``HELD`` waits until the test lets it go: an MCP tool that a slow
    model keeps busy for as long as the test likes."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()

    def embed_query(self, text: str) -> list[float]:
        if HELD in text:
            self.release.wait(CEILING_S)
        return super().embed_query(text)


HELD = "zzheldzz"


def _raw(port: int, request: bytes) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=CEILING_S)
    s.sendall(request)
    return s


def _status(s: socket.socket) -> int:
    """The status of the answer on ``s``, read until the status line is whole (0: closed without one)."""
    got = b""
    while b"\r\n" not in got:
        chunk = s.recv(4096)
        if not chunk:
            return 0
        got += chunk
    return int(got.split(b" ", 2)[1])


def test_open_mcp_streams_and_slow_tools_never_take_the_server_down(tmp_path: Path, shared_extractor: object) -> None:
    """Issue 47.1: an authenticated ``GET /mcp`` asking for an SSE stream held a waitress thread for ever; eight took
    every thread and /health stopped answering for every tenant. Now a GET is 405 at once (stateless: no stream to
    serve), and an MCP POST whose tool outlives the request deadline answers 504 and frees its thread. 8 and then
    64 GETs at once, and 8 POSTs whose tool never finishes on its own, while /health and a search answer."""
    from semfs.server import ApiKeys, start_http

    embedder = _HeldEmbedder()
    settings = make_settings(tmp_path, request_deadline_s=3)
    c = build_container(settings, embedder=embedder, extractor=shared_extractor)  # type: ignore[arg-type]
    ingest_bytes(c, T, HANDBOOK, "employee-handbook.md")
    keys = ApiKeys(c.settings.api_keys_file)
    key = keys.create(T)
    server = start_http(c, keys, "127.0.0.1", 0)
    port = server.port
    held: list[socket.socket] = []
    try:

        def get_stream() -> socket.socket:
            return _raw(
                port,
                f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n"
                f"Authorization: Bearer {key}\r\n\r\n".encode(),
            )

        def slow_tool() -> socket.socket:
            body = json.dumps(
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search", "arguments": {
                    "query": f"{HELD} holiday", "mode": "semantic"}}}
            ).encode()  # fmt: skip
            head = (
                f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                f"Accept: application/json, text/event-stream\r\nAuthorization: Bearer {key}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n"
            )
            return _raw(port, head.encode() + body)

        def other_client(method: str, path: str, body: bytes | None = None) -> tuple[int, bytes]:
            """Someone else (another address: the held sockets fill 127.0.0.1's 32 connections)."""
            import http.client

            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=CEILING_S, source_address=("127.0.0.2", 0))
            headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
            try:
                conn.request(method, path, body=body, headers=headers)
                answer = conn.getresponse()
                return answer.status, answer.read()
            finally:
                conn.close()

        def health() -> int:
            return other_client("GET", "/health")[0]

        def search() -> dict[str, Any]:
            query = json.dumps({"query": "paid holiday", "mode": "keyword"}).encode()
            status, body = other_client("POST", "/search", query)
            assert status == 200, body
            answer: dict[str, Any] = json.loads(body)
            return answer

        for wave in (8, 64):
            streams = [get_stream() for _ in range(wave)]
            held += streams
            statuses = [_status(s) for s in streams]
            # 405: a stateless server has no stream to offer; 429: past the 32 connections one address may hold
            assert set(statuses) <= {405, 429} and statuses.count(405) >= 8, statuses
            assert health() == 200 and search()["results"]  # while they hold their connections
            for s in streams:
                s.close()
            assert health() == 200 and search()["results"]  # and after they hang up

        tools = [slow_tool() for _ in range(8)]
        held += tools
        assert health() == 200 and search()["results"]  # while every one of them is still in its tool
        assert [_status(s) for s in tools] == [504] * 8  # each let go at the request's deadline
        assert health() == 200 and search()["results"]
    finally:
        embedder.release.set()
        for s in held:
            s.close()
        server.shutdown()
        c.close()


def test_a_filter_past_its_bound_is_a_tool_error_that_says_so(stocked: tuple[Container, dict[str, str]]) -> None:
    """Issue 47.8: ~1,000 tags answered "internal error" (SQLite's variable limit); now the bound, by name."""
    c, _ = stocked
    said = refused(call(c, T, "search", {"query": "holiday", "tags": [f"t{i}" for i in range(1000)]}))
    assert "tags" in said and "32" in said and "internal" not in said


def test_tools_say_what_they_do_to_the_files_and_the_server_its_version(
    stocked: tuple[Container, dict[str, str]],
) -> None:
    """Issue 52: no tool carried annotations and the server reported an empty version."""
    from mcp import Client

    from semfs import __version__

    c, _ = stocked

    async def go() -> Any:
        async with Client(build_server(c, T)) as client:
            return (await client.list_tools()).tools

    tools = asyncio.run(go())
    by_name = {t.name: t for t in tools}
    assert all(t.annotations is not None for t in tools)
    assert by_name["search"].annotations.read_only_hint is True
    assert by_name["save_artifact"].annotations.read_only_hint is False
    assert by_name["save_artifact"].annotations.destructive_hint is False
    result = call(c, T, "list_files", {})
    assert result.meta["io.modelcontextprotocol/serverInfo"]["version"] == __version__ != ""


def test_a_search_stays_within_its_budget_pages_on_and_says_where_each_file_came_from(
    stocked: tuple[Container, dict[str, str]],
) -> None:
    """Issue 52: a 10-result search was ~9.5k characters even when 9 were weak, with no budget, no cursor, no
    minimum relevance, and no provenance but the path."""
    c, _ = stocked
    for n in range(12):
        ingest_bytes(c, T, f"# Leave note {n}\n\nStaff leave and holiday days, note {n}.".encode(), f"leave-{n}.md")
    first = ok(call(c, T, "search", {"query": "holiday leave days", "limit": 5, "max_chars": 2000}))
    assert len(json.dumps(first["results"])) <= 2000 + 500 and first["results"]
    assert first["next_cursor"] is not None
    second = ok(call(c, T, "search", {"query": "holiday leave days", "limit": 5, "cursor": first["next_cursor"]}))
    assert not {r["file_id"] for r in first["results"]} & {r["file_id"] for r in second["results"]}
    shown = [r["relevance"] for r in first["results"] + second["results"]]
    assert shown == sorted(shown, reverse=True)  # most relevant first, across pages
    r = first["results"][0]
    assert {"came_from", "source_type", "origin", "version", "is_latest"} <= set(r)
    strong = ok(call(c, T, "search", {"query": "holiday leave days", "min_relevance": 0.99}))
    assert all(x["relevance"] >= 0.99 for x in strong["results"]) and strong["below_min_relevance"] >= 1


def test_a_filter_that_names_nothing_and_an_empty_artifact_are_refused_as_such(
    stocked: tuple[Container, dict[str, str]],
) -> None:
    """Issue 52: a thread, tag or contact that does not exist answered "no file matches"; an empty artifact
    was saved as "unnamed"; similar took a limit of 0 or 100,000."""
    c, ids = stocked
    assert "no file you can read is filed under 'Board minutes'" in refused(
        call(c, T, "search", {"query": "holiday", "thread": "Board minutes"})
    )
    assert "tags:" in refused(call(c, T, "search", {"query": "holiday", "tags": ["no-such-tag"]}))
    assert "contact:" in refused(call(c, T, "search", {"query": "holiday", "contact": "nobody@nowhere.example"}))
    empty = {"content": "  ", "filename": "x.txt", "agent": "a", "run_id": "r"}
    assert "content: empty" in refused(call(c, T, "save_artifact", empty))
    unnamed = {"content": "A report.", "filename": " ", "agent": "a", "run_id": "r"}
    assert "filename:" in refused(call(c, T, "save_artifact", unnamed))
    for limit in (0, 100_000):
        assert "limit: 1 to 50" in refused(call(c, T, "similar", {"file_id": ids["handbook"], "limit": limit}))


def test_the_passages_a_search_found_are_read_whole_in_one_call(stocked: tuple[Container, dict[str, str]]) -> None:
    """Issue 52: reading what a search found took a read_file call per file, a page at a time."""
    c, ids = stocked
    found = ok(call(c, T, "search", {"query": "holiday days stolen laptop", "limit": 5}))
    passage_ids = [p["passage_id"] for r in found["results"] for p in r["passages"]]
    assert len({pid.split(":")[0] for pid in passage_ids}) >= 2  # of several files
    read = ok(call(c, T, "read_passages", {"passage_ids": passage_ids}))
    assert [p["passage_id"] for p in read["passages"]] + read["left_out"] == passage_ids
    assert all(p["text"] and p["location"] and p["version"] >= 1 for p in read["passages"])
    tight = ok(call(c, T, "read_passages", {"passage_ids": passage_ids, "max_chars": 500}))
    assert len(tight["passages"]) >= 1 and sum(len(p["text"]) for p in tight["passages"]) <= 500
    theirs = f"{ids['theirs']}:0"  # another tenant's passage: as if there were none
    assert "no such" in refused(call(c, T, "read_passages", {"passage_ids": [theirs]}))
