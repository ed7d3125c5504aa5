"""The deployed definition executes: S3 event → ingest_upload → Step Functions (moto, real ASL) →
the real stage handlers → an indexed record in DynamoDB and chunks in OpenSearch (osmem)."""

from __future__ import annotations

import io
import json
import logging
import time
from pathlib import Path
from typing import Any

import pytest

from semfs.domain.errors import EmbeddingUnavailable
from semfs.domain.outcomes import Outcome
from tests.integration.aws_harness import ROOT, FakeContext, Stack
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration
KEY = "uploads/acme/Payment terms (Q3).md"
TERMS = b"# Payment terms\n\nInvoices are payable within thirty days of receipt.\n\nLate payments accrue interest."


def upload_event(key: str, size: int) -> dict[str, Any]:
    from urllib.parse import quote_plus

    event = json.loads((ROOT / "events" / "sqs_s3_upload.json").read_text())
    body = json.loads(event["Records"][0]["body"])
    body["Records"][0]["s3"]["object"].update(key=quote_plus(key, safe="/"), size=size)
    event["Records"][0]["body"] = json.dumps(body)
    return event


def upload(stack: Stack, key: str, data: bytes) -> dict[str, Any]:
    """PUT into moto S3 → its notification in moto SQS → the ingest_upload handler → Step Functions."""
    return stack.wait(start_upload(stack, key, data))


def start_upload(stack: Stack, key: str, data: bytes) -> str:
    """What ``upload`` does, up to the execution's start: its ARN."""
    stack.s3.put_object(Bucket="semfs-test", Key=key, Body=data)
    event = stack.sqs_event()
    assert len(event["Records"]) == 1
    notified = json.loads(event["Records"][0]["body"])["Records"][0]["s3"]["object"]["key"]
    assert " " not in notified or key == notified  # S3 URL-encodes keys in notifications
    out = stack.handlers["ingest_upload"].lambda_handler(event, FakeContext())
    assert out == {"batchItemFailures": []}
    (execution,) = stack.executions()
    return str(execution["executionArn"])


def record_of(stack: Stack) -> Any:
    from semfs.lambda_support import get_container
    from semfs.ports import RecordQuery

    (record,) = get_container().repo.query(RecordQuery(tenant_id="acme", include_deleted=True))
    return record


