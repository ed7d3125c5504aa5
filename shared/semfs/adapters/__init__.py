"""Adapters: ``aws/`` (cloud SDKs) and ``local/`` (embedded defaults)."""
