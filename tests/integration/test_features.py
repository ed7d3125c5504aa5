"""The feature switches (``SEMFS_ENABLE_*``): each one off on its own, over the real HTTP host, the CLI,
SMTP and the event-source paths, failing soft as README's Configuration table says, with nothing already
stored lost. Each test switches one feature off over a data folder that a container with everything on
filled first, as an operator restarting with one switch changed would."""

from __future__ import annotations

import json
import os
import smtplib
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.bootstrap import Container, build_container
from semfs.cli import app
from semfs.config import Settings
from semfs.domain.errors import Disabled
from semfs.domain.features import FEATURES, OFF
from semfs.domain.models import SearchRequest
from semfs.pipeline.capabilities import capabilities
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.mail import ingest_mail
from semfs.pipeline.intake.sources import ingest_s3_object, ingest_ses_message
from semfs.pipeline.maintenance.reconcile import reconcile
from semfs.pipeline.query.ask import ask, context
from semfs.pipeline.query.search import search
from semfs.pipeline.query.similar import similar
from semfs.ports import RecordQuery
from semfs.server import ApiKeys, start_http, start_smtp
from tests.conftest import make_settings
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration

TERMS = b"# Payment terms\n\nInvoices from Acme are payable within thirty days of the invoice date."
HANDBOOK = b"# Holiday policy\n\nEvery employee has 28 days of paid holiday a year, booked with the manager."


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class NoQueries(HashEmbedder):
    """An embedder that fails the test if a query is embedded (files may be: they are still indexed)."""

    def embed_query(self, text: str) -> list[float]:
        raise AssertionError("a query was embedded with semantic search switched off")


@pytest.fixture
def filled(tmp_path: Path, shared_extractor: object) -> Path:
    """A data folder with two indexed files in tenant acme, made with every feature on."""
    c = build_container(make_settings(tmp_path), extractor=shared_extractor)  # type: ignore[arg-type]
    try:
        for name, data in (("terms.md", TERMS), ("handbook.md", HANDBOOK)):
            assert ingest_bytes(c, "acme", data, name).record.status.value == "indexed"
    finally:
        c.close()
    return tmp_path


def _opened(tmp_path: Path, shared_extractor: object, **switches: Any) -> Container:
    return build_container(make_settings(tmp_path, **switches), extractor=shared_extractor)  # type: ignore[arg-type]


def _names(c: Container) -> list[str]:
    return sorted(r.filename for r in c.repo.query(RecordQuery(tenant_id="acme", limit=100)))


@pytest.fixture
def http(filled: Path, shared_extractor: object, request: pytest.FixtureRequest) -> Iterator[tuple[Container, Any]]:
    """``semfs serve``'s HTTP host over the filled folder, with the switches the test passes (indirect)."""
    switches: dict[str, Any] = getattr(request, "param", {})
    port = _free_port()
    c = _opened(filled, shared_extractor, http_port=port, **switches)
    key = ApiKeys(c.settings.api_keys_file).create("acme")
    server = start_http(c, ApiKeys(c.settings.api_keys_file), "127.0.0.1", port)

    def call(method: str, path: str, body: bytes | None = None, ctype: str = "application/json") -> tuple[int, Any]:
        req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method)
        req.add_header("Authorization", f"Bearer {key}")
        if body is not None:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, timeout=CEILING_S) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    try:
        yield c, call
    finally:
        server.shutdown()
        c.close()


def _multipart(name: str, data: bytes) -> tuple[bytes, str]:
    boundary = "semfsfeatures"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: text/markdown\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def test_every_switch_reads_its_variable_and_ocr_keeps_its_old_name(monkeypatch: pytest.MonkeyPatch) -> None:
    assert all(getattr(Settings().features, f) for f in FEATURES if f != "ocr") and Settings().ocr.enabled
    for feature in FEATURES:
        monkeypatch.setenv(f"SEMFS_ENABLE_{feature.upper()}", "false")
        s = Settings()
        off = [f for f in FEATURES if not (s.ocr.enabled if f == "ocr" else getattr(s.features, f))]
        assert off == list(FEATURES[: FEATURES.index(feature) + 1])  # this one off, and those before it
    monkeypatch.delenv("SEMFS_ENABLE_OCR")
    monkeypatch.setenv("SEMFS_OCR_ENABLED", "false")
    assert not Settings().ocr.enabled


