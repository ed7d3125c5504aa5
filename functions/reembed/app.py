"""EventBridge schedules → the maintenance passes: re-embed (switch when all files are done) or reconcile."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import get_container, logger, metrics
from semfs.pipeline.reconcile import reconcile
from semfs.pipeline.reembed import reembed


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    if event.get("task") == "reconcile":
        report = reconcile(get_container())
        metrics.add_metric(name="DriftFound", unit="Count", value=sum(v["found"] for v in report.values()))
        return report
    progress = reembed(get_container(), limit=int(event.get("limit", 500)))
    metrics.add_metric(name="FilesReembedded", unit="Count", value=progress["done"])
    logger.info("re-embed pass", **progress)
    return progress
