"""The meeting point of an execution waiting on a Textract job and the job's end.

Two callers: the state machine's ``WaitForOcrNotice`` step (``{"job_id", "token"}``: the step's task
token, recorded until the job ends), and Textract's completion notice on the SNS topic the Ocr stage
named when it started the job. Whichever comes second resumes the execution (``SendTaskSuccess``).
"""

import json
from typing import Any

from aws_lambda_powertools.utilities.data_classes import SNSEvent
from aws_lambda_powertools.utilities.parser import BaseModel, parse
from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import get_container, logger
from semfs.pipeline.stages.ocr import job_ended, job_waiting


class WaitingStep(BaseModel):
    """What the state machine's WaitForOcrNotice step sends: the Textract job and the step's task token."""

    job_id: str
    token: str


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> None:
    if "token" in event:
        step = parse(event=event, model=WaitingStep)
        job_waiting(get_container(), step.job_id, step.token)
        return
    for record in SNSEvent(event).records if "Records" in event else []:  # SNS: one notice per record
        notice = json.loads(record.sns.message)
        job_ended(get_container(), str(notice["JobId"]), str(notice.get("Status", "")))