def test_capabilities_say_what_is_on_and_why_the_rest_is_not(http: tuple[Container, Any]) -> None:
    _, call = http
    status, caps = call("GET", "/capabilities")
    assert status == 200
    assert all(caps[f]["on"] for f in ("ingest", "semantic", "ask", "mcp"))
    assert not caps["mail"]["on"] and "SEMFS_MAILBOXES" in caps["mail"]["why_off"]  # nobody's mail is taken
    assert (
        caps["llm"] == {"on": False, "why_off": caps["llm"]["why_off"]}
        and "SEMFS_LLM_BASE_URL" in caps["llm"]["why_off"]
    )
    assert caps["answers"] == "extractive"


@pytest.mark.parametrize(
    "http",
    [{"enable_ingest": False, "enable_ask": False, "enable_semantic": False, "enable_mail": False}],
    indirect=True,
)
def test_capabilities_name_each_switch_that_is_off(http: tuple[Container, Any]) -> None:
    _, call = http
    caps = call("GET", "/capabilities")[1]
    for feature in ("ingest", "ask", "semantic", "mail"):
        assert caps[feature] == {"on": False, "why_off": OFF[feature]}
    assert caps["mcp"]["on"]


@pytest.mark.parametrize("http", [{"enable_ingest": False}], indirect=True)
def test_ingest_off_refuses_an_upload_with_nothing_stored_and_serves_what_is(http: tuple[Container, Any]) -> None:
    c, call = http
    before, stored = _names(c), len(list(c.blobs.list("")))
    status, body = call("POST", "/files", *_multipart("new.md", b"# New\n\nA brand new document about invoices."))
    assert status == 503 and body["error"]["code"] == "disabled"
    assert "SEMFS_ENABLE_INGEST" in body["error"]["message"] and "nothing was stored" in body["error"]["message"]
    assert _names(c) == before == ["handbook.md", "terms.md"]
    assert len(list(c.blobs.list(""))) == stored
    status, found = call("POST", "/search", json.dumps({"query": "invoice payable"}).encode())
    assert status == 200 and found["results"][0]["filename"] == "terms.md"
    assert call("GET", "/files")[1]["files"]


