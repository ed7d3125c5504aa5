"""The ASL definition and the local interpreter agree; retries and catches behave as in AWS."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from semfs.adapters.local import asl
from semfs.adapters.local.asl import choice_matches, load_definition
from semfs.pipeline.stages.table import STAGES

pytestmark = pytest.mark.unit
ASL = Path(__file__).resolve().parents[2] / "shared" / "semfs" / "statemachine" / "process_file.asl.json"


def test_every_task_maps_to_a_stage_and_every_stage_is_used() -> None:
    definition = load_definition(ASL, frozenset(STAGES))
    tasks = {n for n, s in definition["States"].items() if s["Type"] == "Task" and s["Resource"] != asl.CALLBACK}
    assert tasks == set(STAGES) | {"EnrichByExtraction"}  # Enrich again after a timeout, with no model call
    for name in tasks:
        stage = "Enrich" if name == "EnrichByExtraction" else name
        assert definition["States"][name]["Resource"] == f"${{{stage}FunctionArn}}"


def test_a_textract_job_is_waited_for_by_its_notice_and_a_lost_notice_is_a_look_and_another_wait() -> None:
    states = json.loads(ASL.read_text())["States"]
    wait = states["WaitForOcrNotice"]
    assert wait["Resource"] == "arn:aws:states:::lambda:invoke.waitForTaskToken"
    assert wait["Parameters"] == {
        "FunctionName": "${OcrWaitFunctionArn}",
        "Payload": {"job_id.$": "$.ocr_job_id", "token.$": "$$.Task.Token"},
    }
    assert wait["TimeoutSecondsPath"] == "$.ocr_wait_seconds" and wait["ResultPath"] is None
    assert wait["Next"] == "Ocr"  # the notice resumes it: Ocr reads the finished job
    assert "States.Timeout" not in wait["Retry"][0]["ErrorEquals"]  # a timeout is not retried here ...
    assert wait["Catch"][0] == {"ErrorEquals": ["States.Timeout"], "ResultPath": None, "Next": "Ocr"}  # ... Ocr looks


def test_a_callback_step_waits_out_its_timeout_locally_and_its_catcher_takes_it() -> None:
    """Locally nothing hands a task token back: the step sleeps its TimeoutSecondsPath, then
    States.Timeout goes to its catcher with the input unchanged (ResultPath null)."""
    definition = asl.check_definition(
        {
            "StartAt": "Wait",
            "States": {
                "Wait": {
                    "Type": "Task",
                    "Resource": asl.CALLBACK,
                    "Parameters": {"FunctionName": "${WaitFunctionArn}", "Payload": {"token.$": "$$.Task.Token"}},
                    "TimeoutSecondsPath": "$.seconds",
                    "ResultPath": None,
                    "Catch": [{"ErrorEquals": ["States.Timeout"], "ResultPath": None, "Next": "Done"}],
                    "Next": "Never",
                },
                "Never": {"Type": "Fail", "Error": "NotTimedOut"},
                "Done": {"Type": "Succeed"},
            },
        },
        set(),
    )
    slept: list[float] = []
    runner = asl.LocalAslStarter(lambda name, state: state, definition=definition, sleep=slept.append)
    execution = runner.run("x", {"seconds": 7, "file_id": "f"})
    assert execution.visited == ["Wait", "Done"] and execution.output == {"seconds": 7, "file_id": "f"}
    assert slept == [7.0]
    with pytest.raises(asl.ExecutionFailed, match=r"States\.Runtime"):  # AWS: not catchable
        runner.run("y", {"seconds": "soon"})


def test_every_task_retries_retryable_and_catches_into_mark_failed() -> None:
    states = json.loads(ASL.read_text())["States"]
    for name, st in states.items():
        if st["Type"] != "Task" or name == "MarkFailed":
            continue
        retry = next((r for r in st["Retry"] if "RetryableError" in r["ErrorEquals"]), st["Retry"][0])
        assert "RetryableError" in retry["ErrorEquals"] or name == "Finalize"
        assert retry["JitterStrategy"] == "FULL" and retry["BackoffRate"] >= 2
        assert st["Catch"][-1] == {
            "ErrorEquals": ["States.ALL"],
            "ResultPath": "$.error",
            "Next": "MarkFailed",
        }
        if st["Resource"] == asl.CALLBACK:
            assert st["Catch"][0]["ErrorEquals"] == ["States.Timeout"]  # the notice did not come: Ocr looks
        elif name == "Enrich":  # a timeout (the model outlasting the function) is enriched by extraction
            assert st["Catch"][0] == {
                "ErrorEquals": ["Sandbox.Timedout", "Lambda.Unknown", "States.Timeout"],
                "ResultPath": None,
                "Next": "UseExtraction",
            }
            assert st["Catch"][1]["ErrorEquals"] == ["PermanentError"]
        elif name != "Finalize":
            assert st["Catch"][0]["ErrorEquals"] == ["PermanentError"]


def test_throttling_is_waited_out_for_an_hour_not_turned_into_failures() -> None:
    """A burst against a rate-limited LLM or a busy Lambda pool: each stage keeps retrying with capped,
    jittered backoff for over an hour (worst case) before the file fails; timeouts and Lambda.Unknown
    (a function killed mid-invocation) are retried too."""
    states = json.loads(ASL.read_text())["States"]
    for name, st in states.items():
        if st["Type"] != "Task" or name == "MarkFailed":
            continue
        r = next(r for r in st["Retry"] if "Lambda.TooManyRequestsException" in r["ErrorEquals"])
        # a callback's timeout is caught instead (the test above): it means the notice did not come
        timeout = set() if st["Resource"] == asl.CALLBACK else {"States.Timeout"}
        retried = {e for retrier in st["Retry"] for e in retrier["ErrorEquals"]}
        # Sandbox.Timedout: how Lambda reports a function that ran past its timeout
        assert {"Lambda.Unknown", "Sandbox.Timedout", "Lambda.TooManyRequestsException", *timeout} <= retried
        delays = [
            min(r["IntervalSeconds"] * r["BackoffRate"] ** n, r.get("MaxDelaySeconds", 10**9))
            for n in range(r["MaxAttempts"])
        ]
        assert sum(delays) >= 3600, (name, sum(delays))
        assert max(delays) <= 900  # never a single wait of more than 15 minutes


def test_every_next_points_at_a_state_and_the_graph_terminates() -> None:
    states = json.loads(ASL.read_text())["States"]
    for st in states.values():
        targets = (
            [st.get("Next"), st.get("Default")]
            + [c["Next"] for c in st.get("Choices", [])]
            + [c["Next"] for c in st.get("Catch", [])]
        )
        assert all(t in states for t in targets if t)
        assert st.get("End") or st.get("Next") or st["Type"] in ("Choice", "Succeed", "Fail")


def test_unsupported_state_types_are_refused(tmp_path: Path) -> None:
    bad = {"StartAt": "M", "States": {"M": {"Type": "Map", "End": True}}}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="not supported"):
        asl.load_definition(path, frozenset(STAGES))


def test_unknown_resources_are_refused(tmp_path: Path) -> None:
    bad = {"StartAt": "X", "States": {"X": {"Type": "Task", "Resource": "${NopeFunctionArn}", "End": True}}}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="no local stage"):
        asl.load_definition(path, frozenset(STAGES))


@pytest.mark.parametrize(
    ("rule", "state", "expected"),
    [
        ({"Variable": "$.needs_ocr", "BooleanEquals": True}, {"needs_ocr": True}, True),
        ({"Variable": "$.needs_ocr", "BooleanEquals": True}, {"needs_ocr": False}, False),
        ({"Variable": "$.a.b", "StringEquals": "x"}, {"a": {"b": "x"}}, True),
        ({"Variable": "$.missing", "IsPresent": False}, {}, True),
        ({"Not": {"Variable": "$.f", "BooleanEquals": True}}, {"f": True}, False),
        (
            {"And": [{"Variable": "$.f", "BooleanEquals": True}, {"Variable": "$.g", "BooleanEquals": True}]},
            {"f": True, "g": False},
            False,
        ),
        (
            {"Or": [{"Variable": "$.f", "BooleanEquals": True}, {"Variable": "$.g", "BooleanEquals": True}]},
            {"f": True, "g": False},
            True,
        ),
    ],
)
def test_choice_rules(rule: dict[str, Any], state: dict[str, Any], expected: bool) -> None:
    assert choice_matches(rule, state) is expected


@pytest.mark.parametrize(
    ("state", "refused"),
    [
        ({"Type": "Task", "Resource": "${ExtractFunctionArn}", "InputPath": "$.x", "End": True}, "InputPath"),
        ({"Type": "Task", "Resource": "${ExtractFunctionArn}", "Parameters": {}, "End": True}, "Parameters"),
        ({"Type": "Task", "Resource": "${ExtractFunctionArn}", "ResultSelector": {}, "End": True}, "ResultSelector"),
        ({"Type": "Task", "Resource": "${ExtractFunctionArn}", "OutputPath": "$", "End": True}, "OutputPath"),
        ({"Type": "Task", "Resource": "${ExtractFunctionArn}", "TimeoutSeconds": 5, "End": True}, "TimeoutSeconds"),
        ({"Type": "Task", "Resource": "${ExtractFunctionArn}", "ResultPath": "$.a.b", "End": True}, "ResultPath"),
        ({"Type": "Pass", "Parameters": {}, "End": True}, "Parameters"),
        ({"Type": "Choice", "Choices": [{"Variable": "$.x", "StringMatches": "a*", "Next": "S"}]}, "Choice rule"),
    ],
)
def test_every_field_the_interpreter_does_not_implement_is_refused(
    tmp_path: Path, state: dict[str, Any], refused: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"StartAt": "S", "States": {"S": state}}))
    with pytest.raises(ValueError, match=refused):
        asl.load_definition(path, frozenset(STAGES))


def test_a_fail_state_fails_the_execution() -> None:
    definition = {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "Nope", "Cause": "scripted"}}}
    starter = asl.LocalAslStarter(lambda name, s: s, definition=asl.check_definition(definition, set()))
    with pytest.raises(asl.ExecutionFailed) as failed:
        starter.start("x", {})
    assert (failed.value.error, failed.value.cause) == ("Nope", "scripted")


def test_is_present_is_about_the_path_and_is_null_about_the_value() -> None:
    assert choice_matches({"Variable": "$.v", "IsPresent": True}, {"v": None}) is True
    assert choice_matches({"Variable": "$.v", "IsNull": True}, {"v": None}) is True
    assert choice_matches({"Variable": "$.v", "IsPresent": True}, {}) is False
    with pytest.raises(asl.ExecutionFailed, match=r"States\.Runtime"):  # a comparison on a missing path
        choice_matches({"Variable": "$.v", "BooleanEquals": True}, {})
