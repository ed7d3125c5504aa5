"""The feature switches (``SEMFS_ENABLE_*``, ``config.FeatureSettings``): what each one refuses, in words.

A switch that is off fails soft where a lesser answer exists (semantic off: keyword search, marked
``degraded``; ask off: ``no_answer`` with the reason; llm off: the extractive enricher and answerer) and
is refused with ``Disabled`` where none does (a new file, "more like this", the MCP server). Nothing
already stored is touched by a switch.
"""

from __future__ import annotations

from semfs.config import Settings
from semfs.domain.errors import Disabled
from semfs.domain.vocabulary import FEATURES, Feature

__all__ = ["FEATURES", "OFF", "Feature", "enabled", "require"]


# what is off, said to the caller: the variable that turns it back on is named for whoever runs semfs
OFF: dict[Feature, str] = {
    "ingest": "new files are switched off on this server (SEMFS_ENABLE_INGEST=false): nothing was stored",
    "ocr": "OCR is switched off on this server (SEMFS_ENABLE_OCR=false)",
    "llm": "the LLM is switched off on this server (SEMFS_ENABLE_LLM=false): enrichment and answers are extractive",
    "semantic": "semantic search is switched off on this server (SEMFS_ENABLE_SEMANTIC=false)",
    "ask": "answers are switched off on this server (SEMFS_ENABLE_ASK=false)",
    "mail": "mail intake is switched off on this server (SEMFS_ENABLE_MAIL=false)",
    "entities": "entities are switched off on this server (SEMFS_ENABLE_ENTITIES=false): none are found in new files",
    "mcp": "the MCP server is switched off here (SEMFS_ENABLE_MCP=false)",
}


def enabled(settings: Settings, feature: Feature) -> bool:
    """Whether ``feature``'s switch is on (its own settings may still leave it unavailable)."""
    if feature == "ocr":
        return settings.ocr.enabled
    on: bool = getattr(settings.features, feature)
    return on


def require(settings: Settings, feature: Feature) -> None:
    """Raise ``Disabled`` (nothing done) when ``feature`` is switched off."""
    if not enabled(settings, feature):
        raise Disabled(OFF[feature])
