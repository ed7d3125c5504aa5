"""A change summary from a real text diff between two versions of a document."""

from __future__ import annotations

import difflib
from typing import Any

from semfs.domain.ids import lineage_id_for
from semfs.domain.models import FileRecord
from semfs.domain.similarity import resemblance


def _excerpt(line: str, width: int = 80) -> str:
    line = " ".join(line.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _changed_region(old: str, new: str, context: int = 4) -> tuple[str, str]:
    """The first differing words of two lines, with a few words of context either side."""
    a, b = old.split(), new.split()
    ops = [op for op in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not ops:
        return _excerpt(old), _excerpt(new)
    _, i1, i2, j1, j2 = ops[0]
    lo_a, hi_a = max(0, i1 - context), min(len(a), i2 + context)
    lo_b, hi_b = max(0, j1 - context), min(len(b), j2 + context)

    def show(words: list[str], lo: int, hi: int) -> str:
        return ("…" if lo > 0 else "") + _excerpt(" ".join(words[lo:hi])) + ("…" if hi < len(words) else "")

    return show(a, lo_a, hi_a), show(b, lo_b, hi_b)


def change_summary(old: str, new: str, max_examples: int = 3) -> str:
    """Lines added, removed and changed, with short examples of each; ``"No text changes."`` if equal.

    Lines are compared after whitespace normalisation so re-wrapping alone is not a change. The
    examples are document text: this summary is stored on the record and shown to its tenant,
    never logged.
    """
    a = [" ".join(x.split()) for x in old.splitlines() if x.strip()]
    b = [" ".join(x.split()) for x in new.splitlines() if x.strip()]
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    added: list[str] = []
    removed: list[str] = []
    changed: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "insert":
            added.extend(b[j1:j2])
        elif op == "delete":
            removed.extend(a[i1:i2])
        elif op == "replace":
            pairs = list(zip(a[i1:i2], b[j1:j2], strict=False))
            changed.extend(pairs)
            if i2 - i1 > j2 - j1:
                removed.extend(a[i1 + len(pairs) : i2])
            elif j2 - j1 > i2 - i1:
                added.extend(b[j1 + len(pairs) : j2])
    if not (added or removed or changed):
        return "No text changes."
    parts = [f"{len(added)} line(s) added, {len(removed)} removed, {len(changed)} changed."]
    for old_line, new_line in changed[:max_examples]:
        before, after = _changed_region(old_line, new_line)
        parts.append(f'Changed: "{before}" → "{after}"')
    for line in added[:max_examples]:
        parts.append(f'Added: "{_excerpt(line)}"')
    for line in removed[:max_examples]:
        parts.append(f'Removed: "{_excerpt(line)}"')
    return "\n".join(parts)


def version_link(record: FileRecord, previous_text: str | None, text: str) -> dict[str, Any]:
    """The changes that detach an implicit new version whose text is not plausibly a revision of the
    previous one (``{}`` to keep the link). Explicit links (the caller named the previous version) stay."""
    if record.provenance.get("version_link") == "explicit":
        return {}
    found = resemblance(previous_text or "", text)
    if found.is_revision:
        return {}
    return {
        "lineage_id": lineage_id_for(record.file_id),
        "version": 1,
        "previous_version_id": None,
        "is_latest": False,  # Index makes it the latest of its own lineage
        "provenance": {
            **record.provenance,
            "version_link": "detached",
            "detached_from": record.previous_version_id,
            "similarity": found.jaccard,
        },
    }
