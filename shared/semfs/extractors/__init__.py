"""Bytes → ``ExtractedDocument``, by format. Runs inside a bounded subprocess (see ``runner``)."""
