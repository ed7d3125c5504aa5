"""``GET /capabilities``: the feature switches as this server has them, and what each one lacks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.domain.features import OFF, Feature, enabled
from semfs.domain.results import Capabilities, Capability

if TYPE_CHECKING:
    from semfs.ports import Container


def capabilities(c: Container) -> Capabilities:
    """Each feature on, or off with the reason a person can act on."""
    s = c.settings

    def switch(feature: Feature, missing: str | None = None) -> Capability:
        if not enabled(s, feature):
            return Capability(on=False, why_off=OFF[feature])
        return Capability(on=missing is None, why_off=missing)

    llm_there = c.enricher is not c.fallback_enricher
    ocr_missing = None if c.ocr.available else "no OCR engine is installed (Tesseract, for the local backend)"
    llm_missing = None if llm_there else "no LLM endpoint is configured (SEMFS_LLM_BASE_URL): extractive instead"
    return Capabilities(
        ingest=switch("ingest"),
        ocr=switch("ocr", ocr_missing),
        llm=switch("llm", llm_missing),
        semantic=switch("semantic"),
        ask=switch("ask"),
        mail=switch("mail", None if s.mail.mailbox_tenants else "no mailbox is configured (SEMFS_MAILBOXES)"),
        entities=switch("entities"),
        mcp=switch("mcp"),
        answers="llm" if c.answerer.method == "llm" else "extractive",
    )
