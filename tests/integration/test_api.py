"""The API on the local host (HTTP → API Gateway event → router) and through the Lambda handler."""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from semfs import demo
from semfs.bootstrap import Container, build_container
from semfs.pipeline.documents import load_document
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance
from semfs.ports import RecordQuery
from semfs.server import ApiKeys, start_http, to_event
from tests.conftest import make_settings
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration


@dataclass
class Api:
    base: str
    keys: dict[str, str]
    files: dict[str, str]
    container: Container

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        key: str | None = "acme",
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> tuple[int, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        if key is not None:
            request.add_header("Authorization", f"Bearer {self.keys.get(key, key)}")
        try:
            with urllib.request.urlopen(request, timeout=CEILING_S) as response:
                payload = response.read()
                status = response.status
        except urllib.error.HTTPError as e:
            payload, status = e.read(), e.code
        try:
            return status, json.loads(payload)
        except ValueError:
            return status, payload


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def api(tmp_path: Path, shared_extractor: object) -> Iterator[Api]:
    port = _free_port()
    settings = make_settings(tmp_path, http_port=port)
    c = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    keys = ApiKeys(settings.api_keys_file)
    issued = {"acme": keys.create("acme"), "globex": keys.create("globex")}
    files = {
        "terms": ingest_bytes(
            c,
            "acme",
            demo.TEXT_FILES["handbook/employee-handbook.md"].encode(),
            "handbook.md",
            Provenance(thread_subject="HR", tags=["hr"]),
        ).record.file_id,
        "contract": ingest_bytes(c, "acme", demo._contract(2), "supply-agreement.docx").record.file_id,
        "globex": ingest_bytes(
            c, "globex", b"# Globex secrets\n\nThe launch date is in March.", "secret.md"
        ).record.file_id,
    }
    server = start_http(c, keys, "127.0.0.1", port)
    yield Api(f"http://127.0.0.1:{port}", issued, files, c)
    server.shutdown()


def test_health_and_openapi_are_public(api: Api) -> None:
    assert api.call("GET", "/health", key=None) == (200, {"status": "ok"})
    status, schema = api.call("GET", "/openapi.json", key=None)
    assert status == 200 and {"/search", "/ask", "/context", "/files/{file_id}"} <= set(schema["paths"])
    status, page = api.call("GET", "/docs", key=None)
    assert status == 200 and b"swagger" in page.lower()


def test_search_and_files(api: Api) -> None:
    status, found = api.call(
        "POST", "/search", {"query": "how many days of paid holiday do staff get a year", "limit": 3}
    )
    assert status == 200 and found["results"][0]["file_id"] == api.files["terms"]
    status, page = api.call("GET", "/files?limit=1")
    assert status == 200 and len(page["files"]) == 1 and page["next_cursor"]
    status, rest = api.call("GET", f"/files?limit=10&cursor={page['next_cursor']}")
    assert {f["file_id"] for f in page["files"] + rest["files"]} == {api.files["terms"], api.files["contract"]}
    status, record = api.call("GET", f"/files/{api.files['contract']}")
    assert status == 200 and record["filename"] == "supply-agreement.docx" and "blob_key" not in record
    status, text = api.call("GET", f"/files/{api.files['contract']}/text")
    assert status == 200 and any("45 days" in b["text"] for b in text["blocks"])
    status, versions = api.call("GET", f"/files/{api.files['contract']}/versions")
    assert status == 200 and [v["version"] for v in versions["versions"]] == [1]
    status, tags = api.call("GET", "/tags")
    assert status == 200 and {"tag": "hr", "manual": 1, "auto": 1} in tags["tags"]  # manual, and the thread's tag


def test_tags_download_upload_and_delete(api: Api) -> None:
    fid = api.files["contract"]
    status, patched = api.call("PATCH", f"/files/{fid}", {"add_tags": ["Needs Review"], "remove_tags": []})
    assert status == 200 and patched["tags"] == ["needs-review"]
    assert patched["tag_labels"] == {"needs-review": "Needs Review"}
    for bad in ["x" * 10_000, "https://evil.example/reset", "<img src=x onerror=alert(1)>", "!!!"]:
        status, refused = api.call("PATCH", f"/files/{fid}", {"add_tags": [bad]})
        assert status == 400 and refused["error"]["code"] == "invalid_request", bad
    status, refused = api.call("POST", "/tags/merge", {"merge": "needs-review", "into": "!!!"})
    assert status == 400 and refused["error"]["code"] == "invalid_request"
    status, patched = api.call("PATCH", f"/files/{fid}", {"add_tags": ["Legal"], "remove_tags": ["Needs Review"]})
    assert patched["tags"] == ["legal"] and patched["tag_labels"] == {"legal": "Legal"}
    status, link = api.call("GET", f"/files/{fid}/download")
    assert status == 200
    with urllib.request.urlopen(link["url"], timeout=CEILING_S) as response:
        assert response.read() == demo._contract(2)
    forged = link["url"][:-4] + "0000"
    with pytest.raises(urllib.error.HTTPError):
        urllib.request.urlopen(forged, timeout=CEILING_S)
    body = _multipart_upload(
        {"previous_version_id": fid}, "supply-agreement.docx", demo._contract(3), "application/octet-stream"
    )
    status, created = api.call("POST", "/files", raw=body, content_type=f"multipart/form-data; boundary={BOUNDARY}")
    assert status == 201 and created["version"] == 2 and created["outcome"] == "OK"
    status, removed = api.call("DELETE", f"/files/{created['file_id']}")
    assert status == 200 and removed["deleted"] == [created["file_id"]]
    assert api.call("GET", f"/files/{created['file_id']}")[0] == 404


def test_ask_answers_with_citations_in_scope_and_refuses_otherwise(api: Api) -> None:
    status, answer = api.call("POST", "/ask", {"question": "How many days of paid holiday does everyone get?"})
    assert status == 200 and answer["status"] == "answered" and answer["method"] == "extractive"
    assert "28 days" in answer["answer"]
    for cite in answer["citations"]:
        assert cite["file_id"] == api.files["terms"] and cite["quote"] in answer["answer"]
    # scoped to another file, the same question has no support
    status, scoped = api.call(
        "POST",
        "/ask",
        {"question": "How many days of paid holiday does everyone get?", "file_id": api.files["contract"]},
    )
    assert status == 200 and scoped["status"] == "no_answer"
    status, unsupported = api.call("POST", "/ask", {"question": "What is the launch date of the product in March?"})
    assert unsupported["status"] == "no_answer" or all(
        c["file_id"] != api.files["globex"] for c in unsupported["citations"]
    )


def test_context_briefing(api: Api) -> None:
    status, brief = api.call(
        "POST", "/context", {"subject": "Leave request", "body": "Can I book two weeks of holiday?"}
    )
    assert status == 200 and brief["items"][0]["file_id"] == api.files["terms"]
    assert {"filename", "title", "summary", "why"} <= set(brief["items"][0])
    assert api.call("POST", "/context", {"subject": "hi", "body": ""})[1] == {"items": []}


def test_validation_errors_are_422_with_a_readable_message(api: Api) -> None:
    status, error = api.call("POST", "/search", {"query": "", "mode": "fuzzy"})
    assert status == 422 and "mode" in json.dumps(error)


def test_authorization_matrix(api: Api) -> None:
    acme_file = api.files["terms"]
    routes = [
        ("GET", "/files", None),
        ("GET", f"/files/{acme_file}", None),
        ("GET", f"/files/{acme_file}/versions", None),
        ("GET", f"/files/{acme_file}/text", None),
        ("GET", f"/files/{acme_file}/download", None),
        ("PATCH", f"/files/{acme_file}", {"add_tags": ["x"]}),
        ("POST", f"/files/{acme_file}/retry", None),
        ("POST", f"/files/{acme_file}/detach", None),
        ("DELETE", f"/files/{acme_file}", None),
        ("POST", "/search", {"query": "holiday"}),
        ("POST", "/ask", {"question": "How many days of holiday?"}),
        ("POST", "/context", {"subject": "holiday days"}),
        ("GET", "/tags", None),
    ]
    file_routes = {(m, p) for m, p, _ in routes if "/files/" in p}
    unexpected = []
    for method, path, body in routes:
        for who in (None, "not-a-key", "globex"):
            status, payload = api.call(method, path, body, key=who)
            if who in (None, "not-a-key") and status != 401:
                unexpected.append((method, path, who, status))
            if who == "globex":
                if (method, path) in file_routes and status != 404:
                    unexpected.append((method, path, who, status))
                if status < 300 and acme_file in json.dumps(payload):
                    unexpected.append((method, path, who, "leaked"))
    assert unexpected == []
    # and the owner gets 2xx (the retry of an indexed file is a 400 by design; delete last)
    for method, path, body in routes:
        status, _ = api.call(method, path, body)
        assert status == (400 if path.endswith("/retry") else 200), (method, path, status)


def test_the_lambda_handler_serves_the_same_router(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    from semfs.lambda_support import get_container
    from tests.integration.aws_harness import FakeContext, load_handler

    monkeypatch.setattr("semfs.lambda_support.get_container", lambda: api.container)
    handler = load_handler("search_api")
    event = to_event(
        "POST", "/search", {"content-type": "application/json"}, json.dumps({"query": "holiday"}).encode(), tenant=None
    )
    event["requestContext"]["authorizer"] = {"jwt": {"claims": {"custom:tenant": "acme"}}}
    response = handler.lambda_handler(event, FakeContext())
    assert response["statusCode"] == 200
    assert json.loads(response["body"])["results"][0]["file_id"] == api.files["terms"]
    del event["requestContext"]["authorizer"]
    assert handler.lambda_handler(event, FakeContext())["statusCode"] == 401
    assert get_container is not None


@pytest.mark.parametrize(
    ("name", "shown"),
    # issue 27: retried every 2 s forever; issue 47.10: read as the legacy system that wrote it (Windows-1252)
    [(b"dropped.md", "dropped.md"), (b"dropped-\xe9t\xe9.md", "dropped-\u00e9t\u00e9.md")],
    ids=["utf-8", "not-utf-8"],
)
def test_the_drop_folder_ingests_what_appears(api: Api, tmp_path: Path, name: bytes, shown: str) -> None:
    import os
    import time

    from semfs.server import start_inbox

    inbox = tmp_path / "inbox"
    stop = start_inbox(api.container, inbox, "acme", interval_s=0.05, settle_s=0.2)
    dropped = Path(os.fsdecode(os.fsencode(inbox) + b"/" + name))
    done = inbox / "processed" / dropped.name
    try:
        dropped.write_bytes(b"# Dropped\n\nParking permits are renewed every January.")
        deadline = time.time() + 120  # a ceiling on a busy machine, not a timing
        while time.time() < deadline and not done.exists():
            time.sleep(0.05)
    finally:
        stop.set()
    assert done.exists() and not dropped.exists()
    status, found = api.call("POST", "/search", {"query": "parking permits", "mode": "keyword"})
    assert status == 200
    assert [r["filename"] for r in found["results"]] == [shown]


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("GET", "/files", None, 200),
        ("GET", "/files/{terms}", None, 200),
        ("GET", "/files/{terms}/versions", None, 200),
        ("GET", "/files/{terms}/text", None, 200),
        ("GET", "/files/{terms}/download", None, 200),
        ("PATCH", "/files/{terms}", {"add_tags": ["lambda"]}, 200),
        ("POST", "/search", {"query": "holiday"}, 200),
        ("POST", "/ask", {"question": "How many days of paid holiday?"}, 200),
        ("POST", "/context", {"subject": "holiday", "body": "days off"}, 200),
        ("GET", "/tags", None, 200),
        ("GET", "/status", None, 200),
        ("GET", "/files/{globex}", None, 404),
        ("DELETE", "/files/{terms}", None, 200),
    ],
)
def test_every_route_through_the_lambda_handler(
    api: Api, monkeypatch: pytest.MonkeyPatch, method: str, path: str, body: Any, expected: int
) -> None:
    from tests.integration.aws_harness import ROOT, FakeContext, load_handler

    monkeypatch.setattr("semfs.lambda_support.get_container", lambda: api.container)
    handler = load_handler("search_api")
    event = json.loads((ROOT / "events" / "apigw_search.json").read_text())  # the real-shaped payload
    concrete = path.format(**api.files)
    event.update(rawPath=concrete, routeKey=f"{method} {path}", body=json.dumps(body) if body else None)
    event["requestContext"]["http"].update(method=method, path=concrete)
    assert handler.lambda_handler(event, FakeContext())["statusCode"] == expected


