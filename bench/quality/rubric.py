"""The written rubric for a file's title, tags and type (issue 51). A person would choose none of these:

Title
- empty, or longer than 120 characters;
- an interpreter line, a version string or a path (``#!/bin/sh``, ``2.1.3``, ``/usr/share/doc/x``);
- a Debian changelog entry's header (``gzip (1.12-1) sid; urgency=high``): it names one release, not the file;
- a bare generic name (``Copyright``, ``README``, ``NEWS``, ``Changelog`` …): among a folder of them it tells
  none apart.

Tags (none at all is a fault too)
- changelog vocabulary: distributions, urgencies, ``closes`` and the like (``unstable``, ``urgency-medium``);
- a generic word a person would not file by (``provide``, ``want``, ``granted``, ``following`` …);
- a number or a phrase led by one (``1999-2022-free-software``);
- a changelog trailer's name-and-weekday (``garbee-wed``).

Type
- a container, not its content (``application/gzip`` for a compressed manual page or text file).

Written before the card was first run; the lists are closed words, not fitted to any file.
"""

from __future__ import annotations

import re

GENERIC_TITLES = frozenset(
    "copyright readme news changelog changes license licence authors todo install notes index contents"
    " untitled document introduction thanks credits history".split()
)
CHANGELOG_WORDS = frozenset(
    "unstable stable testing oldstable sid experimental closes urgency nmu upload uploads uploaded"
    " release released changelog changes bug bugs".split()
)
GENERIC_TAGS = frozenset(
    "provide provides provided use uses used using want wants need needs make makes made allow allows"
    " include includes included add adds added fix fixes fixed change changed new granted see set get run"
    " runs work works like also following available way thing things please note thanks done".split()
)
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
CONTAINERS = frozenset(
    {"application/gzip", "application/x-gzip", "application/x-bzip2", "application/x-xz", "application/octet-stream"}
)
ENTRY_HEADER = re.compile(r"^\S+ \([^)]*\) [\w.-]+(?:\s+[\w.-]+)*; urgency=", re.I)


def title_faults(title: str) -> list[str]:
    t = title.strip()
    if not t:
        return ["title: empty"]
    if len(t) > 120:
        return ["title: too long"]
    if t.startswith("#!") or re.fullmatch(r"v?\d+(\.\d+)+\S*", t) or re.fullmatch(r"[~.]?/\S*", t):
        return ["title: interpreter line, version or path"]
    if ENTRY_HEADER.match(t):
        return ["title: a changelog entry's header"]
    if t.lower().strip(" .:#") in GENERIC_TITLES:
        return ["title: a bare generic name"]
    return []


def tag_faults(tags: list[str]) -> list[str]:
    if not tags:
        return ["tags: none"]
    out = []
    for tag in tags:
        parts = tag.lower().split("-")
        if parts[0] in CHANGELOG_WORDS or tag.lower() in CHANGELOG_WORDS:
            out.append(f"tags: changelog vocabulary ({tag})")
        elif tag.lower() in GENERIC_TAGS:
            out.append(f"tags: generic word ({tag})")
        elif parts[0].isdigit():
            out.append(f"tags: a number ({tag})")
        elif len(parts) > 1 and parts[-1] in WEEKDAYS:
            out.append(f"tags: a name and a weekday ({tag})")
    return out


def faults(title: str, tags: list[str], mime_type: str) -> list[str]:
    """Every fault of one file; none means a person would accept its title, tags and type."""
    out = title_faults(title) + tag_faults(tags)
    if mime_type in CONTAINERS:
        out.append(f"type: a container ({mime_type})")
    return out
