"""OpenAI-compatible adapters (enricher, embedder, chat): used by both backends whenever an endpoint is configured."""