BOUNDARY = "provboundary"


def _multipart_upload(
    fields: dict[str, str] | list[tuple[str, str]],
    name: str = "note.md",
    content: str | bytes = "# Note\n\nA short note.",
    part_type: str | None = None,
) -> bytes:
    """A multipart/form-data body (boundary ``BOUNDARY``): these form fields (a name may repeat), then
    the file, with its own Content-Type when ``part_type`` is given."""
    pairs = fields.items() if isinstance(fields, dict) else fields
    body = b"".join(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode() for k, v in pairs
    )
    head = f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
    head += f"Content-Type: {part_type}\r\n\r\n" if part_type else "\r\n"
    data = content.encode() if isinstance(content, str) else content
    return body + head.encode() + data + f"\r\n--{BOUNDARY}--\r\n".encode()


def test_agents_upload_with_provenance(api: Api) -> None:
    fields = {
        "source_type": "agent_generated",
        "agent": "report-bot",
        "run_id": "run-7",
        "derived_from": api.files["terms"],
    }
    body = _multipart_upload(fields, "digest.md", "# Digest\n\nStaff get 28 days of paid holiday.")
    status, created = api.call("POST", "/files", raw=body, content_type=f"multipart/form-data; boundary={BOUNDARY}")
    assert status == 201 and created["source_type"] == "agent_generated" and created["uploaded_by"] == "report-bot"
    status, found = api.call(
        "POST", "/search", {"query": "digest holiday", "filters": {"source_type": "agent_generated"}}
    )
    assert found["results"][0]["origin"] == {
        "agent": "report-bot",
        "run_id": "run-7",
        "derived_from": [api.files["terms"]],
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tags": "ok,!!!"}, "tags: "),
        (
            {"source_type": "email_attachment"},
            "source_type must be upload or agent_generated",
        ),  # mail is semfs's to say
        ({"source_type": "scanner"}, "source_type must be upload or agent_generated"),
    ],
)
def test_an_upload_claiming_what_a_caller_may_not_is_refused_and_stores_nothing(
    api: Api, fields: dict[str, str], message: str
) -> None:
    """One provenance check (``Provenance.from_caller``) for the CLI, this route and the agent entry point.
    An unknown source type used to be stored quietly as an upload."""
    before = len(api.container.repo.query(RecordQuery(tenant_id="acme", limit=1000)))
    body = _multipart_upload(fields)
    status, payload = api.call("POST", "/files", raw=body, content_type=f"multipart/form-data; boundary={BOUNDARY}")
    assert (status, payload["error"]["code"]) == (400, "invalid_request"), payload
    assert payload["error"]["message"].startswith(message)
    assert len(api.container.repo.query(RecordQuery(tenant_id="acme", limit=1000))) == before


