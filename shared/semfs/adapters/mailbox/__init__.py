"""Mailbox connections any backend uses: IMAP (``imap.py``)."""
