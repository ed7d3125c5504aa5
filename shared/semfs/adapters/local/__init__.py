"""Embedded-default adapters: local disk, SQLite, onnxruntime, Tesseract."""