def test_one_openapi_document_titled_semfs_and_valid(api: Api) -> None:
    from openapi_spec_validator import validate

    from semfs.api.models import HIDDEN, FileOut
    from semfs.domain.models import FileRecord

    status, document = api.call("GET", "/openapi.json", key=None)
    assert status == 200
    validate(document)  # raises on any violation of the OpenAPI 3 schema
    assert api.call("GET", "/docs?format=json", key=None)[1] == document  # the spec behind /docs is this one
    assert document["info"]["title"] == "semfs" and document["info"]["version"]
    assert document["components"]["securitySchemes"]["bearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "A local API key, or a JWT in AWS.",
    }
    assert document["security"] == [{"bearer": []}]
    upload = document["paths"]["/files"]["post"]
    assert "file" in upload["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    for path, methods in document["paths"].items():
        for method, op in methods.items():
            assert op.get("summary"), (method, path)
            if path == "/mcp":  # the Model Context Protocol's JSON-RPC, described but not schema'd (test_mcp.py)
                continue
            ok = op["responses"].get("200") or op["responses"].get("201")
            schema = json.dumps(ok["content"]["application/json"]["schema"])
            assert 'additionalProperties": true' not in schema or path.startswith("/tags/suggestions"), path
    named = {"thread_subject", "contact_names", "came_from"}  # names its ids stand for; where it came from
    assert set(FileOut.model_fields) - named == set(FileRecord.model_fields) - HIDDEN  # the public view stays complete


@pytest.mark.parametrize(
    ("method", "path", "body", "key", "status", "code"),
    [
        ("GET", "/files", None, None, 401, "unauthorized"),
        ("GET", "/files", None, "not-a-key", 401, "unauthorized"),
        ("GET", "/files/f_nope", None, "acme", 404, "not_found"),
        ("GET", "/no/such/route", None, "acme", 404, "not_found"),
        ("POST", "/search", {"query": ""}, "acme", 422, "validation_error"),
        ("POST", "/search", {"query": "x", "mode": "fuzzy"}, "acme", 422, "validation_error"),
        ("PATCH", "/files/{terms}", {"add": ["x"]}, "acme", 422, "validation_error"),
        ("POST", "/search", {"query": "x", "filters": {"tag": "x"}}, "acme", 422, "validation_error"),
        ("GET", "/files?limit=0", None, "acme", 422, "validation_error"),  # the document declares 1..200
        ("POST", "/files/{terms}/retry", None, "acme", 400, "invalid_request"),
    ],
)
def test_every_error_has_one_body(
    api: Api, method: str, path: str, body: Any, key: str | None, status: int, code: str
) -> None:
    got, payload = api.call(method, path.format(**api.files), body, key=key)
    assert got == status, payload
    assert set(payload) == {"error"} and payload["error"]["code"] == code and payload["error"]["message"]


def test_a_request_lost_to_a_concurrent_change_is_a_409_not_a_500(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``Conflict`` reaching a route (a tag edit that kept losing to other writers) is the caller's to
    retry: 409 with the request's own outcome, not the ``FAILED_INTERNAL`` 500 it used to inherit."""
    from semfs.api.routes import files
    from semfs.domain.errors import Conflict

    def lost(*args: Any, **kwargs: Any) -> Any:
        raise Conflict("the file changed while its tags were edited")

    monkeypatch.setattr(files, "set_tags", lost)
    status, payload = api.call("PATCH", f"/files/{api.files['terms']}", {"add_tags": ["x"]})
    assert (status, payload["error"]["code"]) == (409, "conflict"), payload


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/files/f_000000000000000000000000", "no such file"),
        ("/files/{globex}", "no such file"),  # another tenant's: the same answer as none at all
        ("/files/f_000000000000000000000000/versions", "no such file"),
        ("/no-such-thing", "no such route"),
    ],
)
def test_a_missing_file_is_said_to_be_a_missing_file(api: Api, path: str, message: str) -> None:
    """Issue 31: a link to an unknown id answered "404: no such route", which the web page showed."""
    status, payload = api.call("GET", path.format(**api.files))
    assert (status, payload["error"]["message"]) == (404, message)


