"""Query: hybrid search, grounded answers and the context briefing for agents (reads only)."""
