"""semfs — a semantic file system.

Every file that reaches an organisation is extracted, enriched, embedded and made findable by
meaning and by keyword. See DESIGN.md for the architecture; `semfs --help` for the CLI.
"""

__version__ = "0.1.0"