def test_files_are_listed_newest_first_latest_only_and_without_duplicates(api: Api) -> None:
    c = api.container
    dup = ingest_bytes(c, "acme", demo._contract(2), "copy-of-the-contract.docx").record
    _, page = api.call("GET", "/files")
    names = [f["filename"] for f in page["files"]]
    assert names == ["copy-of-the-contract.docx", "supply-agreement.docx", "handbook.md"]
    _, page = api.call("GET", "/files?include_duplicates=false")
    assert dup.file_id not in {f["file_id"] for f in page["files"]}
    _, page = api.call("GET", "/files?sort=name")
    assert page["files"][0]["filename"] == "copy-of-the-contract.docx"
    _, page = api.call("GET", "/files?sort=size&limit=1")
    assert page["files"][0]["filename"] in {"supply-agreement.docx", "copy-of-the-contract.docx"}


def test_documents_and_problems_are_listed_and_counted_apart(api: Api) -> None:
    """``listing=documents`` leaves out what was skipped or failed, ``listing=problems`` is that alone
    (with the reason), the facet totals agree with each, and a status never in a listing is refused."""
    c = api.container
    dup = ingest_bytes(c, "acme", demo._contract(2), "copy-of-the-contract.docx").record
    empty = ingest_bytes(c, "acme", b"", "empty.txt").record
    _, docs = api.call("GET", "/files?listing=documents")
    assert {f["file_id"] for f in docs["files"]} == {api.files["terms"], api.files["contract"]}
    # a copy of a file already here is no problem (issue 49: counted, it kept the page's badge from clearing);
    # asked for, it is listed with the problems, naming the file it copies
    _, problems = api.call("GET", "/files?listing=problems")
    assert {f["file_id"] for f in problems["files"]} == {empty.file_id}
    _, with_copies = api.call("GET", "/files?listing=problems&include_duplicates=true")
    assert {f["file_id"] for f in with_copies["files"]} == {dup.file_id, empty.file_id}
    copy = next(f for f in with_copies["files"] if f["file_id"] == dup.file_id)
    assert copy["duplicate_of"] == api.files["contract"] and copy["error"]
    assert api.call("GET", "/files/facets?listing=documents")[1]["total"] == 2
    assert api.call("GET", "/files/facets?listing=problems")[1]["total"] == 1
    assert api.call("GET", "/files/facets")[1]["total"] == 4  # all, as before
    # a status the listing never shows is no error (the request is as its document allows): no file has it there
    assert api.call("GET", "/files?listing=problems&status=indexed") == (200, {"files": [], "next_cursor": None})
    assert api.call("GET", "/files/facets?listing=problems&status=indexed")[1]["total"] == 0
    assert api.call("GET", "/files?listing=documents&status=indexed")[1]["files"] == docs["files"]


def test_facets_say_how_many_values_they_left_out_and_give_them_all_on_request(api: Api) -> None:
    c = api.container
    for n in range(15):
        ingest_bytes(c, "acme", f"# Memo {n}\n\nA memo about topic {n}.".encode(), f"memo-{n}.md",
                     Provenance(tags=[f"topic-{n:02d}"]))  # fmt: skip
    _, cut = api.call("GET", "/files/facets")
    assert len(cut["tag"]) == 12 and cut["more"]["tag"] >= 4  # 15 topics, hr and the auto tags
    _, whole = api.call("GET", "/files/facets?top=500")
    assert "tag" not in whole["more"] and len(whole["tag"]) == 12 + cut["more"]["tag"]
    assert {f"topic-{n:02d}" for n in range(15)} <= {v["value"] for v in whole["tag"]}
    assert api.call("GET", "/files/facets?top=0")[0] == 422


