"""boto3 clients, created on first use (never at import time) and translated errors."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import Any

from semfs.config import Settings
from semfs.domain.errors import RetryableError

# Error codes that mean "try again later" across the services semfs calls.
RETRYABLE_CODES = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestLimitExceeded",
        "SlowDown",
        "ProvisionedThroughputExceededException",
        "RequestThrottled",
        "TooManyRequestsException",
        "InternalError",
        "InternalServerError",
        "ServiceUnavailable",
        "ServiceUnavailableException",
        "LimitExceededException",
        "TransactionInProgressException",
        "RequestTimeout",
        "RequestTimeoutException",
    }
)


@cache
def _session_client(service: str, region: str | None, endpoint: str | None) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(retries={"mode": "standard", "max_attempts": 5}, connect_timeout=5, read_timeout=30)
    if service == "s3":
        # presigned links and upload forms: botocore signed them with SigV2 on the global endpoint, which
        # buckets created since June 2020 refuse; SigV4 for the bucket's region, on that region's endpoint
        # (us-east-1's included), in virtual-hosted style (tests/contract/test_s3_presigning.py)
        config = config.merge(
            Config(
                signature_version="s3v4",
                # (an emulator's endpoint, in tests, is addressed by path: it has no bucket subdomains)
                s3={"addressing_style": "path" if endpoint else "virtual", "us_east_1_regional_endpoint": "regional"},
            )
        )
    return boto3.client(service, region_name=region, endpoint_url=endpoint, config=config)


def paginate(call: Callable[..., Any], op: str, kwargs: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every item of a DynamoDB query/scan, page after page (``LastEvaluatedKey`` → ``ExclusiveStartKey``)."""
    kwargs = dict(kwargs)
    while True:
        page = call(op, **kwargs)
        yield from page.get("Items", [])
        if "LastEvaluatedKey" not in page:
            return
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def delete_keys(call: Callable[..., Any], table: str, keys: Sequence[dict[str, Any]]) -> int:
    """Delete the items with these keys, 25 a request (``BatchWriteItem``'s limit), sending again what
    DynamoDB left unprocessed (throttled) with a growing pause; how many were sent."""
    return _batch_write(call, table, [{"DeleteRequest": {"Key": k}} for k in keys])


def put_items(call: Callable[..., Any], table: str, items: Sequence[dict[str, Any]]) -> int:
    """Write these items unconditionally, 25 a request, as ``delete_keys`` deletes; how many were sent."""
    return _batch_write(call, table, [{"PutRequest": {"Item": i}} for i in items])


def _batch_write(call: Callable[..., Any], table: str, requests: Sequence[dict[str, Any]]) -> int:
    for i in range(0, len(requests), 25):
        pending: dict[str, Any] = {table: list(requests[i : i + 25])}
        for attempt in range(10):
            pending = call("batch_write_item", RequestItems=pending).get("UnprocessedItems") or {}
            if not pending:
                break
            time.sleep(min(0.05 * 2**attempt, 5))
        else:
            raise RetryableError(f"dynamodb batch write: {len(pending.get(table, []))} item(s) still unprocessed")
    return len(requests)


def client(settings: Settings, service: str) -> Any:
    return _session_client(service, settings.aws.region, settings.aws.endpoint_url)


def call(settings: Settings, service: str, op: str, what: str, **kwargs: Any) -> Any:
    """One SDK call: throttling and connection trouble raise ``RetryableError``; any other ``ClientError``
    is raised as it is, for the caller to read its code."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return getattr(client(settings, service), op)(**kwargs)
    except (ClientError, BotoCoreError) as e:
        if is_retryable(e):
            raise retryable(e, what) from e
        raise


def error_code(error: Exception) -> str:
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


def is_retryable(error: Exception) -> bool:
    from botocore.exceptions import ConnectionError as BotoConnectionError
    from botocore.exceptions import ReadTimeoutError

    return error_code(error) in RETRYABLE_CODES or isinstance(error, BotoConnectionError | ReadTimeoutError)


def retryable(error: Exception, what: str) -> RetryableError:
    return RetryableError(f"{what}: {error_code(error) or type(error).__name__}")
