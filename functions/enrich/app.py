"""Step Functions task: Enrich. Runs one pipeline stage that pays an API, once per file (idempotent)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import logger, run_paid_stage
from semfs.pipeline.stages import enrich


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return run_paid_stage(enrich.run, event, context)
