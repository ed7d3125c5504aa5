"""SES receipt rule (LambdaAction, Event) → the raw MIME the S3Action stored → attachments ingested."""

from typing import Any

from aws_lambda_powertools.utilities.data_classes import SESEvent
from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import get_container, logger
from semfs.pipeline.intake.sources import ingest_ses_message


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    ses = SESEvent(event)
    files = []
    for record in ses.records:
        mail, receipt = record.ses.mail, record.ses.receipt
        verdicts = {
            "spam": receipt.spam_verdict.status,
            "virus": receipt.virus_verdict.status,
            "spf": receipt.spf_verdict.status,
            "dkim": receipt.dkim_verdict.status,
            "dmarc": receipt.dmarc_verdict.status,
        }
        results = ingest_ses_message(get_container(), mail.message_id, list(receipt.recipients), verdicts)
        files += [{"file_id": r.record.file_id, "outcome": r.record.outcome} for r in results]
    return {"files": files}
