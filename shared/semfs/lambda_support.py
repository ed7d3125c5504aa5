"""What every Lambda handler shares: Powertools, one container per cold start, the task boundary."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics

from semfs.domain.access import claimed_groups
from semfs.domain.errors import PermanentError, RetryableError, SemfsError
from semfs.domain.tenants import is_tenant_id
from semfs.pipeline.stages.state import PipelineState

if TYPE_CHECKING:
    from semfs.ports import Container

# No Powertools Tracer: importing the X-Ray SDK costs ~190 ms of every cold start, and the
# functions' active tracing (template.yaml) already traces each invocation and its AWS calls' timing.
logger = Logger(service="semfs")
metrics = Metrics(namespace="semfs", service="semfs")


@cache
def get_container() -> Container:
    """Built once per execution environment, on the first invocation (adapters connect lazily)."""
    from semfs.bootstrap import build_container
    from semfs.config import Settings

    return build_container(Settings(backend="aws"))


def serve_api(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """One API request through the shared router, with this environment's container attached."""
    from semfs.api.app import app
    from semfs.deadlines import request_deadline

    method = ((event.get("requestContext") or {}).get("http") or {}).get("method")
    asked = {str(k).lower() for k in (event.get("headers") or {})}
    if method == "OPTIONS" and "access-control-request-method" in asked:
        # a CORS preflight (the template's OPTIONS route, no authorizer): nothing to read or check; API
        # Gateway answers with the API's CorsConfiguration headers and ignores any the function would send
        return {"statusCode": 204, "headers": {}, "body": ""}
    container = get_container()
    if event.get("rawPath") == "/mcp":
        return _serve_mcp(event, container)
    app.append_context(container=container)  # type: ignore[no-untyped-call]
    with request_deadline(container.settings.http.request_deadline_s):  # the calls it makes fit the request
        return app.resolve(event, context)


_MCP_HOSTS: list[Any] = []  # this execution environment's MCP transport, built on its first /mcp request


def _serve_mcp(event: dict[str, Any], container: Container) -> dict[str, Any]:
    """``/mcp`` in AWS: the MCP server over streamable HTTP (stateless, JSON answers: each POST a whole
    exchange, as Lambda needs), the tenant from the verified JWT claim as for every route, never a body."""
    from semfs.domain.features import OFF
    from semfs.mcp_server import McpOverHttp, wsgi_environ

    def refused(status: int, code: str, message: str) -> dict[str, Any]:
        body = json.dumps({"error": {"code": code, "message": message, "details": []}})  # the uniform body
        return {"statusCode": status, "headers": {"Content-Type": "application/json"}, "body": body}

    authorizer = (event.get("requestContext") or {}).get("authorizer") or {}
    claims = (authorizer.get("jwt") or {}).get("claims") or {}
    tenant = claims.get(container.settings.aws.tenant_claim)
    if not is_tenant_id(tenant):  # the one rule (domain/tenants.py), as for every route
        return refused(401, "unauthorized", "missing or invalid credentials")
    if not container.settings.features.mcp:
        return refused(503, "disabled", OFF["mcp"])
    if not _MCP_HOSTS:
        _MCP_HOSTS.append(McpOverHttp(container, container.settings.limits.max_file_bytes, host="0.0.0.0"))  # noqa: S104
    user = claims.get("email") or claims.get("cognito:username") or claims.get("username")
    groups = claimed_groups(claims.get("cognito:groups"))
    named = user if isinstance(user, str) else None
    status, headers, body = _MCP_HOSTS[0].answer(tenant, wsgi_environ(event), user=named, groups=groups)
    merged: dict[str, str] = {}
    for name, value in headers:
        merged[name] = f"{merged[name]}, {value}" if name in merged else value
    return {"statusCode": status, "headers": merged, "body": body.decode("utf-8"), "isBase64Encoded": False}


def continue_later(task: dict[str, Any]) -> None:
    """Queue the next pass of a maintenance task (the maintenance queue brings it back to its function)."""
    from semfs.adapters.aws.clients import client

    settings = get_container().settings
    if not settings.aws.maintenance_queue_url:
        logger.warning("no maintenance queue: the next scheduled pass goes on", task=task.get("task"))
        return
    client(settings, "sqs").send_message(QueueUrl=settings.aws.maintenance_queue_url, MessageBody=json.dumps(task))


@cache
def _idempotency_store(table: str, stage: str) -> Any:
    """One persistence layer per stage: Powertools sets the key prefix on the layer at each call
    (``configure``), so stages sharing one layer in one process could read each other's records."""
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    return DynamoDBPersistenceLayer(table_name=table)


def run_paid_stage(
    stage: Callable[[PipelineState, Container], PipelineState], event: dict[str, Any], context: Any
) -> dict[str, Any]:
    """``run_stage`` for stages that call a paid API (LLM, embeddings): a repeated delivery of the
    same file's task within the hour returns the recorded result instead of paying again. A failed
    run leaves no record, so Step Functions retries still run. The key is the file's attempt, not
    the file: a retry ("enrich again", a file retried after its key was fixed) is a new attempt and
    runs, where a key of tenant and file alone returned the last attempt's result for an hour; and
    enrichment by extraction after a timeout is a task of its own."""
    table = get_container().settings.aws.idempotency_table
    if not table:
        return run_stage(stage, event)
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function

    config = IdempotencyConfig(
        event_key_jmespath="[tenant_id, file_id, attempt, enrich_extractive]", expires_after_seconds=3600
    )
    config.register_lambda_context(context)  # an in-progress record expires with the invocation

    def once(state: dict[str, Any]) -> dict[str, Any]:
        return run_stage(stage, state)

    # one key per stage and file: enrich and embed of the same file are different payments
    guarded = idempotent_function(
        once,
        data_keyword_argument="state",
        persistence_store=_idempotency_store(table, stage.__module__),
        config=config,
        key_prefix=f"semfs.{stage.__module__}",
    )
    result: dict[str, Any] = guarded(state=event)
    return result


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
