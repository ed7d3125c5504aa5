"""The fixed vocabularies, each declared once: entity kinds, source types, search modes and feature switches.

Everything else derives from these or is checked against them by a test: the pydantic models and the
API's enums (``domain/models.py``, ``domain/results.py``), the OpenAPI document, the LLM's JSON schema
(``adapters/openai/client.py``), the CLI's choices and the web page's labels
(``tests/unit/test_vocabulary.py``). Outcome codes are ``domain/outcomes.py``'s enums.

Standard library only, so that the CLI can name its choices without importing pydantic (``semfs --help``).
"""

from __future__ import annotations

from typing import Literal, get_args

EntityKind = Literal["person", "organisation", "email", "phone", "money", "date", "identifier"]
ENTITY_KINDS: tuple[EntityKind, ...] = get_args(EntityKind)
# how a person reads each kind (the web page's labels are checked against these)
ENTITY_KIND_LABELS: dict[EntityKind, str] = {
    "person": "person",
    "organisation": "organisation",
    "email": "email address",
    "phone": "phone number",
    "money": "amount",
    "date": "date",
    "identifier": "identifier",
}

SourceType = Literal["upload", "email_attachment", "agent_generated"]
SOURCE_TYPES: tuple[SourceType, ...] = get_args(SourceType)

SearchMode = Literal["hybrid", "keyword", "semantic"]
SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)

Feature = Literal["ingest", "ocr", "llm", "semantic", "ask", "mail", "entities", "mcp"]
FEATURES: tuple[Feature, ...] = get_args(Feature)

__all__ = [
    "ENTITY_KINDS",
    "ENTITY_KIND_LABELS",
    "FEATURES",
    "SEARCH_MODES",
    "SOURCE_TYPES",
    "EntityKind",
    "Feature",
    "SearchMode",
    "SourceType",
]
