"""Cloud adapters: the only package that imports boto3, opensearch-py, openai or the Textract caller."""
