"""Structure-aware, token-bounded chunking. Pure: the same document always yields the same chunks.

Blocks are packed into chunks that never cross a page, sheet or slide, start afresh at headings, and
carry the heading path as their section. A block too long for one chunk is split on sentences (then
on words) with ``overlap`` tokens repeated from the previous piece.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from semfs.domain.models import Chunk, ExtractedDocument, Location
from semfs.domain.text import estimate_tokens, sentences


@dataclass
class _Pending:
    parts: list[str] = field(default_factory=list)
    tokens: int = 0
    location: Location | None = None


def _container(loc: Location) -> tuple[object, ...]:
    """Chunks never span two of these."""
    return (loc.page, loc.sheet, loc.slide)


def _split_long(text: str, max_tokens: int, overlap: int) -> Iterator[str]:
    units = sentences(text)
    if len(units) <= 1:
        units = text.split()
    window: list[str] = []
    size = 0
    for unit in units:
        t = estimate_tokens(unit)
        if t > max_tokens:  # one enormous "sentence": cut it by words
            ws = unit.split()
            step = max(1, int(max_tokens / 1.5))
            for i in range(0, len(ws), max(1, step - int(overlap / 1.5))):
                yield " ".join(ws[i : i + step])
            window, size = [], 0
            continue
        if size + t > max_tokens and window:
            yield " ".join(window)
            keep: list[str] = []
            kept = 0
            for prev in reversed(window):
                pt = estimate_tokens(prev)
                if kept + pt > overlap:
                    break
                keep.insert(0, prev)
                kept += pt
            window, size = keep, kept
        window.append(unit)
        size += t
    if window:
        yield " ".join(window)


def chunk_document(doc: ExtractedDocument, max_tokens: int = 200, overlap: int = 32) -> list[Chunk]:
    """Split ``doc`` into chunks of at most ~``max_tokens`` estimated tokens."""
    chunks: list[Chunk] = []
    pending = _Pending()
    headings: list[tuple[int, str]] = []

    def flush() -> None:
        nonlocal pending
        if pending.parts and pending.location is not None:
            text = "\n".join(pending.parts).strip()
            if text:
                chunks.append(Chunk(n=len(chunks), text=text, location=pending.location, tokens=pending.tokens))
        pending = _Pending()

    def section() -> str | None:
        return " › ".join(h for _, h in headings)[:200] or None

    for block in doc.blocks:
        text = block.text.strip()
        if not text or block.kind == "title":  # the document's title is a field of every chunk, not text
            continue
        if block.kind == "heading":
            flush()
            headings[:] = [(lvl, h) for lvl, h in headings if lvl < (block.level or 1)]
            headings.append((block.level or 1, text[:120]))
        loc = block.location.model_copy(update={"section": block.location.section or section()})
        if pending.location is not None and _container(pending.location) != _container(loc):
            flush()
        tokens = estimate_tokens(text)
        if tokens > max_tokens:
            flush()
            for piece in _split_long(text, max_tokens, overlap):
                chunks.append(Chunk(n=len(chunks), text=piece, location=loc, tokens=estimate_tokens(piece)))
            continue
        if pending.tokens + tokens > max_tokens:
            flush()
        if pending.location is None:
            pending.location = loc
        elif loc.row_end is not None and pending.location.sheet == loc.sheet:
            pending.location = pending.location.model_copy(update={"row_end": loc.row_end})
        pending.parts.append(text)
        pending.tokens += tokens
    flush()
    return chunks
