"""The HTTP API: one Powertools router served by Lambda (API Gateway) and locally."""
