"""A change summary from a real text diff between two versions of a document."""

from __future__ import annotations

import difflib


def _excerpt(line: str, width: int = 80) -> str:
    line = " ".join(line.split())
    return line if len(line) <= width else line[: width - 1] + "…"


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
        parts.append(f'Changed: "{_excerpt(old_line)}" → "{_excerpt(new_line)}"')
    for line in added[:max_examples]:
        parts.append(f'Added: "{_excerpt(line)}"')
    for line in removed[:max_examples]:
        parts.append(f'Removed: "{_excerpt(line)}"')
    return "\n".join(parts)