def test_repeated_form_fields_keep_every_value_and_filters_take_names(api: Api) -> None:
    fields = [("tags", "alpha"), ("tags", "beta"), ("thread_id", "Parking 2027")]
    body = _multipart_upload(fields, "garage.md", "# Garage\n\nPermits for the staff garage are renewed in January.")
    status, created = api.call("POST", "/files", raw=body, content_type=f"multipart/form-data; boundary={BOUNDARY}")
    assert status == 201 and created["tags"] == ["alpha", "beta"]
    status, found = api.call("POST", "/search", {"query": "garage permits", "filters": {"thread_id": "Parking 2027"}})
    assert [r["file_id"] for r in found["results"]] == [created["file_id"]]


def test_facets_count_what_a_listing_holds_with_names_a_person_reads(api: Api) -> None:
    _, counts = api.call("GET", "/files/facets")
    assert counts["total"] == 2 and counts["capped"] is False  # acme's two files; globex's is not counted
    assert {"value": "hr", "label": "hr", "count": 1} in counts["tag"]
    (thread,) = counts["thread"]
    assert (thread["label"], thread["count"]) == ("HR", 1)  # the thread's subject, not its id
    # a type's label is its name (the CLI and MCP print it as it comes): "Markdown", not text/markdown
    assert {(t["value"], t["label"]) for t in counts["type"]} >= {("text/markdown", "Markdown")}
    assert sum(s["count"] for s in counts["source"]) == 2
    # the same filters as GET /files, threads by name: only the handbook is left
    _, narrowed = api.call("GET", "/files/facets?thread_id=HR")
    assert narrowed["total"] == 1
    _, listed = api.call("GET", f"/files?thread_id={thread['value']}")
    assert [f["filename"] for f in listed["files"]] == ["handbook.md"]
    assert api.call("GET", "/files/facets", key="globex")[1]["total"] == 1
    (month,) = counts["month"]  # YYYY-MM, and the listing takes it as a date range
    year, mon = map(int, month["value"].split("-"))
    after = f"{year + mon // 12}-{mon % 12 + 1:02d}-01"
    _, inside = api.call("GET", f"/files?since={month['value']}-01&until={after}")
    assert len(inside["files"]) == 2
    _, before = api.call("GET", f"/files?until={month['value']}-01")
    assert before["files"] == []


def test_one_file_names_its_thread_and_contacts(api: Api) -> None:
    c = api.container
    rec = ingest_bytes(
        c,
        "acme",
        b"# Pallets\n\nTwelve pallets of tiles.",
        "pallets.md",
        Provenance(thread_subject="Invoice 2291 and pallet manifest", contacts=["hans.becker@northwind.example"]),
    ).record
    _, got = api.call("GET", f"/files/{rec.file_id}")
    assert got["thread_subject"] == "Invoice 2291 and pallet manifest"
    assert got["contact_names"] == {rec.contact_ids[0]: "hans.becker@northwind.example"}
    _, listed = api.call("GET", "/files")
    assert all(f["contact_names"] == {} for f in listed["files"])  # a listing carries ids only


MANY_TAGS = [f"tag-{i}" for i in range(1000)]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/search", {"query": "holiday", "filters": {"tags": MANY_TAGS}}),
        ("/search", {"query": "holiday", "filters": {"file_ids": [f"f_{i}" for i in range(20_000)]}}),
        ("/ask", {"question": "how many holiday days?", "filters": {"tags": MANY_TAGS}}),
        ("/ask", {"question": "how many holiday days?", "follows": ["x"] * 11}),
        ("/files/f_0", {"add_tags": MANY_TAGS}),
    ],
)
def test_a_list_past_its_bound_is_422_not_500(api: Api, path: str, body: dict[str, Any]) -> None:
    """Issue 47.8: a search filter of ~1,000 tags answered 500 (SQLite's limit on variables). Every list a request
    takes has a bound the OpenAPI document states, and past it the answer is 422 naming the field."""
    method = "PATCH" if path.startswith("/files/") else "POST"
    got, payload = api.call(method, path, body)
    assert got == 422, payload
    assert payload["error"]["code"] == "validation_error"


@pytest.mark.parametrize(
    ("method", "path", "raw", "content_type", "status"),
    [
        # a 5,001-digit number: json.loads raises ValueError (past Python's int digit limit), not JSONDecodeError
        ("POST", "/search", b'{"query": "x", "limit": 1' + b"0" * 5000 + b"}", "application/json", 422),
        # an offset SQLite cannot hold (OverflowError)
        ("GET", "/files?cursor=1000000000000000000000000000000", None, "application/json", 422),
        ("GET", "/files?cursor=-5", None, "application/json", 422),
        ("GET", "/files?cursor=9999999999", None, "application/json", 422),  # past the last offset
        # multipart without its boundary, to routes that take JSON and to the upload
        ("PATCH", "/files/0", b"--x\r\n", "multipart/form-data", 400),
        ("POST", "/files/0/link", b"--x\r\n", "multipart/form-data", 400),
        ("POST", "/files", b"--x\r\n", "multipart/form-data", 400),
    ],
)
def test_requests_that_answered_500_answer_a_4xx(
    api: Api, method: str, path: str, raw: bytes | None, content_type: str, status: int
) -> None:
    """Found by an API fuzzer driven by the OpenAPI document: each answered 500 internal."""
    got, payload = api.call(method, path, raw=raw, content_type=content_type)
    assert got == status, payload
    assert payload["error"]["code"] != "internal"


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("TRACE", "/search", "POST"),
        ("HEAD", "/search", "POST"),
        ("OPTIONS", "/files", "GET, POST"),
        ("DELETE", "/tags", "GET"),
        ("PUT", "/files/0", "DELETE, GET, PATCH"),
    ],
)
def test_a_method_a_path_does_not_take_is_405_with_allow(api: Api, method: str, path: str, allowed: str) -> None:
    """The fuzzer's finding: these answered 404 "no such route", as if the path did not exist."""
    conn = http.client.HTTPConnection("127.0.0.1", int(api.base.rsplit(":", 1)[1]), timeout=CEILING_S)
    conn.request(method, path, headers={"Authorization": f"Bearer {api.keys['acme']}"})
    response = conn.getresponse()
    assert response.status == 405
    assert response.getheader("Allow") == allowed
    if method != "HEAD":  # (a HEAD answer has no body)
        assert json.loads(response.read())["error"]["code"] == "method_not_allowed"


