"""EventBridge schedule → re-embed files whose vectors are from another model than the configured one."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import get_container, logger, metrics
from semfs.pipeline.manage import reembed_stale


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    progress = reembed_stale(get_container(), limit=int(event.get("limit", 500)))
    metrics.add_metric(name="FilesReembedded", unit="Count", value=progress["reembedded"])
    logger.info("re-embed pass", **progress)
    return progress
