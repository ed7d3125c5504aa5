"""Test data builders: one place that knows every required field of the domain models."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from semfs.domain.models import IndexDoc


def index_doc(
    file_id: str,
    n: int,
    text: str,
    *,
    tenant: str = "acme",
    embedding: Sequence[float] | None = None,
    embedding_model: str | None = None,
    **fields: object,
) -> IndexDoc:
    """A chunk document of ``file_id`` (chunk ``n``) with plausible defaults; ``fields`` override any."""
    values: dict[str, object] = {
        "chunk_id": f"{file_id}:{n}",
        "file_id": file_id,
        "lineage_id": "l_" + file_id,
        "tenant_id": tenant,
        "version": 1,
        "is_latest": True,
        "source_type": "upload",
        "mime_type": "text/plain",
        "filename": f"{file_id}.txt",
        "title": file_id,
        "text": text,
        "embedding": list(embedding) if embedding is not None else None,
        "embedding_model": embedding_model,
        "created_at": datetime(2026, 5, 1, tzinfo=UTC),
    }
    values.update(fields)
    return IndexDoc.model_validate(values)


def run_cli(cli: Any, *args: str) -> str:
    """Run ``semfs ARGS`` and return its output; the command must succeed."""
    from semfs.cli import app

    result = cli.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return str(result.output)
