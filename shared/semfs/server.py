"""``semfs serve``: the local SMTP listener (aiosmtpd) that turns mail into files.

Recipients map to tenants through ``SEMFS_MAILBOXES``; mail to any other address is refused at RCPT
with 550, so nothing is ever ingested into a default tenant. Each accepted message goes through the
same path as SES mail and ``semfs ingest *.eml``. (The HTTP API and web page join this command with
the API issue.)
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from semfs.observability import get_logger
from semfs.pipeline.mail import ingest_mail, tenant_for

if TYPE_CHECKING:
    from semfs.bootstrap import Container

log = get_logger(__name__)


class MailHandler:
    """aiosmtpd handler: validate recipients, then ingest the message off the event loop."""

    def __init__(self, container: Container) -> None:
        self._c = container
        self._lock = asyncio.Lock()  # one message at a time: the local pipeline is single-writer

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, rcpt_options: Any) -> str:  # noqa: N802
        if tenant_for(self._c, [address]) is None:
            return "550 5.1.1 Mailbox unavailable"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        tenant = tenant_for(self._c, list(envelope.rcpt_tos))
        if tenant is None:
            return "550 5.1.1 Mailbox unavailable"
        raw = envelope.original_content or envelope.content
        async with self._lock:
            try:
                await asyncio.get_running_loop().run_in_executor(
                    None, lambda: ingest_mail(self._c, tenant, raw, recipients=list(envelope.rcpt_tos), source="smtp")
                )
            except Exception as e:  # the sender should retry later rather than lose the message
                log.error("mail not ingested", error=type(e).__name__)
                return "451 4.3.0 Temporary failure, try again later"
        return "250 Message accepted for delivery"


def start_smtp(container: Container, host: str, port: int) -> Any:
    """Start the SMTP listener in a background thread; returns the aiosmtpd Controller (``.stop()``)."""
    from aiosmtpd.controller import Controller

    controller = Controller(MailHandler(container), hostname=host, port=port, data_size_limit=60 * 1024 * 1024)
    controller.start()
    return controller