def test_ids_an_upload_names_must_be_the_callers_tenants(api: Api) -> None:
    """Before: an upload's contact_ids and derived_from took any id, so a file could claim another tenant's
    contact or be traced to another tenant's file. Now either is a 404 naming the field, nothing stored;
    the tenant's own ids go through."""
    from semfs.ports.mail import Person

    api.container.mail.upsert_contact("globex", Person("c_cfo@globex.example", "cfo@globex.example", "Globex CFO"))
    api.container.mail.upsert_contact("acme", Person("c_jane@acme.example", "jane@acme.example", "Jane"))
    before = len(api.container.repo.query(RecordQuery(tenant_id="acme", limit=1000)))
    for fields, message in [
        ({"contact_ids": "c_cfo@globex.example"}, "contact_ids: "),
        ({"contact_ids": "c_nobody@nowhere.example"}, "contact_ids: "),
        ({"derived_from": api.files["globex"]}, "derived_from: "),
        ({"source_type": "agent_generated", "agent": "bot", "derived_from": api.files["globex"]}, "derived_from: "),
    ]:
        body = _multipart_upload(fields)
        status, payload = api.call("POST", "/files", raw=body, content_type=f"multipart/form-data; boundary={BOUNDARY}")
        assert (status, payload["error"]["code"]) == (404, "not_found"), (fields, payload)
        assert payload["error"]["message"].startswith(message)
    assert len(api.container.repo.query(RecordQuery(tenant_id="acme", limit=1000))) == before
    body = _multipart_upload({"contact_ids": "c_jane@acme.example", "derived_from": api.files["terms"]})
    status, created = api.call("POST", "/files", raw=body, content_type=f"multipart/form-data; boundary={BOUNDARY}")
    assert status == 201 and created["contact_ids"] == ["c_jane@acme.example"]
    # picked by name, as the upload form takes them (issue 31: it wanted ids): Jane by her name, a new person
    # as a new contact of this tenant, and another tenant's contact's address as this tenant's own contact
    body = _multipart_upload({"contact_ids": "Jane, Priya Shah, cfo@globex.example"}, "by-name.md", b"# By name\n\nHi.")
    status, created = api.call("POST", "/files", raw=body, content_type=f"multipart/form-data; boundary={BOUNDARY}")
    assert status == 201, created
    assert created["contact_ids"][0] == "c_jane@acme.example" and len(created["contact_ids"]) == 3
    names = {p.contact_id: p.name for p in api.container.mail.contacts("acme")}
    assert set(created["contact_ids"]) <= set(names) and "Priya Shah" in names.values()
    assert {p.name for p in api.container.mail.contacts("globex")} == {"Globex CFO"}


def test_an_answer_quoting_a_planted_link_shows_it_removed(api: Api) -> None:
    """Before: /ask returned the answer as written, so a document's planted "reset at <link>" reached the
    person (or the agent) asking; the citation still shows what the document says."""
    planted = (
        "# IT notice\n\nTo reset your VPN password visit paypal-secure.de/reset and enter your current VPN "
        "password there.\n\nThe VPN password must be changed every ninety days."
    )
    ingest_bytes(api.container, "acme", planted.encode(), "it-notice.md")
    status, answer = api.call("POST", "/ask", {"question": "How do I reset my VPN password?"})
    assert status == 200 and answer["status"] == "answered", answer
    assert "[link removed]" in answer["answer"] and "paypal" not in answer["answer"]
    assert any("paypal-secure.de/reset" in cite["quote"] for cite in answer["citations"])


@pytest.mark.parametrize(
    ("method", "path", "body", "message"),
    [
        ("GET", "/files?until=0", None, "until: "),  # read as 1970-01-01 (a Unix time)
        ("GET", "/files?until=", None, "until: "),  # dropped before it reached the route
        ("GET", "/files?include_history=yes", None, "include_history: "),
        ("GET", "/files?tags=hr", None, "unknown query parameter 'tags' (did you mean 'tag'?)"),  # listed all
        ("POST", "/search", {"query": "holiday", "filters": {"include_history": 0}}, "filters.include_history: "),
        ("POST", "/search", {"query": "holiday", "limit": True}, "limit: "),
        ("POST", "/ask", {"question": "how many days of holiday", "limit": "3"}, "limit: "),
    ],
)
def test_requests_the_document_does_not_allow_are_422(
    api: Api, method: str, path: str, body: dict[str, Any] | None, message: str
) -> None:
    """Found by the fuzzer (tests/integration/test_api_fuzz.py): each was accepted, read as something else."""
    status, payload = api.call(method, path, body)
    assert (status, payload["error"]["code"]) == (422, "validation_error"), payload
    assert payload["error"]["message"].startswith(message), payload


