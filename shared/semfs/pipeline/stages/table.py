"""The stage table: the ASL's Task resources (``${ExtractFunctionArn}`` → ``Extract``) to stage functions.

The Lambda handlers call these one by one in AWS; locally the composition root hands ``dispatch`` to the
in-process ASL interpreter, so both run the same functions in the order one definition gives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from semfs.pipeline.stages import embed, enrich, extract, finalize, index, ocr
from semfs.pipeline.stages.state import PipelineState

if TYPE_CHECKING:
    from semfs.ports import Container


StageFn = Callable[[PipelineState, "Container"], PipelineState]


STAGES: dict[str, StageFn] = {
    "Extract": extract.run,
    "Ocr": ocr.run,
    "Enrich": enrich.run,
    "Embed": embed.run,
    "Index": index.run,
    "Finalize": finalize.run,
    "MarkFailed": finalize.mark_failed,
}


def dispatch(container: Container) -> Callable[[str, dict[str, Any]], dict[str, Any]]:
    """``(resource, state) → state`` over the stage table, for the local interpreter, running each stage
    with ``container`` (the root's bundle, whose starter the stages never use)."""

    def run(resource: str, state: dict[str, Any]) -> dict[str, Any]:
        return STAGES[resource](PipelineState.model_validate(state), container).model_dump(mode="json")

    return run
