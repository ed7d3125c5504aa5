"""What every Lambda handler shares: Powertools, one container per cold start, the task boundary."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics, Tracer

from semfs.domain.errors import PermanentError, RetryableError, SemfsError
from semfs.pipeline.state import PipelineState

if TYPE_CHECKING:
    from semfs.bootstrap import Container

logger = Logger(service="semfs")
tracer = Tracer(service="semfs")
metrics = Metrics(namespace="semfs", service="semfs")


@cache
def get_container() -> Container:
    """Built once per execution environment, on the first invocation (adapters connect lazily)."""
    from semfs.bootstrap import build_container
    from semfs.config import Settings

    return build_container(Settings(backend="aws"))


def run_stage(stage: Callable[[PipelineState, Container], PipelineState], event: dict[str, Any]) -> dict[str, Any]:
    """The Step Functions task boundary. The ASL's ``ErrorEquals`` matches the raised class name
    exactly, so a leaf error is re-raised as its family with the outcome code in the message."""
    state = PipelineState.model_validate(event)
    logger.append_keys(file_id=state.file_id, tenant_id=state.tenant_id)
    try:
        return stage(state, get_container()).model_dump(mode="json")
    except RetryableError as e:
        if type(e) is RetryableError:
            raise
        raise RetryableError(f"{e.outcome.value}: {e.reason}", outcome=e.outcome) from e
    except PermanentError as e:
        if type(e) is PermanentError:
            raise
        raise PermanentError(f"{e.outcome.value}: {e.reason}", outcome=e.outcome) from e
    except SemfsError as e:
        raise PermanentError(f"{e.outcome.value}: {e.reason}", outcome=e.outcome) from e
