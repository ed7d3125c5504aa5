"""EventBridge schedule → re-embed files with the configured model; switch when all are done."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import get_container, logger, metrics
from semfs.pipeline.reembed import reembed


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    progress = reembed(get_container(), limit=int(event.get("limit", 500)))
    metrics.add_metric(name="FilesReembedded", unit="Count", value=progress["done"])
    logger.info("re-embed pass", **progress)
    return progress
