"""Host names by the Public Suffix List (``publicsuffixlist``: its data ships with the package, nothing is
fetched): whether a label is a top-level domain, and the name a mail domain is registered under."""

from __future__ import annotations

from functools import cache
from typing import Any

# the names RFC 2606 and 6761 keep for examples and local networks: hosts, though no registry lists them
_RESERVED_TLDS = frozenset({"example", "test", "invalid", "localhost", "local", "internal", "onion", "lan", "home"})


@cache
def suffixes() -> Any:
    """The Public Suffix List (``publicsuffixlist``: its data ships with the package, nothing is fetched)."""
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


@cache
def is_top_level_domain(label: str) -> bool:
    """Whether ``label`` is a top-level domain (the Public Suffix List's ICANN and private entries, read by
    ``publicsuffixlist``, or a reserved one): ``/etc/login.defs``, ``gpg-agent.service`` and mktemp's
    ``tmp.XXXXXXXXXX`` are file names, not hosts, and an answer quoting them keeps them."""
    return label in _RESERVED_TLDS or suffixes().publicsuffix(f"x.{label}", accept_unknown=False) is not None


def registrable_label(domain: str) -> str:
    """The name a mail domain is registered under: ``acme`` for ``it.acme.co.uk`` (its registrable domain is
    ``acme.co.uk``). Before, the first label named the organisation: ``it`` for ``sam@it.example.com``."""
    registered = suffixes().privatesuffix(domain, accept_unknown=True) or domain
    return str(registered).split(".")[0]
