"""``LocalAslStarter``: executes the packaged ``process_file.asl.json`` in-process.

The same definition SAM deploys orders the stages locally. This interpreter implements exactly the
part of the Amazon States Language that definition uses and refuses, when the definition is loaded,
every state type, field or Choice operator it does not implement — so the deployed definition cannot
quietly mean something else here. A differential test runs scripted stages through this interpreter
and through moto's (ported from LocalStack) and compares the states visited and the final state.

What it implements, per state type:
- Task: ``Resource`` (``${XxxFunctionArn}``, dispatched to a stage by name), ``ResultPath``, ``Retry``
  (``ErrorEquals``, ``IntervalSeconds``, ``MaxAttempts``, ``BackoffRate``, ``MaxDelaySeconds``,
  ``JitterStrategy``), ``Catch`` (``ErrorEquals``, ``Next``, ``ResultPath``).
- Choice: ``Choices`` with ``And``/``Or``/``Not`` and ``BooleanEquals``, ``StringEquals``,
  ``NumericEquals``, ``IsPresent``, ``IsNull`` on a ``Variable``; ``Default``.
- Wait: ``Seconds`` or ``SecondsPath``. Pass: ``Result``, ``ResultPath``. Succeed. Fail: ``Error``,
  ``Cause`` (the execution fails: ``ExecutionFailed`` is raised).
- A callback Task (``arn:aws:states:::lambda:invoke.waitForTaskToken``, with ``Parameters``
  ``FunctionName``/``Payload`` and ``TimeoutSeconds`` or ``TimeoutSecondsPath``): nothing outside this
  process can hand a task token back, and no local engine starts a job that would, so the step waits
  out its timeout and fails with ``States.Timeout`` — what a notice that never comes does in AWS. Its
  function is not called.
``InputPath``, ``ResultSelector``, ``OutputPath``, ``Parameters`` on a plain Task and the rest are
refused: the stages read and return the whole state, so the definition has no use for them yet.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from semfs.domain.errors import PermanentError, family_name
from semfs.domain.outcomes import Outcome
from semfs.observability import get_logger

log = get_logger(__name__)

# A stage by its resource name ("Extract" for ${ExtractFunctionArn}): state in, state out.
Dispatch = Callable[[str, dict[str, Any]], dict[str, Any]]

_COMMON = {"Type", "Comment", "Next", "End"}
FIELDS: dict[str, set[str]] = {
    "Task": _COMMON | {"Resource", "ResultPath", "Retry", "Catch"},
    "Callback": _COMMON
    | {"Resource", "ResultPath", "Retry", "Catch", "Parameters", "TimeoutSeconds", "TimeoutSecondsPath"},
    "Choice": {"Type", "Comment", "Choices", "Default"},
    "Wait": _COMMON | {"Seconds", "SecondsPath"},
    "Pass": _COMMON | {"Result", "ResultPath"},
    "Succeed": {"Type", "Comment"},
    "Fail": {"Type", "Comment", "Error", "Cause"},
}
RETRY_FIELDS = {"ErrorEquals", "IntervalSeconds", "MaxAttempts", "BackoffRate", "MaxDelaySeconds", "JitterStrategy"}
CATCH_FIELDS = {"ErrorEquals", "Next", "ResultPath"}
COMPARISONS = {"BooleanEquals", "StringEquals", "NumericEquals", "IsPresent", "IsNull"}
_RESOURCE = re.compile(r"^\$\{(\w+)FunctionArn\}$")
CALLBACK = "arn:aws:states:::lambda:invoke.waitForTaskToken"
_MISSING = object()


class ExecutionFailed(PermanentError):
    """The execution ended in a ``Fail`` state, or a task error no catcher took."""

    def __init__(self, error: str, cause: str = "") -> None:
        super().__init__(f"execution failed: {error}", outcome=Outcome.FAILED_INTERNAL)
        self.error = error
        self.cause = cause


class TaskTimedOut(Exception):
    """A callback step whose token did not come back in its timeout (``States.Timeout``)."""


def default_definition_path() -> Path:
    """The packaged ASL (``semfs/statemachine/``): present in a checkout and in an installed wheel."""
    return Path(str(resources.files("semfs").joinpath("statemachine", "process_file.asl.json")))


def _refuse_unknown(where: str, given: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(given) - allowed)
    if extra:
        raise ValueError(f"{where}: {', '.join(extra)} not supported by the local runner")


def _check_rule(where: str, rule: dict[str, Any], top: bool) -> None:
    if "And" in rule or "Or" in rule:
        op = "And" if "And" in rule else "Or"
        _refuse_unknown(where, rule, {op, "Next"} if top else {op})
        for r in rule[op]:
            _check_rule(where, r, top=False)
        return
    if "Not" in rule:
        _refuse_unknown(where, rule, {"Not", "Next"} if top else {"Not"})
        _check_rule(where, rule["Not"], top=False)
        return
    ops = set(rule) - {"Variable", "Next"}
    if "Variable" not in rule or len(ops) != 1 or not ops <= COMPARISONS:
        raise ValueError(f"{where}: Choice rule {sorted(rule)} not supported by the local runner")
    if top and "Next" not in rule:
        raise ValueError(f"{where}: a top-level Choice rule needs Next")


def check_definition(definition: dict[str, Any], stages: set[str]) -> dict[str, Any]:
    """Refuse what this interpreter does not implement; returns the definition unchanged."""
    _refuse_unknown("definition", definition, {"Comment", "StartAt", "States", "TimeoutSeconds", "Version"})
    if "TimeoutSeconds" in definition:
        raise ValueError("definition: TimeoutSeconds not supported by the local runner")
    states = definition["States"]
    if definition["StartAt"] not in states:
        raise ValueError(f"StartAt {definition['StartAt']} is not a state")
    for name, st in states.items():
        _check_state(name, st, states, stages)
    return definition


def _check_state(name: str, st: dict[str, Any], states: dict[str, Any], stages: set[str]) -> None:
    """One state: a type and fields the runner knows, targets that are states, a resource it can run."""
    kind = st.get("Type")
    if kind not in FIELDS or kind == "Callback":
        raise ValueError(f"state {name}: type {kind} is not supported by the local runner")
    callback = kind == "Task" and st.get("Resource") == CALLBACK
    _refuse_unknown(f"state {name}", st, FIELDS["Callback" if callback else kind])
    for target in [st.get("Next"), st.get("Default")]:
        if target is not None and target not in states:
            raise ValueError(f"state {name}: Next {target} is not a state")
    if callback:
        if not _RESOURCE.match(st.get("Parameters", {}).get("FunctionName", "")):
            raise ValueError(f"state {name}: a callback names its function as ${{XxxFunctionArn}}")
        if ("TimeoutSeconds" in st) == ("TimeoutSecondsPath" in st):
            raise ValueError(f"state {name}: a callback needs one of TimeoutSeconds, TimeoutSecondsPath")
    elif kind == "Task":
        m = _RESOURCE.match(st["Resource"])
        if not m or m.group(1) not in stages:
            raise ValueError(f"state {name}: resource {st['Resource']} has no local stage")
    if kind == "Task":
        _check_task_errors(name, st, states)
    if kind == "Choice":
        for rule in st["Choices"]:
            _check_rule(f"state {name}", rule, top=True)
    path = st.get("ResultPath")
    if path is not None and not re.fullmatch(r"\$(\.\w+)?", path):
        raise ValueError(f"state {name}: ResultPath {path} not supported by the local runner")


def _check_task_errors(name: str, st: dict[str, Any], states: dict[str, Any]) -> None:
    """A task's Retry and Catch: fields the runner implements, catchers that lead to a state."""
    for r in st.get("Retry", []):
        _refuse_unknown(f"state {name} Retry", r, RETRY_FIELDS)
        if r.get("JitterStrategy", "NONE") not in ("FULL", "NONE"):
            raise ValueError(f"state {name}: JitterStrategy {r['JitterStrategy']} not supported")
    for catcher in st.get("Catch", []):
        _refuse_unknown(f"state {name} Catch", catcher, CATCH_FIELDS)
        if catcher["Next"] not in states:
            raise ValueError(f"state {name}: Catch Next {catcher['Next']} is not a state")


