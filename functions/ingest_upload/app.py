"""SQS (S3 events under uploads/{tenant}/) → register and process created objects, delete removed ones.

Partial batch failures: a record that fails is retried by SQS (then its DLQ); the others are done.
"""

import json
from typing import Any
from urllib.parse import unquote_plus

from aws_lambda_powertools.utilities.batch import BatchProcessor, EventType, process_partial_response
from aws_lambda_powertools.utilities.data_classes import S3Event
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import get_container, logger
from semfs.pipeline.intake.sources import delete_s3_object, ingest_s3_object

processor = BatchProcessor(event_type=EventType.SQS)


def handle_record(record: SQSRecord) -> None:
    notice = S3Event(json.loads(record.body))  # the S3 notification SQS carries, as Powertools types it
    if "Records" not in notice:  # an s3:TestEvent has none
        return
    for s3 in notice.records:
        obj = s3.s3.get_object
        key = unquote_plus(obj.key)  # keys arrive URL-encoded in S3 notifications
        if s3.event_name.startswith("ObjectRemoved"):
            delete_s3_object(get_container(), key)
        else:
            ingest_s3_object(get_container(), key, obj.size, obj.version_id)


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return process_partial_response(event=event, record_handler=handle_record, processor=processor, context=context)