def test_text_comes_a_page_at_a_time_each_under_lambdas_response_limit(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lambda answers at most 6 MB and escapes non-ASCII (up to 12 bytes a character): the whole text of a
    2,000,000-character file in one answer could not be sent. Pages of blocks stay under TEXT_PAGE_BYTES of
    JSON (made small here, the rule is the same) and together give every block once, in order; a block too
    large for a page alone is cut and says so."""
    from semfs.api.routes import files

    monkeypatch.setattr(files, "TEXT_PAGE_BYTES", 3_000)
    paragraphs = [f"Absatz {i}: Grüße aus München, Überweisung fällig. " * 4 for i in range(40)]
    body = ("# Überweisungen\n\n" + "\n\n".join(paragraphs) + "\n\n" + "ö" * 5_000).encode()
    file_id = ingest_bytes(api.container, "acme", body, "ueberweisungen.md").record.file_id
    whole = load_document(api.container, api.container.repo.get("acme", file_id)).blocks
    pages, offset = [], 0
    while offset is not None:
        status, page = api.call("GET", f"/files/{file_id}/text?offset={offset}")
        assert status == 200, page
        pages.append(page)
        offset = page["next_offset"]
    got = [b for p in pages for b in p["blocks"]]
    assert len(pages) > 5 and all(len(json.dumps(p["blocks"])) <= 3_000 + 2 for p in pages)
    assert [b["text"] for b in got[:-1]] == [b.text for b in whole[:-1]]  # every block once, in order
    assert got[-1]["truncated"] is True and whole[-1].text.startswith(got[-1]["text"])
    status, past = api.call("GET", f"/files/{file_id}/text?offset={len(whole)}")
    assert (status, past["blocks"], past["next_offset"]) == (200, [], None)
    assert api.call("GET", f"/files/{file_id}/text?offset=-1")[0] == 422


def test_files_say_where_they_came_from(api: Api) -> None:
    """Six files titled "Copyright" and no path anywhere: ls, show and search never showed where a file
    came from. The API (without the server's own keys) and the CLI say it in one line a person reads."""
    from semfs.domain.models import SearchRequest
    from semfs.pipeline.query.search import search

    status, record = api.call("GET", f"/files/{api.files['terms']}")
    assert status == 200 and "source_key" not in record
    assert record["came_from"] == "an upload"  # handed to ingest_bytes with no path: the plainest true answer
    upload = ingest_bytes(
        api.container,
        "acme",
        b"Copyright 2026 Acme.",
        "COPYING",
        Provenance(source_key="s3:uploads/acme/legal/v2/COPYING"),
    ).record
    assert upload.came_from == "legal/v2/COPYING"  # the key under the tenant's own uploads
    found = search(api.container, "acme", SearchRequest(query="copyright acme", mode="keyword")).results
    assert found[0].came_from == "legal/v2/COPYING"
    dropped = ingest_bytes(api.container, "acme", b"Drop.", "d.txt", Provenance(source_key="inbox:scans/d.txt")).record
    assert dropped.came_from == "drop folder: scans/d.txt"


def test_more_like_this_from_the_stored_vectors(api: Api) -> None:
    """GET /files/{id}/similar: the files nearest by meaning, latest versions, the file's own lineage left
    out, another tenant's never; an unknown id is a 404, a file not indexed a 400."""
    pallets = "Pallets leave the Rotterdam depot at six; late pallets wait for the next freight train."
    first = ingest_bytes(api.container, "acme", pallets.encode(), "depot-a.md").record
    near = ingest_bytes(api.container, "acme", (pallets + " Freight trains run daily.").encode(), "depot-b.md")
    v2 = ingest_bytes(
        api.container,
        "acme",
        (pallets + " Updated.").encode(),
        "depot-a.md",
        Provenance(previous_version_id=first.file_id),
    ).record
    status, body = api.call("GET", f"/files/{first.file_id}/similar?limit=5")
    assert status == 200, body
    ids = [f["file_id"] for f in body["files"]]
    assert ids[0] == near.record.file_id  # the nearest
    assert first.file_id not in ids and v2.file_id not in ids  # its own lineage is left out
    assert api.files["globex"] not in ids
    assert all(0 < f["score"] <= 1.0001 for f in body["files"]) and body["files"][0]["came_from"]
    assert api.call("GET", "/files/f_nope/similar")[0] == 404
    assert api.call("GET", f"/files/{api.files['globex']}/similar")[0] == 404  # another tenant's file
    assert api.call("GET", f"/files/{first.file_id}/similar?limit=0")[0] == 422


def test_the_trash_over_http_restores_and_empties_only_the_callers_files(api: Api) -> None:
    fid = api.files["terms"]
    status, removed = api.call("DELETE", f"/files/{fid}")
    assert status == 200 and removed["deleted"] == [fid] and removed["in_trash"] is True and removed["purge_on"]
    assert api.call("GET", f"/files/{fid}")[0] == 404  # hidden like any deleted file
    status, listed = api.call("GET", "/trash")
    assert status == 200 and listed["total"] == 1 and listed["items"][0]["file_id"] == fid
    # another tenant can neither see nor restore it: the same 404 as for no file at all
    assert api.call("GET", "/trash", key="globex")[1]["items"] == []
    assert api.call("POST", f"/files/{fid}/restore", key="globex")[0] == 404
    assert api.call("POST", f"/files/{api.files['contract']}/restore")[0] == 404  # live: not in the trash
    status, back = api.call("POST", f"/files/{fid}/restore")
    assert status == 200 and back["restored"][0]["status"] == "indexed"
    status, found = api.call("POST", "/search", {"query": "how many days of paid holiday do staff get"})
    assert found["results"][0]["file_id"] == fid
    # emptied: erased for good, and restore says so
    api.call("DELETE", f"/files/{fid}")
    api.call("DELETE", f"/files/{api.files['globex']}", key="globex")
    status, purged = api.call("DELETE", "/trash")
    assert status == 200 and purged["purged"] == [fid]
    assert api.call("POST", f"/files/{fid}/restore")[0] == 404
    assert api.call("GET", "/trash", key="globex")[1]["total"] == 1  # theirs stays theirs


def test_notes_are_kept_signed_searchable_and_in_the_files_history(api: Api) -> None:
    """Issue 31: a note on a file, stored with its record, signed by the key that wrote it, found by search
    through the file's card; the history says what happened to the file and who did it. Another tenant's
    key sees neither, and notes cannot be added to its file."""
    fid = api.files["contract"]
    status, noted = api.call(
        "POST", f"/files/{fid}/notes", {"text": "Renewal negotiated with Priya: ask about the zeppelin clause"}
    )
    assert status == 200, noted
    (note,) = noted["notes"]
    assert note["text"].endswith("zeppelin clause") and note["author"].startswith("key ")
    status, found = api.call("POST", "/search", {"query": "zeppelin clause", "mode": "keyword", "limit": 3})
    assert status == 200 and [r["file_id"] for r in found["results"]][:1] == [fid]
    status, _ = api.call("PATCH", f"/files/{fid}", {"add_tags": ["Legal"]})
    assert status == 200
    status, history = api.call("GET", f"/files/{fid}/history")
    assert status == 200
    actions = [(e["action"], e["detail"]) for e in history["entries"]]
    assert actions[-1] == ("received", "from an upload") and ("processed", "searchable") in actions
    assert ("noted", "Renewal negotiated with Priya: ask about the zeppelin clause") in actions
    assert actions[0] == ("tagged", "Legal")  # newest first
    assert {e["by"] for e in history["entries"] if e["action"] in ("noted", "tagged")} == {note["author"]}
    # the other tenant: no file, no note, no history
    assert api.call("POST", f"/files/{fid}/notes", {"text": "mine now"}, key="globex")[0] == 404
    assert api.call("GET", f"/files/{fid}/history", key="globex")[0] == 404
    status, theirs = api.call("POST", "/search", {"query": "zeppelin clause", "mode": "keyword"}, key="globex")
    assert status == 200 and theirs["results"] == []
    # bad notes are refused and nothing stored changes
    for bad in ["", "   ", "x" * 2001]:
        status, refused = api.call("POST", f"/files/{fid}/notes", {"text": bad})
        assert status in (400, 422) and "error" in refused, bad
    status, removed = api.call("DELETE", f"/files/{fid}/notes/{note['note_id']}")
    assert status == 200 and removed["notes"] == []
    assert api.call("DELETE", f"/files/{fid}/notes/{note['note_id']}")[0] == 404
    status, found = api.call("POST", "/search", {"query": "zeppelin clause", "mode": "keyword", "limit": 3})
    assert fid not in [r["file_id"] for r in found["results"]]
    status, history = api.call("GET", f"/files/{fid}/history")
    assert history["entries"][0]["action"] == "unnoted"


def test_a_follow_up_is_read_with_the_question_before_it_in_the_same_scope(api: Api) -> None:
    """Issue 31 (Ask, like Onyx's chat): "And within how many days?" alone is about any deadline, and the
    answer mixes the handbook's receipts with the supply agreement's deliveries and invoices; after a question
    about receipts it is read with it and answered from the handbook alone. The scope stays the caller's:
    scoped to the contract, the follow-up's answer comes from the contract only."""
    first = "Where do I submit travel and meal receipts?"
    status, alone = api.call("POST", "/ask", {"question": "And within how many days?"})
    assert status == 200 and alone["status"] == "answered", alone
    assert api.files["contract"] in {c["file_id"] for c in alone["citations"]}
    status, follow = api.call("POST", "/ask", {"question": "And within how many days?", "follows": [first]})
    assert status == 200 and follow["status"] == "answered", follow
    assert follow["answer"].startswith("Submit travel and meal receipts within 30 days.")
    assert {c["file_id"] for c in follow["citations"]} == {api.files["terms"]}
    scoped = {"question": "And within how many days?", "follows": [first], "file_id": api.files["contract"]}
    status, elsewhere = api.call("POST", "/ask", scoped)
    assert status == 200 and {c["file_id"] for c in elsewhere["citations"]} <= {api.files["contract"]}
    status, refused = api.call("POST", "/ask", {"question": "x", "follows": ["y" * 2001]})
    assert status == 422 and "error" in refused


def test_saved_views_are_the_tenants_checked_and_deleted(api: Api) -> None:
    """Issue 31: saved views (a named Documents listing) per tenant: kept and listed by name, signed, their
    parameters checked as the listing checks them; another tenant sees none; delete by name."""
    status, saved = api.call("PUT", "/views/HR%20files", {"params": {"tag": "hr", "sort": "name"}})
    assert status == 200 and saved["name"] == "HR files" and saved["params"] == {"tag": "hr", "sort": "name"}
    assert saved["by"].startswith("key ")
    status, listed = api.call("GET", "/views")
    assert status == 200 and [v["name"] for v in listed["views"]] == ["HR files"]
    assert api.call("GET", "/views", key="globex")[1]["views"] == []
    for bad in [{"params": {"tags": "hr"}}, {"params": {"sort": "random"}}, {"params": {"tag": "x"}, "extra": 1}]:
        status, refused = api.call("PUT", "/views/Bad", bad)
        assert status in (400, 422) and "error" in refused, bad
    assert api.call("DELETE", "/views/HR%20files", key="globex")[0] == 404
    status, left = api.call("DELETE", "/views/HR%20files")
    assert status == 200 and left["views"] == []
    assert api.call("DELETE", "/views/HR%20files")[0] == 404