def test_ingest_off_in_the_cli_and_the_event_sources_stores_nothing(
    filled: Path, shared_extractor: object, cli: CliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    c = _opened(filled, shared_extractor, enable_ingest=False, mailboxes="files@acme.example=acme")
    try:
        with pytest.raises(Disabled):
            ingest_bytes(c, "acme", b"# Another\n\nanother file", "another.md")
        # AWS: an object uploaded while ingest is off stays in the bucket, and the sweep leaves it
        c.blobs.put("uploads/acme/late.md", b"# Late\n\nA file uploaded while ingest was switched off.")
        assert ingest_s3_object(c, "uploads/acme/late.md", 60) is None
        report = reconcile(c)
        assert report["objects_without_record"] == {"found": 1, "fixed": 0}
        mail = _message().as_bytes()
        with pytest.raises(Disabled):
            ingest_mail(c, "acme", mail)
        assert _names(c) == ["handbook.md", "terms.md"]
    finally:
        c.close()
    # switched on again, the sweep ingests what waited in the bucket
    c = _opened(filled, shared_extractor)
    try:
        assert reconcile(c)["objects_without_record"] == {"found": 1, "fixed": 1}
        assert "late.md" in _names(c)
    finally:
        c.close()
    monkeypatch.setenv("SEMFS_DATA_DIR", str(filled / "data"))
    monkeypatch.setenv("SEMFS_ENABLE_INGEST", "false")
    (filled / "more.md").write_text("# More\n\nyet another file")
    result = cli.invoke(app, ["ingest", str(filled / "more.md"), "--tenant", "acme"])
    assert result.exit_code == 1 and "switched off" in result.output and "nothing was stored" in result.output


def _message() -> EmailMessage:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "Ann <ann@globex.example>", "files@acme.example", "Contract"
    msg["Message-ID"] = "<contract-1@globex.example>"
    msg.set_content("Please find the signed contract for the warehouse lease attached, with the schedule.")
    msg.add_attachment(b"# Lease\n\nThe warehouse lease runs for five years.", maintype="text", subtype="markdown",
                       filename="lease.md")  # fmt: skip
    return msg


def test_ingest_off_answers_smtp_451_so_the_sender_keeps_the_message(filled: Path, shared_extractor: object) -> None:
    port = _free_port()
    c = _opened(filled, shared_extractor, enable_ingest=False, mailboxes="files@acme.example=acme")
    controller = start_smtp(c, "127.0.0.1", port)
    try:
        with (
            smtplib.SMTP("127.0.0.1", port, timeout=CEILING_S) as smtp,
            pytest.raises(smtplib.SMTPDataError) as refused,
        ):
            smtp.send_message(_message())
        assert refused.value.smtp_code == 451
        assert _names(c) == ["handbook.md", "terms.md"]
    finally:
        controller.stop()
        c.close()


def test_mail_off_skips_ses_messages_and_keeps_them_where_ses_put_them(filled: Path, shared_extractor: object) -> None:
    c = _opened(filled, shared_extractor, enable_mail=False, mailboxes="files@acme.example=acme")
    try:
        c.blobs.put("inbound/raw/m-1", _message().as_bytes())
        assert ingest_ses_message(c, "m-1", ["files@acme.example"], {}) == []
        with pytest.raises(Disabled, match="SEMFS_ENABLE_MAIL"):
            ingest_mail(c, "acme", _message().as_bytes())
        assert c.blobs.get("inbound/raw/m-1") and _names(c) == ["handbook.md", "terms.md"]
        assert ingest_bytes(
            c, "acme", b"# Notes\n\nMeeting notes about the lease.", "notes.md"
        ).created  # files still come in
    finally:
        c.close()


def test_semantic_off_searches_by_keyword_alone_and_never_embeds_a_query(
    filled: Path, shared_extractor: object
) -> None:
    settings = make_settings(filled, enable_semantic=False)
    c = build_container(settings, embedder=NoQueries(dim=384, model_id="hash"), extractor=shared_extractor)  # type: ignore[arg-type]
    try:
        found = search(c, "acme", SearchRequest(query="invoice payable thirty days"))
        assert found.degraded and found.results[0].filename == "terms.md"
        assert context(c, "acme", "Invoice", "When is the Acme invoice payable?")[0].filename == "terms.md"
        said = ask(c, "acme", "How many days of paid holiday does an employee have?")
        assert said.status == "answered" and "28 days" in (said.answer or "")
        terms = next(r for r in c.repo.query(RecordQuery(tenant_id="acme", limit=10)) if r.filename == "terms.md")
        with pytest.raises(Disabled, match="SEMFS_ENABLE_SEMANTIC"):
            similar(c, "acme", terms.file_id)
        # a file that arrives meanwhile is still embedded: switching semantic on needs no re-embed
        new = ingest_bytes(c, "acme", b"# Lease\n\nThe warehouse lease runs five years.", "lease.md").record
        assert new.status.value == "indexed" and new.embedding_model == "hash"
    finally:
        c.close()


@pytest.mark.parametrize("http", [{"enable_ask": False}], indirect=True)
def test_ask_off_answers_no_answer_with_the_reason_and_search_still_works(http: tuple[Container, Any]) -> None:
    _, call = http
    status, said = call("POST", "/ask", json.dumps({"question": "How many days of paid holiday?"}).encode())
    assert status == 200 and said["status"] == "no_answer" and said["reason"] == OFF["ask"]
    assert call("POST", "/search", json.dumps({"query": "holiday"}).encode())[1]["results"]


def test_llm_off_is_extractive_even_with_an_endpoint_configured(tmp_path: Path) -> None:
    llm = {"llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "any", "llm_api_key": "sk-test"}
    on = build_container(make_settings(tmp_path / "on", **llm))
    off = build_container(make_settings(tmp_path / "off", enable_llm=False, **llm))
    try:
        assert on.answerer.method == "llm" and on.enricher is not on.fallback_enricher
        assert off.answerer.method == "extractive" and off.enricher is off.fallback_enricher
        assert capabilities(off).llm.why_off == OFF["llm"] and capabilities(on).llm.on
    finally:
        on.close()
        off.close()


@pytest.mark.parametrize("http", [{"enable_mcp": False}], indirect=True)
def test_mcp_off_refuses_the_http_transport_with_the_reason(http: tuple[Container, Any]) -> None:
    _, call = http
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    status, body = call("POST", "/mcp", hello)
    assert status == 503 and body["error"] == {"code": "disabled", "message": OFF["mcp"], "details": []}
    assert call("GET", "/capabilities")[1]["mcp"] == {"on": False, "why_off": OFF["mcp"]}


def test_mcp_off_refuses_to_start(tmp_path: Path) -> None:
    semfs = str(Path(sys.executable).with_name("semfs"))
    env = {**os.environ, "SEMFS_DATA_DIR": str(tmp_path / "data"), "SEMFS_EMBEDDER": "hash", "SEMFS_ENABLE_MCP": "0"}
    done = subprocess.run([semfs, "mcp"], env=env, capture_output=True, text=True, timeout=CEILING_S, check=False)
    assert done.returncode == 1 and "SEMFS_ENABLE_MCP" in done.stderr and done.stdout == ""
