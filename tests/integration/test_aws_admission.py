"""Admission control under moto: a bounded number of files in flight, the rest waiting in the admission
queue, slots freed when Step Functions reports an execution closed, and a burst with a throttling LLM
that ends with every file indexed and the running executions never above the bound.

moto's Step Functions runs each execution in a thread of its own, as the service runs them in parallel,
so the bound is observed from outside: a thread samples ``ListExecutions(RUNNING)`` while the burst runs.
What moto cannot show: the Lambda SQS poller (``Stack.admit_waiting`` delivers the queue's messages as
it would) and EventBridge's status-change events (``Stack.deliver_status_changes`` sends the documented
event for each closed execution, as the template's rule routes it).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from semfs.domain.outcomes import Outcome
from tests.integration.aws_harness import ADMISSION_QUEUE_URL, FakeContext, Stack
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration
DOC = "Invoice {n} for the pallet shipment. Payment terms are thirty days. Late payment accrues interest.\n"


class ThrottlingLlm(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint that answers 429 (Retry-After 1 ms) to a share of calls."""

    share_429: ClassVar[float] = 0.3
    calls: ClassVar[list[int]] = []
    rng: ClassVar[random.Random] = random.Random(7)
    lock: ClassVar[threading.Lock] = threading.Lock()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        with ThrottlingLlm.lock:
            throttled = ThrottlingLlm.rng.random() < ThrottlingLlm.share_429
            ThrottlingLlm.calls.append(429 if throttled else 200)
        if throttled:
            payload: dict[str, Any] = {"error": {"message": "Rate limit reached", "type": "rate_limit_exceeded"}}
        else:
            answer = {
                "title": "Invoice for a pallet shipment",
                "summary": "An invoice for a pallet shipment. Payment terms are thirty days.",
                "tags": ["invoice", "payment terms", "pallet shipment"],
            }
            payload = {
                "id": "c1",
                "object": "chat.completion",
                "created": 0,
                "model": "m",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps(answer)},
                    }
                ],
            }
        data = json.dumps(payload).encode()
        self.send_response(429 if throttled else 200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if throttled:
            self.send_header("retry-after-ms", "1")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def throttling_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    ThrottlingLlm.calls = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ThrottlingLlm)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    monkeypatch.setenv("SEMFS_LLM_BASE_URL", f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    monkeypatch.setenv("SEMFS_LLM_MODEL", "m")
    monkeypatch.setenv("SEMFS_LLM_API_KEY", "k")
    yield ThrottlingLlm.calls
    httpd.shutdown()


def bounded(monkeypatch: pytest.MonkeyPatch, limit: int, tenant_share: int | None = None) -> None:
    """The gate's bound, and one tenant's share of it (default: all of it, as these tests run one tenant)."""
    from semfs.lambda_support import get_container

    monkeypatch.setenv("SEMFS_MAX_IN_FLIGHT", str(limit))
    monkeypatch.setenv("SEMFS_TENANT_MAX_IN_FLIGHT", str(tenant_share or limit))
    get_container.cache_clear()


def container() -> Any:
    from semfs.lambda_support import get_container

    return get_container()


class RunningSampler:
    """The most executions seen RUNNING at once, sampled from outside while the burst runs."""

    def __init__(self, stack: Stack) -> None:
        self._stack = stack
        self._stop = threading.Event()
        self.most = 0
        self.samples = 0
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            pages = self._stack.sfn.get_paginator("list_executions").paginate(
                stateMachineArn=self._stack.state_machine_arn, statusFilter="RUNNING"
            )
            self.most = max(self.most, sum(len(p["executions"]) for p in pages))
            self.samples += 1
            time.sleep(0.05)  # each sample lists executions, which moto does in O(executions)

    def __enter__(self) -> RunningSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def upload_all(stack: Stack, count: int) -> list[str]:
    """PUT ``count`` files; deliver their S3 notifications to ingest_upload ten at a time."""
    keys = [f"uploads/acme/burst/invoice-{n:04d}.txt" for n in range(count)]
    for n, key in enumerate(keys):
        stack.s3.put_object(Bucket="semfs-test", Key=key, Body=DOC.format(n=n).encode())
    delivered = 0
    while delivered < count:
        event = stack.sqs_event()
        assert event["Records"], f"only {delivered} of {count} notifications arrived"
        out = stack.handlers["ingest_upload"].lambda_handler(event, FakeContext())
        assert out == {"batchItemFailures": []}
        for r in event["Records"]:
            stack.sqs.delete_message(QueueUrl=stack.queue_url, ReceiptHandle=r["receiptHandle"])
        delivered += len(event["Records"])
    return keys


# How long the burst may go without any file moving (admitted, a slot freed, a record finished) before it
# is taken to be stuck. It bounds a stall, not the run: a busy machine makes the run slower, not stuck.
STALL_S = 600


def run_until_settled(stack: Stack, files: int) -> dict[str, int]:
    """Admit waiting files and free the slots of closed executions until every file has a final status.
    There is no deadline for the whole run; it fails only if nothing moves for ``STALL_S``."""
    from semfs.ports import RecordQuery

    admitted = 0
    finished = 0
    last_move = time.monotonic()
    while time.monotonic() - last_move < STALL_S:
        got = stack.admit_waiting()
        admitted += got
        freed = stack.deliver_status_changes()
        if got or freed:
            last_move = time.monotonic()
            continue
        # nothing waiting and nothing closed just now: is every file done?
        records = container().repo.query(RecordQuery(tenant_id="acme", limit=files + 1))
        done = sum(r.status.terminal for r in records)
        if done != finished:
            finished, last_move = done, time.monotonic()
        if len(records) == files and done == files:
            # a record is final in Finalize; its execution closes a moment later: then its slot is freed
            for e in stack.sfn.list_executions(stateMachineArn=stack.state_machine_arn, statusFilter="RUNNING")[
                "executions"
            ]:
                stack.wait(e["executionArn"])
            stack.deliver_status_changes()
            return {"polled_messages": admitted}
        time.sleep(0.05)
    raise TimeoutError(f"no file moved for {STALL_S} s: {finished} of {files} finished")


def test_the_gate_admits_up_to_its_bound_and_frees_slots_idempotently(aws_stack: Stack, monkeypatch: Any) -> None:
    bounded(monkeypatch, 2)
    gate = container().admission
    assert gate.admit("a", "acme") and gate.admit("b", "globex")
    assert not gate.admit("c", "initech")  # full
    assert gate.admit("a", "acme")  # a holder asking again keeps its slot, takes no second one
    gate.release("a", "acme")
    gate.release("a", "acme")  # a redelivered status change frees nothing more
    assert gate.holders() == ["b"]
    assert gate.admit("c", "acme") and not gate.admit("d", "acme")
    gate.release("c")  # the reconcile sweep knows the name only
    assert gate.holders() == ["b"]


def test_one_tenant_holds_at_most_its_share_of_the_slots(aws_stack: Stack, monkeypatch: Any) -> None:
    """Issue 27: before, one tenant's burst could take every slot, and another tenant's file waited behind
    all of it. Now a tenant holds at most SEMFS_TENANT_MAX_IN_FLIGHT of them; the rest stay for others."""
    bounded(monkeypatch, 4, tenant_share=3)
    gate = container().admission
    assert [gate.admit(f"a{n}", "acme") for n in range(5)] == [True, True, True, False, False]
    assert gate.admit("b0", "globex")  # the slot acme could not take
    assert not gate.admit("b1", "globex")  # now every slot is taken
    gate.release("a0", "acme")
    assert gate.admit("a3", "acme") and not gate.admit("a4", "acme")
    assert gate.holders() == ["a1", "a2", "a3", "b0"]


def test_concurrent_admissions_never_exceed_the_bound(aws_stack: Stack, monkeypatch: Any) -> None:
    bounded(monkeypatch, 3)
    gate = container().admission
    results: list[bool] = []
    threads = [threading.Thread(target=lambda n=n: results.append(gate.admit(f"x{n}", f"t{n % 2}"))) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(True) == 3 and len(gate.holders()) == 3


def test_files_beyond_the_bound_wait_in_the_queue_then_are_indexed(aws_stack: Stack, monkeypatch: Any) -> None:
    from semfs.ports import RecordQuery

    bounded(monkeypatch, 2)
    upload_all(aws_stack, 6)
    started = aws_stack.executions()
    assert len(started) == 2  # the other four wait for a slot
    waiting = aws_stack.sqs.get_queue_attributes(
        QueueUrl=ADMISSION_QUEUE_URL, AttributeNames=["ApproximateNumberOfMessages"]
    )["Attributes"]["ApproximateNumberOfMessages"]
    assert waiting == "4"
    records = container().repo.query(RecordQuery(tenant_id="acme"))
    assert sorted(r.status.value for r in records).count("received") >= 4
    with RunningSampler(aws_stack) as sampler:
        run_until_settled(aws_stack, 6)
    assert sampler.most <= 2
    assert len(aws_stack.executions()) == 6
    assert container().admission.holders() == []  # every closed execution gave its slot back


def test_an_execution_that_closes_without_markfailed_fails_its_file_and_frees_its_slot(
    aws_stack: Stack, monkeypatch: Any
) -> None:
    """TIMED_OUT and ABORTED run no Catch: only the status-change event tells semfs the file is not going on."""
    from semfs.ports import RecordQuery

    bounded(monkeypatch, 1)
    entered, go_on = threading.Event(), threading.Event()
    extract = aws_stack.handlers["extract"].lambda_handler

    def held(event: Any, context: Any) -> Any:  # the execution is in its first task when it is stopped
        entered.set()
        go_on.wait(CEILING_S)
        return extract(event, context)

    monkeypatch.setattr(aws_stack.handlers["extract"], "lambda_handler", held)
    upload_all(aws_stack, 1)
    (execution,) = aws_stack.executions()
    assert entered.wait(CEILING_S)
    aws_stack.sfn.stop_execution(executionArn=execution["executionArn"], error="States.Timeout")
    go_on.set()
    assert aws_stack.wait(execution["executionArn"])["status"] == "ABORTED"  # moto stops between states
    assert aws_stack.deliver_status_changes() == 1
    (record,) = container().repo.query(RecordQuery(tenant_id="acme"))
    assert (record.status.value, record.outcome) == ("failed", Outcome.FAILED_INTERNAL)
    assert "execution aborted" in (record.error or "")
    assert container().admission.holders() == []


def test_reconcile_frees_a_slot_whose_status_change_was_lost(aws_stack: Stack, monkeypatch: Any) -> None:
    bounded(monkeypatch, 1)
    upload_all(aws_stack, 1)
    (execution,) = aws_stack.executions()
    aws_stack.wait(execution["executionArn"])  # closed, but its event never reaches admit
    assert container().admission.holders() == [execution["name"]]
    container().admission.admit("pf-still-running-elsewhere", "acme")  # refused: the bound is 1
    report = aws_stack.handlers["reembed"].lambda_handler({"task": "reconcile"}, FakeContext())  # the schedule
    assert report["slots_of_closed_executions"] == {"found": 1, "fixed": 1}
    assert container().admission.holders() == []


def test_a_burst_with_a_throttling_llm_ends_with_every_file_indexed_within_the_bound(
    aws_stack: Stack, monkeypatch: Any, throttling_llm: list[int]
) -> None:
    """The issue's simulated burst. ``make test`` runs 24 files through a bound of 3; ``make bench-burst``
    runs 1,000 through a bound of 20 (SEMFS_BURST_FILES, SEMFS_BURST_BOUND) and prints what it saw."""
    from semfs.ports import RecordQuery

    files = int(os.environ.get("SEMFS_BURST_FILES", "24"))
    bound = int(os.environ.get("SEMFS_BURST_BOUND", "3"))
    bounded(monkeypatch, bound)
    began = time.monotonic()
    with RunningSampler(aws_stack) as sampler:
        upload_all(aws_stack, files)
        polled = run_until_settled(aws_stack, files)
    records = container().repo.query(RecordQuery(tenant_id="acme", limit=files + 1))
    outcomes = sorted({r.outcome.value for r in records if r.outcome})
    print(
        json.dumps(
            {
                "files": files,
                "bound": bound,
                "most_running": sampler.most,
                "samples": sampler.samples,
                "llm_calls": len(throttling_llm),
                "llm_429": throttling_llm.count(429),
                "outcomes": outcomes,
                "enrich_again": sum(r.enrich_again for r in records),
                "seconds": round(time.monotonic() - began, 1),
                **polled,
            }
        )
    )
    assert len(records) == files
    assert all(r.status.value == "indexed" for r in records), [r.error for r in records if r.error]
    assert throttling_llm.count(429) > 0
    assert 0 < sampler.most <= bound
    assert container().admission.holders() == []
