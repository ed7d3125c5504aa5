"""Differential: the packaged ASL run by semfs's local interpreter and by moto's (ported from LocalStack)
with the same scripted stages must visit the same states and end in the same state.

The scripted stages return what the real ones return (flags in the state) or raise the error families
the real task boundary raises. What this cannot see: the ``Cause`` text of a caught error (Lambda
puts its own error payload there; both sides keep ``Error``, which is all MarkFailed reads), and real
waiting (moto's retry sleeps are made instant; the local interpreter is given a no-op sleep).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from semfs.adapters.local.asl import LocalAslStarter, default_definition_path
from semfs.domain.errors import PermanentError, RetryableError
from tests.integration.aws_harness import REGION, STAGE_FUNCTIONS

pytestmark = pytest.mark.integration

Script = dict[str, Callable[[dict[str, Any]], dict[str, Any]]]


def flaky(times: int, error: type[Exception]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A stage that fails ``times`` times with ``error``, then passes the state through."""
    calls = {"n": 0}

    def run(state: dict[str, Any]) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] <= times:
            raise error("scripted failure")
        return {**state, f"passed_{calls['n']}": True}

    return run


def polls(pending: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """An OCR stage whose job is still running for ``pending`` polls."""
    calls = {"n": 0}

    def run(state: dict[str, Any]) -> dict[str, Any]:
        calls["n"] += 1
        done = calls["n"] > pending
        return {**state, "ocr_done": done, "ocr_notice": False, "ocr_wait_seconds": 0, "ocr_polls": calls["n"]}

    return run


def unannounced(state: dict[str, Any]) -> dict[str, Any]:
    """An OCR stage whose job announces its end, a notice that never comes: the wait times out after
    its 1 s and Ocr looks again (the second look finds the job done)."""
    done = "ocr_job_id" in state
    return {**state, "ocr_done": done, "ocr_notice": not done, "ocr_job_id": "job-1", "ocr_wait_seconds": 1}


def marked(state: dict[str, Any]) -> dict[str, Any]:
    return {**state, "outcome": "FAILED_X" if "error" in state else "none"}


# the errorType Lambda reports for a function that ran past its timeout (a class of that name here)
LambdaTimedOut = type("Sandbox.Timedout", (Exception,), {})


def slow_model(state: dict[str, Any]) -> dict[str, Any]:
    """An Enrich whose model outlasts the function's timeout every time; by extraction it is quick."""
    if not state.get("enrich_extractive"):
        raise LambdaTimedOut("Task timed out after 120.00 seconds")
    return {**state, "enrich_fallback": True}


SCENARIOS: dict[str, Callable[[], Script]] = {
    "enrich times out: once more, then by extraction": lambda: {"Enrich": slow_model},
    "extract times out, then fine": lambda: {"Extract": flaky(1, LambdaTimedOut)},
    "text layer": lambda: {},
    "ocr job polled three times": lambda: {
        "Extract": lambda s: {**s, "needs_ocr": True, "ocr_done": False},
        "Ocr": polls(3),
    },
    "ocr notice lost: the wait times out, Ocr looks again": lambda: {
        "Extract": lambda s: {**s, "needs_ocr": True, "ocr_done": False},
        "Ocr": unannounced,
    },
    "retryable twice, then fine": lambda: {"Enrich": flaky(2, RetryableError)},
    "permanent error is caught": lambda: {"Embed": flaky(99, PermanentError)},
    "a bug is caught by States.ALL": lambda: {"Index": flaky(99, ValueError)},
    "retries run out": lambda: {"Extract": flaky(99, RetryableError)},
    "finalize fails after indexing": lambda: {"Finalize": flaky(99, PermanentError)},
}


def scripted(script: Script, calls: list[str]) -> Script:
    """Every stage (pass-through unless scripted), each call logged: retries show up as repeated calls."""
    stages: Script = dict.fromkeys(STAGE_FUNCTIONS, dict)
    stages["MarkFailed"] = marked
    stages.update(script)

    def logged(name: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        def call(state: dict[str, Any]) -> dict[str, Any]:
            if name != "OcrWait":  # the callback's function: moto invokes it, the local runner does not
                calls.append(name)
            return stages[name](state)

        return call

    return {name: logged(name) for name in stages}


def run_local(script: Script, state: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    starter = LocalAslStarter(lambda name, s: script[name](s), sleep=lambda _: None)
    execution = starter.run("x", state)
    assert execution.output is not None
    return execution.visited, execution.output


@pytest.fixture
def moto_sfn(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Script, dict[str, Any]], Any]]:
    import boto3
    from moto import mock_aws
    from moto.awslambda_simple.models import LambdaSimpleBackend
    from moto.stepfunctions.parser.asl.component.common.retry import retrier_decl

    for k, v in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": REGION}.items():
        monkeypatch.setenv(k, v)
    current: dict[str, Script] = {}

    def invoke(self: Any, function_name: str, qualifier: Any, body: Any, headers: Any, response_headers: Any) -> bytes:
        stage = next(s for s, fn in STAGE_FUNCTIONS.items() if function_name.endswith(f"semfs-{fn}"))
        try:
            return json.dumps(current["script"][stage](json.loads(body or "{}"))).encode()
        except Exception as e:  # what the Lambda service reports for an unhandled error
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": type(e).__name__, "errorMessage": str(e)}).encode()

    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    monkeypatch.setattr(retrier_decl, "time", type("NoWait", (), {"sleep": staticmethod(lambda s: None)}))
    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}):
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        lam = boto3.client("lambda", region_name=REGION)
        definition = default_definition_path().read_text()
        for stage, fn in STAGE_FUNCTIONS.items():
            arn = lam.create_function(
                FunctionName=f"semfs-{fn}", Runtime="python3.12", Role=role, Handler="app.h", Code={"ZipFile": b"x"}
            )["FunctionArn"]
            definition = definition.replace(f"${{{stage}FunctionArn}}", arn)
        sfn = boto3.client("stepfunctions", region_name=REGION)
        machine = sfn.create_state_machine(name="diff", definition=definition, roleArn=role)["stateMachineArn"]

        def run(script: Script, state: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
            current["script"] = script
            arn = sfn.start_execution(stateMachineArn=machine, input=json.dumps(state))["executionArn"]
            deadline = time.time() + 60
            while (desc := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
                assert time.time() < deadline, "execution did not finish"
                time.sleep(0.02)
            events = sfn.get_execution_history(executionArn=arn, maxResults=1000)["events"]
            visited = [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]
            if desc["status"] != "SUCCEEDED":
                return visited, {"__status__": desc["status"]}
            return visited, json.loads(desc["output"])

        yield run


def _comparable(state: dict[str, Any]) -> dict[str, Any]:
    out = dict(state)
    if isinstance(out.get("error"), dict):
        out["error"] = {"Error": out["error"]["Error"]}  # Cause: Lambda's payload vs ours (see docstring)
    return out


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_local_and_moto_agree(scenario: str, moto_sfn: Callable[[Script, dict[str, Any]], Any]) -> None:
    start = {"tenant_id": "acme", "file_id": "f_1", "needs_ocr": False, "ocr_done": True}
    local_calls: list[str] = []
    moto_calls: list[str] = []
    local_visited, local_final = run_local(scripted(SCENARIOS[scenario](), local_calls), start)
    moto_visited, moto_final = moto_sfn(scripted(SCENARIOS[scenario](), moto_calls), start)
    assert local_visited == moto_visited
    assert local_calls == moto_calls  # the same retries
    assert _comparable(local_final) == _comparable(moto_final)
    if scenario.startswith("enrich times out"):  # a slow model ends in the fallback, not in MarkFailed
        assert "EnrichByExtraction" in local_visited and local_visited[-1] == "Finalize"
        assert local_calls.count("Enrich") == 3 and "MarkFailed" not in local_calls
        assert local_final["enrich_extractive"] is True
    if scenario.startswith("extract times out"):  # a Lambda timeout is retried like any transient error
        assert local_calls.count("Extract") == 2 and local_visited[-1] == "Finalize"
