"""semfs — a semantic file system.

Every file that reaches an organisation is extracted, enriched, embedded and made findable by
meaning and by keyword. See docs/architecture.md for how it is built; `semfs --help` for the CLI.
"""

__version__ = "0.1.0"


def ingest_agent_file(*args: object, **kwargs: object) -> object:
    """See :func:`semfs.agents.ingest_agent_file` (imported on first use, keeping ``import semfs`` light)."""
    from semfs.agents import ingest_agent_file as ingest

    return ingest(*args, **kwargs)  # type: ignore[arg-type]
