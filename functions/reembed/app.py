"""The maintenance passes: re-embed (switch when all files are done) or reconcile.

EventBridge Scheduler starts a pass. A re-embed pass runs until its invocation is nearly out of time,
then, if files remain, queues its own continuation in the maintenance queue (the SQS event source brings
it back here), so a model change over a million files goes on pass after pass instead of stopping at the
first 900 s; each pass resumes from what is staged (``pipeline/reembed.py``).
"""

import json
import time
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import continue_later, get_container, logger, metrics
from semfs.pipeline.reconcile import reconcile
from semfs.pipeline.reembed import reembed

MARGIN_S = 60  # left for the switch, the progress write and queueing the continuation


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    records = event.get("Records") or []
    if records:  # a continuation from the maintenance queue (batch size 1)
        event = json.loads(records[0]["body"])
    if event.get("task") == "reconcile":
        report = reconcile(get_container())
        metrics.add_metric(name="DriftFound", unit="Count", value=sum(v["found"] for v in report.values()))
        return report
    budget_s = context.get_remaining_time_in_millis() / 1000 - MARGIN_S
    progress = reembed(get_container(), limit=event.get("limit"), deadline=time.monotonic() + budget_s)
    metrics.add_metric(name="FilesReembedded", unit="Count", value=progress["done"])
    logger.info("re-embed pass", **progress)
    if progress["remaining"] and progress["done"]:
        continue_later({"task": "reembed", **({"limit": event["limit"]} if event.get("limit") else {})})
        progress["continued"] = True
    return progress