@cache
def load_definition(path: Path | None = None, stages: frozenset[str] | None = None) -> dict[str, Any]:
    definition: dict[str, Any] = json.loads((path or default_definition_path()).read_text(encoding="utf-8"))
    if stages is None:
        stages = frozenset(
            m.group(1)
            for st in definition["States"].values()
            if st.get("Type") == "Task" and (m := _RESOURCE.match(st.get("Resource", "")))
        )
    return check_definition(definition, set(stages))


def _set_path(state: dict[str, Any], path: str | None, value: Any) -> dict[str, Any]:
    if path is None:  # "ResultPath": null: the result is discarded, the input goes on
        return state
    if path == "$":
        return value if isinstance(value, dict) else {"value": value}
    out = dict(state)
    out[path[2:]] = value
    return out


def _get(state: dict[str, Any], path: str) -> Any:
    if path == "$":
        return state
    cur: Any = state
    for part in path.removeprefix("$.").split("."):
        if not isinstance(cur, dict) or part not in cur:
            return _MISSING
        cur = cur[part]
    return cur


def choice_matches(rule: dict[str, Any], state: dict[str, Any]) -> bool:
    """One Choice rule, with ASL's semantics: a comparison on a missing path is false; ``IsPresent``
    is about the path, so a ``null`` value is present; ``IsNull`` is about the value."""
    if "And" in rule:
        return all(choice_matches(r, state) for r in rule["And"])
    if "Or" in rule:
        return any(choice_matches(r, state) for r in rule["Or"])
    if "Not" in rule:
        return not choice_matches(rule["Not"], state)
    value = _get(state, rule["Variable"])
    if "IsPresent" in rule:
        return (value is not _MISSING) is rule["IsPresent"]
    if value is _MISSING:
        raise ExecutionFailed("States.Runtime", f"Invalid path '{rule['Variable']}': no such path in the input")
    if "IsNull" in rule:
        return (value is None) is rule["IsNull"]
    if "BooleanEquals" in rule:
        return value is rule["BooleanEquals"]
    if "StringEquals" in rule:
        return isinstance(value, str) and value == rule["StringEquals"]
    if "NumericEquals" in rule:
        return isinstance(value, int | float) and not isinstance(value, bool) and value == rule["NumericEquals"]
    raise AssertionError(rule)  # check_definition refused every other operator


