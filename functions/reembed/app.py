"""The maintenance function: a re-embed or reconcile pass, or a tenant's erasure
(``pipeline/maintenance/passes.py`` says which and how). Started by EventBridge Scheduler, by its own
continuation from the maintenance queue, or by an administrator's ``aws lambda invoke``.
"""

import json
import time
from typing import Any

from aws_lambda_powertools.utilities.data_classes import SQSEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import continue_later, get_container, logger, metrics
from semfs.pipeline.maintenance.passes import maintenance_pass

MARGIN_S = 60  # left for the switch, the progress write and queueing the continuation


@logger.inject_lambda_context
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    # a continuation arrives from the queue (a batch of one); the schedule's rule and a person invoke it directly
    records = list(SQSEvent(event).records) if "Records" in event else []
    task = json.loads(records[0].body) if records else event
    deadline = time.monotonic() + context.get_remaining_time_in_millis() / 1000 - MARGIN_S
    done = maintenance_pass(get_container(), task, deadline)
    for name, value in done.metrics.items():
        metrics.add_metric(name=name, unit="Count", value=value)
    if done.continue_with is not None:
        continue_later(done.continue_with)
    return done.report
