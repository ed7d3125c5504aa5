"""``LocalAslStarter``: executes ``statemachine/process_file.asl.json`` in-process.

The same definition SAM deploys orders the stages locally; this interpreter implements the part of
the Amazon States Language that definition uses (Task with Retry/Catch/ResultPath, Choice, Wait,
Pass, Succeed, Fail) and refuses a definition using anything else, so the two cannot silently diverge.
Task resources ``${XxxFunctionArn}`` map to the stage functions in ``STAGES``.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from semfs.domain.errors import family_name
from semfs.observability import get_logger
from semfs.pipeline import embed, enrich, extract, finalize, index, ocr
from semfs.pipeline.state import PipelineState

if TYPE_CHECKING:
    from semfs.bootstrap import Container

log = get_logger(__name__)

STAGES: dict[str, Callable[[PipelineState, Container], PipelineState]] = {
    "Extract": extract.run,
    "Ocr": ocr.run,
    "Enrich": enrich.run,
    "Embed": embed.run,
    "Index": index.run,
    "Finalize": finalize.run,
    "MarkFailed": finalize.mark_failed,
}
SUPPORTED = {"Task", "Choice", "Wait", "Pass", "Succeed", "Fail"}
_RESOURCE = re.compile(r"^\$\{(\w+)FunctionArn\}$")


def definition_path() -> Path:
    """The ASL file: beside the package in a source checkout (``statemachine/``)."""
    return Path(__file__).resolve().parents[3] / "statemachine" / "process_file.asl.json"


@cache
def load_definition(path: Path | None = None) -> dict[str, Any]:
    definition: dict[str, Any] = json.loads((path or definition_path()).read_text(encoding="utf-8"))
    for name, st in definition["States"].items():
        if st["Type"] not in SUPPORTED:
            raise ValueError(f"state {name}: type {st['Type']} is not supported by the local runner")
        if st["Type"] == "Task":
            m = _RESOURCE.match(st["Resource"])
            if not m or m.group(1) not in STAGES:
                raise ValueError(f"state {name}: resource {st['Resource']} has no local stage")
    return definition


def _set_path(state: dict[str, Any], path: str | None, value: Any) -> dict[str, Any]:
    if path is None or path == "$":
        return value if isinstance(value, dict) else {"value": value}
    if not path.startswith("$."):
        raise ValueError(f"unsupported ResultPath {path}")
    out = dict(state)
    out[path[2:]] = value
    return out


def _get(state: dict[str, Any], path: str) -> Any:
    cur: Any = state
    for part in path.removeprefix("$.").split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _choice_matches(rule: dict[str, Any], state: dict[str, Any]) -> bool:
    if "And" in rule:
        return all(_choice_matches(r, state) for r in rule["And"])
    if "Or" in rule:
        return any(_choice_matches(r, state) for r in rule["Or"])
    if "Not" in rule:
        return not _choice_matches(rule["Not"], state)
    value = _get(state, rule["Variable"])
    if "BooleanEquals" in rule:
        return value is rule["BooleanEquals"]
    if "StringEquals" in rule:
        return bool(value == rule["StringEquals"])
    if "IsPresent" in rule:
        return (value is not None) is rule["IsPresent"]
    raise ValueError(f"unsupported Choice rule {sorted(rule)}")


def _matches(names: list[str], error: str) -> bool:
    return error in names or "States.ALL" in names


class LocalAslStarter:
    """Runs an execution to completion in this process and returns the final state."""

    def __init__(self, container: Container, sleep: Callable[[float], None] = time.sleep) -> None:
        self._c = container
        self._sleep = sleep

    def start(self, name: str, state: dict[str, Any]) -> dict[str, Any] | None:
        definition = load_definition()
        current = definition["StartAt"]
        data = dict(state)
        log.info("execution started", execution=name, file_id=data.get("file_id"))
        while True:
            st = definition["States"][current]
            match st["Type"]:
                case "Succeed":
                    return data
                case "Fail":
                    return data
                case "Wait":
                    seconds = st.get("Seconds", _get(data, st["SecondsPath"]) if "SecondsPath" in st else 0)
                    self._sleep(float(seconds or 0) * self._c.settings.retry_scale)
                case "Pass":
                    data = _set_path(data, st.get("ResultPath", "$"), st.get("Result", data))
                case "Choice":
                    nxt = next((r["Next"] for r in st["Choices"] if _choice_matches(r, data)), st.get("Default"))
                    if nxt is None:
                        raise RuntimeError(f"States.NoChoiceMatched in {current}")
                    current = nxt
                    continue
                case "Task":
                    outcome = self._run_task(current, st, data)
                    if isinstance(outcome, tuple):  # caught: (next state, new data)
                        current, data = outcome
                        continue
                    data = outcome
            if st.get("End"):
                return data
            current = st["Next"]

    def _run_task(self, name: str, st: dict[str, Any], data: dict[str, Any]) -> Any:
        m = _RESOURCE.match(st["Resource"])
        assert m is not None
        fn = STAGES[m.group(1)]
        attempts: dict[int, int] = {}
        while True:
            try:
                result = fn(PipelineState.model_validate(data), self._c)
                return _set_path(data, st.get("ResultPath", "$"), result.model_dump(mode="json"))
            except Exception as e:
                error = family_name(e)
                retriers = st.get("Retry", [])
                i = next((n for n, r in enumerate(retriers) if _matches(r["ErrorEquals"], error)), None)
                if i is not None:
                    attempts[i] = attempts.get(i, 0) + 1
                    if attempts[i] <= retriers[i].get("MaxAttempts", 3):
                        delay = retriers[i].get("IntervalSeconds", 1) * retriers[i].get("BackoffRate", 2.0) ** (
                            attempts[i] - 1
                        )
                        if retriers[i].get("JitterStrategy") == "FULL":
                            delay = random.uniform(0, delay)
                        log.info("task retry", state=name, error=error, attempt=attempts[i])
                        self._sleep(delay * self._c.settings.retry_scale)
                        continue
                for catcher in st.get("Catch", []):
                    if _matches(catcher["ErrorEquals"], error):
                        payload = {"Error": error, "Cause": json.dumps({"errorType": error})}
                        return catcher["Next"], _set_path(data, catcher.get("ResultPath", "$"), payload)
                raise
