"""Maintenance: rebuild the index, re-embed with a new model, and reconcile blobs, records and index."""