def api_event(method: str, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    """An HTTP API (payload 2.0) request with a verified tenant claim, as API Gateway hands it over."""
    event: dict[str, Any] = json.loads((ROOT / "events" / "apigw_search.json").read_text())
    event.update(rawPath=path, routeKey=f"{method} {path}", body=None)
    if query:
        event.update(queryStringParameters=query, rawQueryString="&".join(f"{k}={v}" for k, v in query.items()))
    event["requestContext"]["http"].update(method=method, path=path)
    return event


def search(stack: Stack, query: str, tenant: str = "acme") -> dict[str, Any]:
    event = json.loads((ROOT / "events" / "apigw_search.json").read_text())
    event["body"] = json.dumps({"query": query, "mode": "keyword"})
    event["requestContext"]["authorizer"]["jwt"]["claims"]["custom:tenant"] = tenant
    response = stack.handlers["search_api"].lambda_handler(event, FakeContext())
    assert response["statusCode"] == 200, response
    return json.loads(response["body"])  # type: ignore[no-any-return]


def test_happy_path_from_s3_event_to_indexed_record(aws_stack: Stack) -> None:
    desc = upload(aws_stack, KEY, TERMS)
    assert desc["status"] == "SUCCEEDED"
    assert aws_stack.invocations == ["extract", "enrich", "embed", "index", "finalize"]
    record = record_of(aws_stack)
    assert (record.status.value, record.outcome) == ("indexed", Outcome.OK)
    assert record.filename == "Payment terms (Q3).md" and record.title == "Payment terms"
    output = json.loads(desc["output"])
    # the state carries ids, keys and flags only (Step Functions caps it at 256 KiB)
    assert set(output) <= {
        "tenant_id",
        "file_id",
        "needs_ocr",
        "ocr_pages",
        "ocr_done",
        "ocr_job_id",
        "ocr_polls",
        "ocr_wait_seconds",
        "ocr_notice",
        "ocr_job_pages",
        "partial",
        "deadline",
        "enrich_fallback",
        "enrich_extractive",
        "attempt",
        "partial_reason",
        "error",
    }
    assert len(desc["output"]) < 1024
    hits = search(aws_stack, "payable thirty days")["results"]
    assert [h["file_id"] for h in hits] == [record.file_id]
    assert search(aws_stack, "payable thirty days", tenant="globex")["results"] == []


def test_duplicate_delivery_starts_nothing_new(aws_stack: Stack) -> None:
    upload(aws_stack, KEY, TERMS)
    again = aws_stack.handlers["ingest_upload"].lambda_handler(upload_event(KEY, len(TERMS)), FakeContext())
    assert again == {"batchItemFailures": []}
    assert len(aws_stack.executions()) == 1


def test_a_retryable_error_is_retried_by_the_state_machine(aws_stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:

    embedder = aws_stack.container("embed").embedder
    real = embedder.embed_documents
    failures = [EmbeddingUnavailable("throttled")]

    def flaky(texts: list[str]) -> list[list[float]]:
        if failures:
            raise failures.pop()
        return real(texts)

    monkeypatch.setattr(embedder, "embed_documents", flaky)
    desc = upload(aws_stack, KEY, TERMS)
    assert desc["status"] == "SUCCEEDED"
    assert aws_stack.invocations == ["extract", "enrich", "embed", "embed", "index", "finalize"]
    assert record_of(aws_stack).outcome is Outcome.OK
    history = aws_stack.sfn.get_execution_history(executionArn=desc["executionArn"])["events"]
    failed = [e for e in history if e["type"] == "LambdaFunctionFailed"]
    assert len(failed) == 1 and failed[0]["lambdaFunctionFailedEventDetails"]["error"] == "RetryableError"


def test_a_permanent_error_ends_in_mark_failed_with_its_outcome(aws_stack: Stack) -> None:
    desc = upload(aws_stack, "uploads/acme/fake.pdf", b"this is not a pdf")
    assert desc["status"] == "SUCCEEDED"  # MarkFailed ends the execution normally
    assert aws_stack.invocations == ["extract", "mark_failed"]
    record = record_of(aws_stack)
    assert (record.status.value, record.outcome) == ("skipped", Outcome.REJECTED_TYPE_MISMATCH)
    assert json.loads(desc["output"])["error"]["Error"] == "PermanentError"


def test_ses_message_attachments_are_ingested(aws_stack: Stack) -> None:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "Jane <jane.okafor@acme-corp.example>", "files@northwind.example", "Q3"
    msg["Date"] = "Mon, 30 Nov 2026 09:00:00 +0000"
    msg["Message-ID"] = "<0123456789@acme-corp.example>"
    msg.set_content("See attached.")
    msg.add_attachment(TERMS, maintype="text", subtype="markdown", filename="terms.md")
    event = json.loads((ROOT / "events" / "ses_inbound.json").read_text())
    message_id = event["Records"][0]["ses"]["mail"]["messageId"]
    aws_stack.s3.put_object(Bucket="semfs-test", Key=f"inbound/raw/{message_id}", Body=msg.as_bytes())
    out = aws_stack.handlers["ingest_email"].lambda_handler(event, FakeContext())
    assert len(out["files"]) == 1
    (execution,) = aws_stack.executions()
    assert aws_stack.wait(execution["executionArn"])["status"] == "SUCCEEDED"
    record = record_of(aws_stack)
    assert record.source_type == "email_attachment" and record.source_message_id == "<0123456789@acme-corp.example>"
    assert record.outcome is Outcome.OK


def test_ses_virus_verdict_skips_the_message(aws_stack: Stack) -> None:
    event = json.loads((ROOT / "events" / "ses_inbound.json").read_text())
    event["Records"][0]["ses"]["receipt"]["virusVerdict"]["status"] = "FAIL"
    out = aws_stack.handlers["ingest_email"].lambda_handler(event, FakeContext())
    assert out["files"][0]["outcome"] == "SKIPPED_EMAIL_VERDICT"
    assert aws_stack.executions() == []


def test_search_api_needs_a_tenant_claim(aws_stack: Stack) -> None:
    event = json.loads((ROOT / "events" / "apigw_search.json").read_text())
    del event["requestContext"]["authorizer"]["jwt"]["claims"]["custom:tenant"]
    assert aws_stack.handlers["search_api"].lambda_handler(event, FakeContext())["statusCode"] == 401


def test_reembed_handler_reports_progress(aws_stack: Stack) -> None:
    upload(aws_stack, KEY, TERMS)
    event = json.loads((ROOT / "events" / "schedule_reembed.json").read_text())
    out = aws_stack.handlers["reembed"].lambda_handler(event, FakeContext())
    assert (out["total"], out["done"], out["switched"]) == (0, 0, False)


@pytest.mark.parametrize(
    ("remaining_ms", "limit", "done_per_pass"),
    [
        # out of time from the start: a file a pass, a page a pass to check the walk and switch; then the
        # records follow their staged vectors a file a pass, and a last walk finds none left
        (60_000, None, [1, 1, 1, 0, 0, 1, 1, 1, 0, 0]),
        (900_000, 2, [2, 1]),  # the limit stops the first pass; the second finishes the walk and switches
    ],
    ids=["out-of-time", "limit"],
)
def test_a_model_switch_goes_on_pass_after_pass_until_it_switches(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch, remaining_ms: int, limit: int | None, done_per_pass: list[int]
) -> None:
    """A re-embed pass stops when its invocation is nearly out of time (or at its limit) and queues its
    continuation: at 1M files no single 900 s invocation could finish (before, a scheduled pass did 500 files
    and waited a day). No clock is raced: the handler keeps 60 s back, so 60 s left is a deadline already
    passed, and 900 s is one no pass here reaches (an earlier version gave each pass half a second and
    counted files, which a loaded machine changed)."""
    from semfs.lambda_support import get_container
    from tests.integration.aws_harness import MAINTENANCE_QUEUE_URL

    for n in range(3):
        aws_stack.s3.put_object(
            Bucket="semfs-test", Key=f"uploads/acme/notes/note-{n}.md", Body=f"# Note {n}\n\nPayment terms, note {n}."
        )
    assert aws_stack.handlers["ingest_upload"].lambda_handler(aws_stack.sqs_event(), FakeContext()) == {
        "batchItemFailures": []
    }
    for e in aws_stack.executions():
        assert aws_stack.wait(e["executionArn"])["status"] == "SUCCEEDED"
    monkeypatch.setenv("SEMFS_EMBEDDING_MODEL", "hash-384-v2")
    aws_stack.cold()  # the functions redeployed with the new model's setting
    get_container.cache_clear()

    class Left(FakeContext):
        def get_remaining_time_in_millis(self) -> int:
            return remaining_ms

    handler = aws_stack.handlers["reembed"].lambda_handler
    schedule = json.loads((ROOT / "events" / "schedule_reembed.json").read_text())
    passes = [handler({**schedule, **({"limit": limit} if limit else {})}, Left())]
    while passes[-1].get("continued"):  # a pass that did not finish queued its continuation
        event = aws_stack.sqs_event(MAINTENANCE_QUEUE_URL)  # what the Continue event source delivers
        assert len(event["Records"]) == 1, passes
        passes.append(handler(event, Left()))
        assert len(passes) <= len(done_per_pass), passes
    assert [p["done"] for p in passes] == done_per_pass, passes
    assert [p["switched"] for p in passes].count(True) == 1
    assert not aws_stack.sqs_event(MAINTENANCE_QUEUE_URL)["Records"]  # nothing left queued
    assert get_container().index.active_model() == "hash-384-v2"
    assert search(aws_stack, "payment terms")["results"]


def test_a_reconcile_sweep_goes_on_pass_after_pass_from_where_it_stopped(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scheduled reconcile takes a page per pass here (no time left after the first step), keeps its
    sweep under maintenance/reconcile/ and queues its continuation until the sweep is done."""
    from tests.integration.aws_harness import MAINTENANCE_QUEUE_URL

    monkeypatch.setattr("semfs.pipeline.maintenance.reconcile.PAGE", 1)
    for n in range(3):  # uploads whose S3 events were lost
        aws_stack.s3.put_object(Bucket="semfs-test", Key=f"uploads/acme/late/{n}.md", Body=f"# Late {n}\n\nNo event.")
    for m in aws_stack.sqs_event()["Records"]:  # ... lost: taken off the queue, never handled
        aws_stack.sqs.delete_message(QueueUrl=aws_stack.queue_url, ReceiptHandle=m["receiptHandle"])

    class OutOfTime(FakeContext):
        def get_remaining_time_in_millis(self) -> int:
            return 60_000  # the handler keeps 60 s back: one step per pass

    handler = aws_stack.handlers["reembed"].lambda_handler
    passes = [handler({"task": "reconcile"}, OutOfTime())]
    while passes[-1].get("continued"):
        event = aws_stack.sqs_event(MAINTENANCE_QUEUE_URL)
        assert len(event["Records"]) == 1, passes
        assert json.loads(event["Records"][0]["body"])["sweep"].startswith("maintenance/reconcile/")
        passes.append(handler(event, OutOfTime()))
        assert len(passes) <= 10
    assert len(passes) >= 5  # the records (no tenant yet), 3 objects and the end of the listing, the slots
    assert passes[-1]["objects_without_record"] == {"found": 3, "fixed": 3}
    assert aws_stack.s3.list_objects_v2(Bucket="semfs-test", Prefix="maintenance/")["KeyCount"] == 0
    for e in aws_stack.executions():
        assert aws_stack.wait(e["executionArn"])["status"] == "SUCCEEDED"
    assert len(aws_stack.executions()) == 3


def test_events_are_real_shaped() -> None:
    from aws_lambda_powertools.utilities.data_classes import (
        APIGatewayProxyEventV2,
        EventBridgeEvent,
        SESEvent,
        SNSEvent,
        SQSEvent,
    )

    from semfs.pipeline.stages.state import PipelineState

    load = lambda name: json.loads((ROOT / "events" / name).read_text())  # noqa: E731
    sqs = SQSEvent(load("sqs_s3_upload.json"))
    s3 = json.loads(next(iter(sqs.records)).body)["Records"][0]
    assert s3["eventSource"] == "aws:s3" and s3["s3"]["object"]["key"].startswith("uploads/")
    ses = next(iter(SESEvent(load("ses_inbound.json")).records))
    assert ses.ses.receipt.virus_verdict.status == "PASS" and ses.ses.mail.message_id
    api = APIGatewayProxyEventV2(load("apigw_search.json"))
    assert api.request_context.authorizer.jwt_claim["custom:tenant"] == "acme"
    assert EventBridgeEvent(load("schedule_reembed.json")).detail_type == "Scheduled Event"
    for name in ("sfn_state_extract.json", "sfn_state_mark_failed.json"):
        PipelineState.model_validate(load(name))
    closed = EventBridgeEvent(load("execution_status_change.json"))
    assert closed.source == "aws.states" and closed.detail_type == "Step Functions Execution Status Change"
    PipelineState.model_validate(json.loads(closed.detail["input"]))
    notice = json.loads(next(iter(SNSEvent(load("textract_notification.json")).records)).sns.message)
    assert notice["Status"] == "SUCCEEDED" and notice["API"] == "StartDocumentTextDetection" and notice["JobId"]
    assert {p.name for p in Path(ROOT / "events").glob("*.json")} == {
        "sqs_s3_upload.json",
        "ses_inbound.json",
        "apigw_search.json",
        "schedule_reembed.json",
        "sfn_state_extract.json",
        "sfn_state_mark_failed.json",
        "execution_status_change.json",
        "textract_notification.json",
    }


def test_paid_stages_run_once_per_file(aws_stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:

    upload(aws_stack, KEY, TERMS)
    record = record_of(aws_stack)
    embedder = aws_stack.container("embed").embedder
    calls: list[int] = []
    real = embedder.embed_documents
    monkeypatch.setattr(embedder, "embed_documents", lambda texts: calls.append(1) or real(texts))
    state = {"tenant_id": "acme", "file_id": record.file_id, "attempt": 0, "enrich_extractive": False}
    first = aws_stack.handlers["embed"].lambda_handler(state, FakeContext())
    again = aws_stack.handlers["embed"].lambda_handler(state, FakeContext())
    assert first == again
    assert calls == []  # the pipeline's own embed call is the one on record; redeliveries pay nothing


def test_a_retry_within_the_hour_is_a_new_payment_not_the_last_attempts_result(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the paid stages' idempotency key was tenant + file, so retrying a file whose enrichment fell
    back ("enrich again") within the hour got the first attempt's recorded result: the fallback again,
    and no model call. The key is the attempt now."""
    from semfs.domain.errors import EnrichmentUnavailable
    from semfs.domain.outcomes import Outcome

    enricher = aws_stack.container("enrich").enricher
    real, calls = enricher.enrich, []

    def throttled_once(item: Any) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise EnrichmentUnavailable("LLM unavailable: RateLimitError")
        return real(item)

    monkeypatch.setattr(enricher, "enrich", throttled_once)
    upload(aws_stack, KEY, TERMS)
    record = record_of(aws_stack)
    assert (record.outcome, record.enrich_again) == (Outcome.OK_ENRICH_FALLBACK, True)
    response = aws_stack.handlers["search_api"].lambda_handler(
        api_event("POST", f"/files/{record.file_id}/retry"), FakeContext()
    )
    assert response["statusCode"] == 200, response
    newest = next(e for e in aws_stack.executions() if e["name"].endswith("-a1"))
    assert aws_stack.wait(newest["executionArn"])["status"] == "SUCCEEDED"
    again = record_of(aws_stack)
    assert len(calls) == 2  # the model was asked again
    assert (again.outcome, again.enrich_again, again.attempt) == (Outcome.OK, False, 1)


class AsyncOcr:
    """Stands in for Textract's async API: the job runs for two polls, then returns its pages."""

    engine = "textract"
    available = True
    document_jobs = True
    announces_jobs = False

    def __init__(self) -> None:
        self.polls = 0
        self.tokens: list[str | None] = []
        self.documents: list[tuple[str, int | None]] = []  # (blob key, pages) of each job started

    def recognise(self, image: bytes, page: int) -> Any:
        raise AssertionError("a PDF goes to the async API")

    def start_document(
        self, blob_key: str, mime_type: str, pages: int | None, request_token: str | None = None
    ) -> str | None:
        self.tokens.append(request_token)
        self.documents.append((blob_key, pages))
        return "job-1"

    def poll_document(self, job_id: str) -> Any:
        from semfs.ports.ocr import OcrPage

        self.polls += 1
        if self.polls < 3:
            return None
        return [OcrPage(page=1, text="Invoice 2026-117\nPayment is due within thirty days.", confidence=0.97)]


def test_the_ocr_branch_polls_an_async_job_through_the_wait_loop(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from semfs.bootstrap import build_container
    from semfs.config import Settings
    from tests import ocr_corpus as oc

    fake = AsyncOcr()
    with_ocr = build_container(Settings(backend="aws"), ocr=fake)  # the root, with the OCR double
    aws_stack.inject(with_ocr, "ocr")
    scan = oc.image_only_pdf([oc.encode(oc.page_image())])
    desc = upload(aws_stack, "uploads/acme/scan.pdf", scan)
    assert desc["status"] == "SUCCEEDED"
    assert aws_stack.invocations == ["extract", "ocr", "ocr", "ocr", "ocr", "enrich", "embed", "index", "finalize"]
    history = aws_stack.sfn.get_execution_history(executionArn=desc["executionArn"])["events"]
    assert sum(1 for e in history if e["type"] == "WaitStateEntered") == 3
    record = record_of(aws_stack)
    assert (record.outcome, record.extraction, record.ocr_engine) == (Outcome.OK, "ocr", "textract")
    assert fake.tokens == [f"{record.file_id}-a0"]  # a retried start gets this job back, not a second bill
    assert fake.documents == [(record.blob_key, 1)]  # every page is a scan: the stored file itself
    assert search(aws_stack, "payment due thirty days")["results"][0]["file_id"] == record.file_id


class AnnouncingOcr(AsyncOcr):
    """Textract with a notification topic: the job runs until ``finish()``, then says it ended."""

    announces_jobs = True

    def __init__(self) -> None:
        super().__init__()
        self.finished = False

    def finish(self) -> None:
        self.finished = True

    def poll_document(self, job_id: str) -> Any:
        from semfs.ports.ocr import OcrPage

        self.polls += 1
        if not self.finished:
            return None
        return [OcrPage(page=1, text="Invoice 2026-117\nPayment is due within thirty days.", confidence=0.97)]


def notice(job_id: str = "job-1") -> dict[str, Any]:
    """Textract's end-of-job message as SNS delivers it to the OcrWait function."""
    event: dict[str, Any] = json.loads((ROOT / "events" / "textract_notification.json").read_text())
    message = json.loads(event["Records"][0]["Sns"]["Message"])
    event["Records"][0]["Sns"]["Message"] = json.dumps({**message, "JobId": job_id})
    return event


def waiting_token(stack: Stack, job_id: str = "job-1", timeout: float = CEILING_S) -> str | None:
    """The task token recorded for ``job_id`` once WaitForOcrNotice has run its function."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        item = stack.ddb.get_item(TableName="semfs-gate", Key={"id": {"S": f"job#{job_id}"}}).get("Item", {})
        if "task_token" in item:
            return str(item["task_token"]["S"])
        time.sleep(0.05)
    return None


def with_ocr(stack: Stack, fake: Any) -> None:
    from semfs.bootstrap import build_container
    from semfs.config import Settings

    container = build_container(Settings(backend="aws"), ocr=fake)  # the root, with the OCR double
    stack.inject(container, "ocr")


def test_a_textract_job_is_waited_for_by_its_end_notice_not_polled(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 15: the execution waits on a task token until Textract's SNS notice, instead of calling Ocr
    every few seconds; nothing polls the job before it has ended."""
    from tests import ocr_corpus as oc

    fake = AnnouncingOcr()
    with_ocr(aws_stack, fake)
    arn = start_upload(aws_stack, "uploads/acme/scan.pdf", oc.image_only_pdf([oc.encode(oc.page_image())]))
    assert waiting_token(aws_stack) is not None  # paused in WaitForOcrNotice
    assert aws_stack.sfn.describe_execution(executionArn=arn)["status"] == "RUNNING"
    fake.finish()
    aws_stack.handlers["ocr_wait"].lambda_handler(notice(), FakeContext(function_name="semfs-ocr_wait"))
    desc = aws_stack.wait(arn)
    assert desc["status"] == "SUCCEEDED"
    assert aws_stack.invocations == ["extract", "ocr", "ocr_wait", "ocr", "enrich", "embed", "index", "finalize"]
    assert fake.polls == 1  # once, after the notice
    history = aws_stack.sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
    assert not any(e["type"] in ("WaitStateEntered", "TaskTimedOut") for e in history)
    record = record_of(aws_stack)
    assert (record.outcome, record.extraction) == (Outcome.OK, "ocr")
    # SNS delivers at least once: the same notice again resumes nothing and is not an error
    aws_stack.handlers["ocr_wait"].lambda_handler(notice(), FakeContext(function_name="semfs-ocr_wait"))


def test_a_notice_that_comes_before_the_waiter_still_resumes_the_execution(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-page job can end before WaitForOcrNotice has recorded its token: the token, arriving
    second, finds the notice and resumes the execution itself."""
    import threading

    from tests import ocr_corpus as oc

    fake = AnnouncingOcr()
    with_ocr(aws_stack, fake)
    module = aws_stack.handlers["ocr_wait"]
    real = module.lambda_handler
    entered, go_on = threading.Event(), threading.Event()

    def held(event: Any, context: Any) -> Any:  # the waiter's invocation, held until the notice is in
        entered.set()
        assert go_on.wait(CEILING_S)
        return real(event, context)

    monkeypatch.setattr(module, "lambda_handler", held)
    arn = start_upload(aws_stack, "uploads/acme/scan.pdf", oc.image_only_pdf([oc.encode(oc.page_image())]))
    assert entered.wait(CEILING_S)
    fake.finish()
    real(notice(), FakeContext(function_name="semfs-ocr_wait"))  # no waiter yet: recorded, nothing resumed
    go_on.set()
    desc = aws_stack.wait(arn)  # the notice timeout is 900 s: only the waiter's own resume ends this
    assert desc["status"] == "SUCCEEDED"
    assert record_of(aws_stack).outcome == Outcome.OK


def test_a_lost_notice_is_a_timeout_then_ocr_looks_at_the_job(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests import ocr_corpus as oc

    monkeypatch.setenv("SEMFS_OCR_NOTICE_TIMEOUT_S", "1")
    fake = AnnouncingOcr()
    fake.finish()  # the job ends, its notice never arrives
    with_ocr(aws_stack, fake)
    desc = upload(aws_stack, "uploads/acme/scan.pdf", oc.image_only_pdf([oc.encode(oc.page_image())]))
    assert desc["status"] == "SUCCEEDED"
    assert aws_stack.invocations == ["extract", "ocr", "ocr_wait", "ocr", "enrich", "embed", "index", "finalize"]
    history = aws_stack.sfn.get_execution_history(executionArn=desc["executionArn"], maxResults=1000)["events"]
    assert sum(1 for e in history if e["type"] == "TaskTimedOut") == 1


def test_a_job_reads_only_the_pages_without_a_text_layer(aws_stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """Textract bills every page it is given: page 2 of this PDF is a scan, page 1 has text, so the job
    gets a PDF of page 2 alone, and its page 1 is the file's page 2."""
    from semfs.extractors.pdf import extract_pdf
    from tests import ocr_corpus as oc

    fake = AsyncOcr()
    with_ocr(aws_stack, fake)
    desc = upload(aws_stack, "uploads/acme/review.pdf", oc.mixed_pdf())
    assert desc["status"] == "SUCCEEDED"
    ((key, pages),) = fake.documents
    assert key.startswith("derived/acme/") and key.endswith("/ocr-pages.pdf") and pages == 1
    cut = aws_stack.s3.get_object(Bucket="semfs-test", Key=key)["Body"].read()
    assert extract_pdf(cut, 100_000)[0].pages == 1
    record = record_of(aws_stack)
    assert (record.outcome, record.extraction) == (Outcome.OK, "mixed")
    from semfs.lambda_support import get_container
    from semfs.pipeline.documents import load_document

    doc = load_document(get_container(), record)
    assert [(b.location.page, b.text.split()[0]) for b in doc.blocks][-1] == (2, "Invoice")  # the job's page 1


def test_functions_start_cold_under_their_own_roles_on_an_index_another_made(aws_stack: Stack) -> None:
    """Issue 28, bug 1: search was down on a fresh stack. Each function's first index call sent ``PUT`` (to
    create the index, or to add a field to its mapping), which only Index's role allows, so every search,
    delete and tag edit answered 500. No test saw it while one container served every handler: Index had
    made the index "ready" for all of them. Here each function is its own cold environment (the harness)."""
    # a fresh stack: nothing indexed yet, and search answers that without creating anything
    assert search(aws_stack, "payable thirty days")["results"] == []
    assert upload(aws_stack, KEY, TERMS)["status"] == "SUCCEEDED"  # Index, cold, made the index
    aws_stack.cold("search_api", "ingest_upload")  # environments that never saw it made
    assert [r["filename"] for r in search(aws_stack, "payable thirty days")["results"]] == ["Payment terms (Q3).md"]
    # the upload function, cold too, takes a removed object's file out of the index
    aws_stack.s3.delete_object(Bucket="semfs-test", Key=KEY)
    assert aws_stack.handlers["ingest_upload"].lambda_handler(aws_stack.sqs_event(), FakeContext()) == {
        "batchItemFailures": []
    }
    assert search(aws_stack, "payable thirty days")["results"] == []
    assert not aws_stack.iam.denied
    puts = {call for call in aws_stack.iam.calls if call.endswith("es:ESHttpPut")}
    assert puts == {"index es:ESHttpPut"}  # only the function that writes documents makes the index


def test_a_cold_environment_logs_in_a_process_whose_logger_another_configured(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CI failed four admission tests with ``'_KeyValueFormatter' object has no attribute 'append_keys'``: a CLI
    test earlier in the same worker had put the CLI's JSON handler first on the "semfs" logger, and a second
    Powertools ``Logger`` takes a configured logger's first handler as its own. A real cold environment has a
    bare logger; the harness gives each new environment that (``_powertools_handler_first``)."""
    log = logging.getLogger("semfs")
    other = logging.StreamHandler(io.StringIO())
    other.setFormatter(logging.Formatter())  # not Powertools': it has no append_keys
    monkeypatch.setattr(log, "handlers", [other, *log.handlers])
    aws_stack.cold("search_api")
    assert search(aws_stack, "payable thirty days")["results"] == []


def test_removing_the_object_deletes_the_file(aws_stack: Stack) -> None:
    upload(aws_stack, KEY, TERMS)
    record = record_of(aws_stack)
    aws_stack.s3.delete_object(Bucket="semfs-test", Key=KEY)
    event = aws_stack.sqs_event()
    assert json.loads(event["Records"][0]["body"])["Records"][0]["eventName"].startswith("ObjectRemoved")
    assert aws_stack.handlers["ingest_upload"].lambda_handler(event, FakeContext()) == {"batchItemFailures": []}
    gone = record_of(aws_stack)
    assert gone.file_id == record.file_id and gone.status.value == "trashed"  # restorable, as any delete
    assert search(aws_stack, "payable thirty days")["results"] == []


def test_the_scheduled_reconcile_ingests_an_upload_whose_event_was_lost(aws_stack: Stack) -> None:
    aws_stack.s3.put_object(Bucket="semfs-test", Key="uploads/acme/lost.md", Body=TERMS)
    aws_stack.sqs_event()  # the notification is lost
    report = aws_stack.handlers["reembed"].lambda_handler({"task": "reconcile"}, FakeContext())
    assert "continued" not in report  # a small bucket's sweep ends in its first pass
    assert report["objects_without_record"] == {"found": 1, "fixed": 1}
    (execution,) = aws_stack.executions()
    assert aws_stack.wait(execution["executionArn"])["status"] == "SUCCEEDED"
    assert record_of(aws_stack).filename == "lost.md"


def test_a_failed_file_is_retried_under_a_new_execution_name(aws_stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """moto's Step Functions refuses a second execution with a closed one's name, as AWS does: the
    retry of a failed file must start a new attempt, or the file stays 'received' forever."""
    from semfs.domain.errors import PermanentError

    embedder = aws_stack.container("embed").embedder
    real = embedder.embed_documents

    def broken(texts: list[str]) -> list[list[float]]:
        raise PermanentError("the model rejected the input", outcome=Outcome.FAILED_EMBED)

    monkeypatch.setattr(embedder, "embed_documents", broken)
    desc = upload(aws_stack, KEY, TERMS)
    record = record_of(aws_stack)
    assert (desc["status"], record.status.value, record.outcome) == ("SUCCEEDED", "failed", Outcome.FAILED_EMBED)
    monkeypatch.setattr(embedder, "embed_documents", real)  # the cause is fixed
    # when: the API's retry
    response = aws_stack.handlers["search_api"].lambda_handler(
        api_event("POST", f"/files/{record.file_id}/retry"), FakeContext()
    )
    assert response["statusCode"] == 200, response
    # then: a second execution, under its own name, indexes the file
    executions = aws_stack.executions()
    assert len(executions) == 2 and len({e["name"] for e in executions}) == 2
    newest = next(e for e in executions if e["name"].endswith("-a1"))
    assert aws_stack.wait(newest["executionArn"])["status"] == "SUCCEEDED"
    again = record_of(aws_stack)
    assert (again.status.value, again.outcome, again.attempt) == ("indexed", Outcome.OK, 1)


def test_a_call_outside_the_functions_role_is_denied(aws_stack: Stack) -> None:
    """The IAM check is real: the extract function may write derived/ but not delete an upload, and the
    function may not start executions either; each gets AccessDenied, as from AWS."""
    import boto3
    from botocore.exceptions import ClientError

    from tests.integration.iam_check import as_function

    s3 = boto3.client("s3", region_name="eu-west-1")
    s3.put_object(Bucket="semfs-test", Key="uploads/acme/x.txt", Body=b"x")  # the test itself: not checked
    as_function("extract", lambda e, c: s3.put_object(Bucket="semfs-test", Key="derived/acme/x", Body=b"y"))({}, None)
    with pytest.raises(ClientError, match="AccessDenied"):
        as_function("extract", lambda e, c: s3.delete_object(Bucket="semfs-test", Key="uploads/acme/x.txt"))({}, None)
    start = lambda e, c: aws_stack.sfn.start_execution(stateMachineArn=aws_stack.state_machine_arn, name="x")  # noqa: E731
    with pytest.raises(ClientError, match="AccessDenied"):
        as_function("extract", start)({}, None)
    assert aws_stack.iam.denied == [
        "extract may not s3:DeleteObject on arn:aws:s3:::semfs-test/uploads/acme/x.txt",
        f"extract may not states:StartExecution on {aws_stack.state_machine_arn}",
    ]
    aws_stack.iam.denied.clear()  # expected here; anywhere else a denial fails the test


def test_the_search_domain_admits_this_stacks_function_roles_and_no_one_else(aws_stack: Stack) -> None:
    """Issue 28: the domain's access policy let the whole account in. It now admits the roles under this
    stack's path alone (RolePath on every function), and the harness checks each search call against it as
    well as against the function's own role."""
    from tests.integration.iam_check import ACCOUNT, DOMAIN, REGION, domain_allows, role_arns

    names = json.dumps(aws_stack.iam.names.physical, sort_keys=True)
    index = f"arn:aws:es:{REGION}:{ACCOUNT}:domain/{DOMAIN}/semfs-chunks/_search"
    roles = role_arns(names)
    trigger = roles.pop("token_claims")  # MCP sign-in's token trigger calls nothing: its role is not admitted
    assert not domain_allows(names, trigger, "es:ESHttpPost", index)
    assert set(roles) == set(aws_stack.handlers) and all("/semfs/semfs/" in arn for arn in roles.values())
    assert all(domain_allows(names, arn, "es:ESHttpPost", index) for arn in roles.values())
    for outsider in (f"arn:aws:iam::{ACCOUNT}:role/another-app", f"arn:aws:iam::{ACCOUNT}:role/semfs/other-stack/x"):
        assert not domain_allows(names, outsider, "es:ESHttpPost", index), outsider
    # and the calls the tests make pass both: a search under the API's role reaches the domain
    assert search(aws_stack, "anything")["results"] == [] and not aws_stack.iam.denied


def test_the_api_deletes_a_file_under_its_own_role(aws_stack: Stack) -> None:
    """DELETE /files/{id}: the search API's role must cover the index delete and the FileDeleted event."""
    upload(aws_stack, KEY, TERMS)
    record = record_of(aws_stack)
    response = aws_stack.handlers["search_api"].lambda_handler(
        api_event("DELETE", f"/files/{record.file_id}"), FakeContext()
    )
    assert response["statusCode"] == 200, response
    assert record_of(aws_stack).deleted_at is not None
    assert search(aws_stack, "holiday")["results"] == []


def test_a_deleted_file_leaves_no_version_of_anything_it_stored(aws_stack: Stack) -> None:
    """In a versioned bucket a plain delete adds a marker and the bytes stay as a noncurrent version.
    Deleting a file removes every version of its upload, its original and what was derived from it
    (under the API's role: s3:DeleteObjectVersion, s3:ListBucketVersions)."""
    upload(aws_stack, KEY, TERMS)
    record = record_of(aws_stack)
    aws_stack.s3.put_object(Bucket="semfs-test", Key=KEY, Body=TERMS)  # a second version of the upload

    def versions(prefix: str) -> list[str]:
        found = aws_stack.s3.list_object_versions(Bucket="semfs-test", Prefix=prefix)
        return [v["Key"] for v in found.get("Versions", []) + found.get("DeleteMarkers", [])]

    assert versions(KEY) and versions(record.blob_key) and versions(f"derived/acme/{record.file_id}/")
    response = aws_stack.handlers["search_api"].lambda_handler(
        api_event("DELETE", f"/files/{record.file_id}", {"purge": "true"}), FakeContext()
    )
    assert response["statusCode"] == 200, response
    assert json.loads(response["body"])["in_trash"] is False
    assert versions(KEY) == versions(record.blob_key) == versions(f"derived/acme/{record.file_id}/") == []


def test_the_trash_in_aws_hides_restores_and_purges_under_the_apis_role(aws_stack: Stack) -> None:
    """DynamoDB keeps the trashed record, OpenSearch loses its documents; restoring rewrites them from the
    stored chunks and vectors (S3 reads, an index write) under the search API's role, in a cold container."""
    upload(aws_stack, KEY, TERMS)
    record = record_of(aws_stack)

    def api(method: str, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
        aws_stack.cold("search_api")
        response = aws_stack.handlers["search_api"].lambda_handler(api_event(method, path, query), FakeContext())
        assert response["statusCode"] == 200, response
        return json.loads(response["body"])  # type: ignore[no-any-return]

    deleted = api("DELETE", f"/files/{record.file_id}")
    assert deleted["in_trash"] is True and deleted["purge_on"]
    assert search(aws_stack, "payable thirty days")["results"] == []
    assert [i["file_id"] for i in api("GET", "/trash")["items"]] == [record.file_id]
    (back,) = api("POST", f"/files/{record.file_id}/restore")["restored"]
    assert back["status"] == "indexed"
    assert [r["file_id"] for r in search(aws_stack, "payable thirty days")["results"]] == [record.file_id]
    api("DELETE", f"/files/{record.file_id}")
    assert api("DELETE", "/trash")["purged"] == [record.file_id]
    assert record_of(aws_stack).status.value == "deleted"
    assert api("GET", "/trash")["items"] == []


def test_every_function_runs_under_its_own_role_in_these_tests(aws_stack: Stack) -> None:
    """The IAM check sees a function only if the harness runs its handler as that function."""
    deployed = {p.name for p in (ROOT / "functions").iterdir() if (p / "app.py").exists()}
    assert set(aws_stack.handlers) == deployed


def test_ingest_switched_off_in_aws_refuses_uploads_and_leaves_what_arrives_for_the_sweep(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """EnableIngest=false (SEMFS_ENABLE_INGEST), in cold environments as a deploy that changed it gives:
    the API issues no presigned POST (503 ``disabled``) and says so in /capabilities; an object put in the
    bucket anyway is left there, its S3 event handled without a retry; switched on again, the reconcile
    sweep ingests it."""
    monkeypatch.setenv("SEMFS_ENABLE_INGEST", "false")
    aws_stack.cold()
    refused = aws_stack.handlers["search_api"].lambda_handler(
        api_event("POST", "/files", {"filename": "terms.md"}), FakeContext()
    )
    assert refused["statusCode"] == 503 and json.loads(refused["body"])["error"]["code"] == "disabled"
    caps = aws_stack.handlers["search_api"].lambda_handler(api_event("GET", "/capabilities"), FakeContext())
    assert json.loads(caps["body"])["ingest"]["on"] is False
    aws_stack.s3.put_object(Bucket="semfs-test", Key=KEY, Body=TERMS)
    handled = aws_stack.handlers["ingest_upload"].lambda_handler(aws_stack.sqs_event(), FakeContext())
    assert handled == {"batchItemFailures": []} and aws_stack.executions() == []
    monkeypatch.setenv("SEMFS_ENABLE_INGEST", "true")
    aws_stack.cold()
    report = aws_stack.handlers["reembed"].lambda_handler({"task": "reconcile"}, FakeContext())
    assert report["objects_without_record"] == {"found": 1, "fixed": 1}
    (execution,) = aws_stack.executions()
    assert aws_stack.wait(execution["executionArn"])["status"] == "SUCCEEDED"
    assert record_of(aws_stack).status.value == "indexed"


def _mcp(stack: Stack, message: dict[str, Any], tenant: str = "acme") -> dict[str, Any]:
    """One JSON-RPC exchange with /mcp through the search API's handler, as API Gateway hands it over."""
    event = api_event("POST", "/mcp")
    event["headers"] = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "host": "abc123.execute-api.eu-west-1.amazonaws.com",
        "mcp-protocol-version": "2025-06-18",
    }
    event["body"] = json.dumps(message)
    event["requestContext"]["authorizer"]["jwt"]["claims"]["custom:tenant"] = tenant
    return stack.handlers["search_api"].lambda_handler(event, FakeContext())  # type: ignore[no-any-return]


def test_mcp_in_aws_answers_through_the_api_function_in_the_callers_tenant(aws_stack: Stack) -> None:
    """Issue 32: /mcp in AWS (it was semfs serve's only). The API function answers the streamable HTTP
    transport statelessly, with JSON answers (a Lambda holds no stream), the tenant from the JWT claim: a
    tool call finds the tenant's file, another tenant's finds nothing and reads it as not found, and a
    request without the claim is refused before any tool runs."""
    upload(aws_stack, KEY, TERMS)
    record = record_of(aws_stack)
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    started = _mcp(aws_stack, hello)
    assert started["statusCode"] == 200, started
    assert json.loads(started["body"])["result"]["serverInfo"]["name"]
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": "payable thirty days", "mode": "keyword"}},
    }
    found = json.loads(_mcp(aws_stack, call)["body"])["result"]
    assert not found.get("isError") and record.file_id in json.dumps(found["structuredContent"])
    theirs = json.loads(_mcp(aws_stack, call, tenant="globex")["body"])["result"]
    assert record.file_id not in json.dumps(theirs)
    read = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"file_id": record.file_id}},
    }
    refused = json.loads(_mcp(aws_stack, read, tenant="globex")["body"])["result"]
    assert refused["isError"] and "no such file" in refused["content"][0]["text"]
    event = api_event("POST", "/mcp")
    del event["requestContext"]["authorizer"]["jwt"]["claims"]["custom:tenant"]
    assert aws_stack.handlers["search_api"].lambda_handler(event, FakeContext())["statusCode"] == 401


@pytest.mark.parametrize("claim", ["default/", "Acme", " acme", "acme#eu", ""])
def test_a_jwt_tenant_claim_that_is_no_tenant_id_is_no_credential(aws_stack: Stack, claim: str) -> None:
    """Issue 47.2: the tenant claim is held to the one tenant-id rule, for the routes and for /mcp alike."""
    for path in ("/files", "/mcp"):
        event = api_event("GET" if path == "/files" else "POST", path)
        event["requestContext"]["authorizer"]["jwt"]["claims"]["custom:tenant"] = claim
        assert aws_stack.handlers["search_api"].lambda_handler(event, FakeContext())["statusCode"] == 401, path


def test_a_cors_preflight_is_answered_without_a_token_and_reads_nothing(aws_stack: Stack) -> None:
    """Issue 47.3: the template's OPTIONS route (no authorizer) reaches the function with no claims; it answers
    204 with no body, whatever the path (API Gateway adds the CorsConfiguration's headers)."""
    for path in ("/files", "/search", "/files/f_x/download", "/mcp"):
        event = api_event("OPTIONS", path)
        event["requestContext"].pop("authorizer", None)
        event["headers"] = {"origin": "https://page.example", "access-control-request-method": "POST"}
        answer = aws_stack.handlers["search_api"].lambda_handler(event, FakeContext())
        assert (answer["statusCode"], answer.get("body") or "") == (204, ""), path


def test_a_get_of_mcp_in_aws_is_405_not_a_stream(aws_stack: Stack) -> None:
    """Issue 47.1: a stateless server has no SSE stream to give a GET (the SDK's GET held its caller until it
    left); a Lambda answers 405 at once, as the local host does."""
    event = api_event("GET", "/mcp")
    event["headers"] = {"accept": "text/event-stream", "host": "abc123.execute-api.eu-west-1.amazonaws.com"}
    answer = aws_stack.handlers["search_api"].lambda_handler(event, FakeContext())
    assert answer["statusCode"] == 405 and answer["headers"]["Allow"] == "POST"


INVOICE = b"""# Invoice INV-2024-0042

Northwind Cycles Ltd bills Acme Corp EUR 44,000.00, due on 15 March 2025. Attn: Jane Okafor.
"""


def test_entities_are_kept_by_enrich_and_read_by_the_api_each_under_its_own_role(aws_stack: Stack) -> None:
    """Enrich writes the entity items (a counted transaction per entity: Put, Update, and the file's own
    items) under its role; the API reads an entity's page, a file's entities and the tenant's by kind under
    its own, cold; a purge takes the file's entity items away (Query, Delete, Update) under the API's."""
    upload(aws_stack, "uploads/acme/invoice-0042.md", INVOICE)
    record = record_of(aws_stack)
    assert "identifier:INV-2024-0042" in record.entities

    def api(method: str, path: str, query: dict[str, str] | None = None, status: int = 200) -> dict[str, Any]:
        aws_stack.cold("search_api")
        response = aws_stack.handlers["search_api"].lambda_handler(api_event(method, path, query), FakeContext())
        assert response["statusCode"] == status, response
        return json.loads(response["body"])  # type: ignore[no-any-return]

    page = api("GET", "/entity", {"name": "INV-2024-0042"})
    assert [f["file_id"] for f in page["files"]] == [record.file_id] and page["entity"]["detail"] == "invoice"
    named = {e["entity_id"] for e in api("GET", f"/files/{record.file_id}/entities")["entities"]}
    assert {"organisation:northwind cycles", "person:jane okafor", "money:EUR 44000.00"} <= named
    organisations = api("GET", "/entities", {"kind": "organisation"})["entities"]
    assert {e["label"] for e in organisations} == {"Northwind Cycles Ltd", "Acme Corp"}
    listed = api("GET", "/files", {"entity": "Northwind Cycles Ltd"})
    assert [f["file_id"] for f in listed["files"]] == [record.file_id]
    api("DELETE", f"/files/{record.file_id}", {"purge": "true"})
    api("GET", "/entity", {"name": "INV-2024-0042"}, status=404)
    assert api("GET", "/entities")["entities"] == []


def test_a_file_enriched_again_forgets_what_it_no_longer_names_under_enrichs_role(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retried file is enriched again; an entity the first enrichment named (here an LLM's candidate) and
    the second does not loses the file: its (entity, file) items are deleted and its count moves, under
    Enrich's role (which had no DeleteItem on the entity table before this test)."""
    from semfs.domain.errors import PermanentError
    from semfs.domain.models import EntityCandidate

    enricher = aws_stack.container("enrich").enricher
    real_enrich = enricher.enrich

    def with_a_candidate(item: Any) -> Any:
        found = real_enrich(item)
        return found.model_copy(update={"entities": [EntityCandidate(kind="person", text="Jane Okafor")]})

    embedder = aws_stack.container("embed").embedder
    real_embed = embedder.embed_documents

    def broken(texts: list[str]) -> list[list[float]]:
        raise PermanentError("the model rejected the input", outcome=Outcome.FAILED_EMBED)

    monkeypatch.setattr(enricher, "enrich", with_a_candidate)
    monkeypatch.setattr(embedder, "embed_documents", broken)
    upload(aws_stack, "uploads/acme/invoice-0042.md", INVOICE.replace(b"Attn: Jane Okafor", b"Jane Okafor"))
    record = record_of(aws_stack)
    assert record.status.value == "failed" and "person:jane okafor" in record.entities
    monkeypatch.setattr(enricher, "enrich", real_enrich)  # the retry's enrichment names no one
    monkeypatch.setattr(embedder, "embed_documents", real_embed)
    response = aws_stack.handlers["search_api"].lambda_handler(
        api_event("POST", f"/files/{record.file_id}/retry"), FakeContext()
    )
    assert response["statusCode"] == 200, response
    newest = next(e for e in aws_stack.executions() if e["name"].endswith("-a1"))
    assert aws_stack.wait(newest["executionArn"])["status"] == "SUCCEEDED"
    again = record_of(aws_stack)
    assert "person:jane okafor" not in again.entities and "identifier:INV-2024-0042" in again.entities
    store = aws_stack.container("search_api").entities
    assert store.get("acme", "person:jane okafor") is None
    assert store.files("acme", "person:jane okafor") == []


def test_a_signed_in_users_groups_reach_the_filters_of_search_and_listing_under_the_apis_role(
    aws_stack: Stack,
) -> None:
    """Issue 50 in AWS: an upload carries who may read it in the object metadata its presigned form pinned;
    the JWT's user and ``cognito:groups`` are the caller; OpenSearch's BM25 and DynamoDB (the listing) filter
    by them inside the query, cold, under the search function's own role. What this cannot see: moto does
    not enforce POST policies (the form is checked to pin the metadata, S3's rule), and osmem-server has no
    k-NN (the readers clause inside ``knn.filter`` is checked as compiled DSL in test_opensearch_dsl.py)."""
    import base64

    from semfs.adapters.aws.s3 import S3BlobStore
    from semfs.config import Settings
    from semfs.lambda_support import get_container
    from semfs.pipeline.principals import add_user, principal_for

    form = S3BlobStore(Settings(bucket="semfs-test", aws_region="eu-west-1")).presign_upload(
        "acme", "pay.txt", 1000, 300, {"semfs-owner": "bob", "semfs-readers": "u:bob g:hr"}
    )
    policy = json.loads(base64.b64decode(form["fields"]["policy"]))
    assert {"x-amz-meta-semfs-readers": "u:bob g:hr"} in policy["conditions"]
    assert form["fields"]["x-amz-meta-semfs-owner"] == "bob"

    add_user(get_container(), "acme", "ann", role="admin")  # the tenant lists users: no longer one room
    for key, readers, words in (
        ("uploads/acme/u1/salaries.txt", "u:bob g:hr", b"Salary bands zanzibar: payable within thirty days."),
        ("uploads/acme/u2/canteen.txt", "tenant", b"Canteen menu zanzibar: payable at the till."),
    ):
        aws_stack.s3.put_object(
            Bucket="semfs-test", Key=key, Body=words, Metadata={"semfs-owner": "bob", "semfs-readers": readers}
        )
        event = aws_stack.sqs_event()
        assert aws_stack.handlers["ingest_upload"].lambda_handler(event, FakeContext()) == {"batchItemFailures": []}
        (execution,) = [e for e in aws_stack.executions() if e["status"] == "RUNNING"] or aws_stack.executions()[-1:]
        aws_stack.wait(str(execution["executionArn"]))
    assert principal_for(get_container(), "acme", "ann").is_admin

    def as_user(method: str, path: str, claims: dict[str, str], body: Any = None) -> dict[str, Any]:
        aws_stack.cold("search_api")
        event = api_event(method, path, {"limit": "50"} if method == "GET" else None)
        event["requestContext"]["authorizer"]["jwt"]["claims"].update(claims)
        if body is not None:
            event["body"] = json.dumps(body)
        response = aws_stack.handlers["search_api"].lambda_handler(event, FakeContext())
        assert response["statusCode"] == 200, response
        return json.loads(response["body"])  # type: ignore[no-any-return]

    hr = {"cognito:username": "eve", "cognito:groups": "[hr]"}
    other = {"cognito:username": "cy", "cognito:groups": "[sales]"}
    query = {"query": "zanzibar payable", "mode": "keyword"}
    both = {"salaries.txt", "canteen.txt"}
    assert {r["filename"] for r in as_user("POST", "/search", hr, query)["results"]} == both
    assert {r["filename"] for r in as_user("POST", "/search", other, query)["results"]} == {"canteen.txt"}
    assert {f["filename"] for f in as_user("GET", "/files", other)["files"]} == {"canteen.txt"}
    assert {f["filename"] for f in as_user("GET", "/files", hr)["files"]} == {"salaries.txt", "canteen.txt"}