def _matches(names: list[str], error: str) -> bool:
    return error in names or ("States.ALL" in names and not error.startswith("States.Runtime"))


@dataclass
class Execution:
    """What one run did: the states entered in order, and the final state."""

    visited: list[str] = field(default_factory=list)
    output: dict[str, Any] | None = None


class LocalAslStarter:
    """Runs an execution to completion in this process and returns the final state."""

    def __init__(
        self,
        dispatch: Dispatch,
        *,
        definition: dict[str, Any] | None = None,
        retry_scale: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._dispatch = dispatch
        self._definition = definition
        self._retry_scale = retry_scale
        self._sleep = sleep
        self._in_progress: set[str] = set()  # names being run now, by any thread

    def start(self, name: str, state: dict[str, Any]) -> dict[str, Any] | None:
        self._in_progress.add(name)
        try:
            return self.run(name, state).output
        finally:
            self._in_progress.discard(name)

    def running(self, name: str) -> bool:
        return name in self._in_progress

    def close(self) -> None:
        return None  # runs in the caller's thread: nothing to stop

    def run(self, name: str, state: dict[str, Any]) -> Execution:
        definition = self._definition or load_definition()
        current = definition["StartAt"]
        data = dict(state)
        execution = Execution()
        log.info("execution started", execution=name, file_id=data.get("file_id"))
        while True:
            execution.visited.append(current)
            st = definition["States"][current]
            match st["Type"]:
                case "Succeed":
                    execution.output = data
                    return execution
                case "Fail":
                    raise ExecutionFailed(st.get("Error", "States.Fail"), st.get("Cause", ""))
                case "Wait":
                    seconds = st["Seconds"] if "Seconds" in st else _get(data, st["SecondsPath"])
                    if not isinstance(seconds, int | float) or seconds < 0:
                        raise ExecutionFailed("States.Runtime", "SecondsPath is not a non-negative number")
                    self._sleep(float(seconds) * self._retry_scale)
                case "Pass":
                    data = _set_path(data, st.get("ResultPath", "$"), st.get("Result", data))
                case "Choice":
                    nxt = next((r["Next"] for r in st["Choices"] if choice_matches(r, data)), st.get("Default"))
                    if nxt is None:
                        raise ExecutionFailed("States.NoChoiceMatched", f"no Choice rule matched in {current}")
                    current = nxt
                    continue
                case "Task":
                    outcome = self._run_task(current, st, data)
                    if isinstance(outcome, tuple):  # caught: (next state, new data)
                        current, data = outcome
                        continue
                    data = outcome
            if st.get("End"):
                execution.output = data
                return execution
            current = st["Next"]

    def _attempt(self, st: dict[str, Any], data: dict[str, Any]) -> Any:
        if st["Resource"] == CALLBACK:  # no one here hands the token back: the step times out
            seconds = st["TimeoutSeconds"] if "TimeoutSeconds" in st else _get(data, st["TimeoutSecondsPath"])
            if not isinstance(seconds, int) or seconds < 1:
                raise ExecutionFailed("States.Runtime", "TimeoutSecondsPath is not a positive integer")
            self._sleep(float(seconds) * self._retry_scale)
            raise TaskTimedOut(f"no task token came back in {seconds} s")
        m = _RESOURCE.match(st["Resource"])
        assert m is not None
        return self._dispatch(m.group(1), data)

    def _run_task(self, name: str, st: dict[str, Any], data: dict[str, Any]) -> Any:
        attempts: dict[int, int] = {}
        while True:
            try:
                return _set_path(data, st.get("ResultPath", "$"), self._attempt(st, data))
            except ExecutionFailed:
                raise  # States.Runtime: no retrier or catcher takes it
            except Exception as e:
                error = "States.Timeout" if isinstance(e, TaskTimedOut) else family_name(e)
                retriers = st.get("Retry", [])
                i = next((n for n, r in enumerate(retriers) if _matches(r["ErrorEquals"], error)), None)
                if i is not None:
                    attempts[i] = attempts.get(i, 0) + 1
                    r = retriers[i]
                    if attempts[i] <= r.get("MaxAttempts", 3):
                        delay = r.get("IntervalSeconds", 1) * r.get("BackoffRate", 2.0) ** (attempts[i] - 1)
                        delay = min(delay, r.get("MaxDelaySeconds", delay))
                        if r.get("JitterStrategy") == "FULL":
                            delay = random.uniform(0, delay)
                        log.info("task retry", state=name, error=error, attempt=attempts[i])
                        self._sleep(delay * self._retry_scale)
                        continue
                for catcher in st.get("Catch", []):
                    if _matches(catcher["ErrorEquals"], error):
                        payload = {"Error": error, "Cause": json.dumps({"errorType": error})}
                        return catcher["Next"], _set_path(data, catcher.get("ResultPath", "$"), payload)
                raise
