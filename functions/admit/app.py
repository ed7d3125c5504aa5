"""The admission gate's consumer: files that waited for a slot (SQS), and executions that closed
(EventBridge "Step Functions Execution Status Change"), each of which frees its slot."""

import json
from typing import Any

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes import EventBridgeEvent
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import get_container, logger
from semfs.pipeline.intake.executions import admit_waiting, execution_ended

processor = BatchProcessor(event_type=EventType.SQS)
STATUS_CHANGE = "Step Functions Execution Status Change"


def handle_record(record: SQSRecord) -> None:
    body = json.loads(record.body)
    admit_waiting(get_container(), body["name"], body["state"])


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any] | None:
    if event.get("detail-type") == STATUS_CHANGE:  # EventBridge; else an SQS batch
        detail = EventBridgeEvent(event).detail
        execution_ended(get_container(), detail["name"], json.loads(detail.get("input") or "{}"), detail["status"])
        return None
    return process_partial_response(event=event, record_handler=handle_record, processor=processor, context=context)
