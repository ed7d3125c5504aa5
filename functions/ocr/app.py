"""Step Functions task: Ocr. Parses the state, runs one pipeline stage, returns the next state."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from semfs.lambda_support import logger, run_stage
from semfs.pipeline.stages import ocr


@logger.inject_lambda_context
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return run_stage(ocr.run, event)
