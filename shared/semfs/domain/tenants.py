"""What a tenant id may be: one rule for every entry point (the CLI's ``--tenant``, an API key, the JWT's
tenant claim, MCP, the mailbox map, an upload's key, the maintenance function's events).

A tenant id is a path segment of every key semfs stores (``uploads/{tenant}/…``, ``content/{tenant}/…``)
and a folder of the local index, so it may hold nothing a path or a key gives meaning to: ``default/``
once reached ``uploads/default//`` and, normalised by the file system, erased tenant ``default``'s
originals. Lowercase only: on a case-insensitive disk (macOS's default) ``A`` and ``a`` are one folder.
"""

from __future__ import annotations

import re

from semfs.config import TENANT_ID_PATTERN, TENANT_ID_RULE
from semfs.domain.errors import InvalidRequest

__all__ = ["TENANT_ID_RULE", "checked_tenant_id", "is_tenant_id"]
_TENANT_ID = re.compile(TENANT_ID_PATTERN)


def is_tenant_id(value: object) -> bool:
    return isinstance(value, str) and _TENANT_ID.fullmatch(value) is not None


def checked_tenant_id(value: object) -> str:
    """``value`` when it is a tenant id; ``InvalidRequest`` naming the rule otherwise."""
    if not is_tenant_id(value):
        shown = repr(value)[:80] if isinstance(value, str) else type(value).__name__
        raise InvalidRequest(f"{shown} is not a tenant id: a tenant id is {TENANT_ID_RULE}")
    return str(value)
