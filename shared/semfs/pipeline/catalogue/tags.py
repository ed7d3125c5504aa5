"""The tag vocabulary of a tenant: counts, merge suggestions with evidence, merges with aliases.

A suggestion is made only for an inflection: the same Snowball stem word by word (``invoice`` /
``invoices`` / ``invoicing``), or stems that differ by one trailing letter (``q3-finance`` /
``q3-financials``; stems of at least 7 letters, so ``appli``/``applic`` and ``german``/``germani`` are
not). Spelling alone and embeddings alone are not enough — ``connection``/``convention``,
``import``/``port``, ``flat``/``float`` and ``licensor``/``license`` look alike and mean different
things — so they are only shown as supporting evidence of a pair an inflection rule found. Each
suggestion carries the counts and example files behind it. A merge rewrites records and index
documents to the target tag and remembers the old name as an alias, so filtering by either name
keeps working.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

from semfs.domain.errors import InvalidRequest
from semfs.domain.outcomes import Status
from semfs.domain.results import MergeSuggestion, TagEvidence
from semfs.domain.tags import manual_tag, slugify, stem_key

if TYPE_CHECKING:
    from semfs.ports import Container


MAX_TAGS_FOR_PAIRS = 400  # pairwise signals over the most used tags only

EMBEDDING_SIMILARITY = 0.85

SLUG_SIMILARITY = 0.8


@dataclass
class TagStats:
    tag: str
    manual: int = 0
    auto: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.manual + self.auto


def vocabulary(c: Container, tenant: str, readers: tuple[str, ...] | None = None) -> list[TagStats]:
    """Every tag of the tenant's indexed files (those shared with ``readers``; ``None``: all) with
    manual/auto counts and a few example filenames."""
    from semfs.pipeline.catalogue.files import iter_records

    stats: dict[str, TagStats] = {}
    for record in iter_records(c, tenant, (Status.INDEXED,), readers=readers):
        for kind, values in (("manual", record.tags), ("auto", record.auto_tags)):
            for tag in values:
                s = stats.setdefault(tag, TagStats(tag))
                setattr(s, kind, getattr(s, kind) + 1)
                if len(s.examples) < 3 and record.filename not in s.examples:
                    s.examples.append(record.filename)
    return sorted(stats.values(), key=lambda s: (-s.total, s.tag))


def suggest_merges(
    c: Container, tenant: str, limit: int = 50, readers: tuple[str, ...] | None = None
) -> list[MergeSuggestion]:
    """Pairs of tags that are inflections of each other, the less used one first (the one to merge away);
    from the files shared with ``readers`` (``None``: all)."""
    vocab = vocabulary(c, tenant, readers)[:MAX_TAGS_FOR_PAIRS]
    by_tag = {s.tag: s for s in vocab}
    reasons: dict[tuple[str, str], list[str]] = defaultdict(list)
    keys = {s.tag: stem_key(slugify(s.tag) or s.tag) for s in vocab}
    for a, b in combinations([s.tag for s in vocab], 2):
        ka, kb = keys[a], keys[b]
        if ka == kb:
            reasons[(a, b)].append("same stem")
            continue
        short, long = sorted((ka, kb), key=len)
        if len(short) >= 7 and long.startswith(short) and len(long) - len(short) == 1 and long[-1].isalpha():
            reasons[(a, b)].append("stems differ by one letter")  # q3-financ / q3-financi
    if not reasons:
        return []
    for (a, b), why in reasons.items():
        why.append(f"similar spelling ({difflib.SequenceMatcher(a=a, b=b).ratio():.2f})")
    _embedding_pairs(c, sorted({t for pair in reasons for t in pair}), reasons)
    out = []
    for (a, b), why in reasons.items():
        small, big = sorted((by_tag[a], by_tag[b]), key=lambda s: (s.total, s.tag))
        evidence = {t.tag: TagEvidence(manual=t.manual, auto=t.auto, examples=t.examples) for t in (small, big)}
        out.append(MergeSuggestion(merge=small.tag, into=big.tag, reasons=sorted(set(why)), evidence=evidence))
    return sorted(out, key=lambda x: (-len(x.reasons), x.merge))[:limit]


def _embedding_pairs(c: Container, tags: list[str], reasons: dict[tuple[str, str], list[str]]) -> None:
    """Pairs of tags whose embeddings are close; without an embedder the other signals still count."""
    import numpy as np

    from semfs.domain.errors import EmbeddingKeyRefused, EmbeddingUnavailable

    try:
        vectors = np.asarray(c.embedder.embed_documents([t.replace("-", " ") for t in tags]), dtype=np.float32)
    except (EmbeddingUnavailable, EmbeddingKeyRefused):
        return
    sims = vectors @ vectors.T
    for i, j in zip(*np.where(np.triu(sims, 1) >= EMBEDDING_SIMILARITY), strict=True):
        pair = (tags[int(i)], tags[int(j)])
        pair = pair if pair in reasons else (pair[1], pair[0])
        if pair in reasons:  # supporting evidence only, never a suggestion of its own
            reasons[pair].append(f"close meaning ({float(sims[i, j]):.2f})")


def merge(c: Container, tenant: str, source: str, target: str) -> int:
    """Rewrite ``source`` to ``target`` on every record (manual and auto tags) and its index documents;
    remember the alias. Returns how many files changed."""
    from semfs.pipeline.catalogue.files import iter_records
    from semfs.pipeline.documents import index_record
    from semfs.pipeline.record_update import update

    source = slugify(source)
    try:
        target = manual_tag(target)[0]
    except ValueError as e:
        raise InvalidRequest(str(e)) from e
    if not source or source == target:
        raise InvalidRequest("give two different tags")
    changed = 0
    for record in list(iter_records(c, tenant)):
        if source not in record.tags and source not in record.auto_tags:
            continue
        updated = update(
            c.repo,
            tenant,
            record.file_id,
            lambda r: r.evolve(tags=_swap(r.tags, source, target), auto_tags=_swap(r.auto_tags, source, target)),
            seen=record,
        )
        c.tags.record_uses(tenant, record.file_id, [target])
        if updated.status is Status.INDEXED:
            index_record(c, updated, reembed_card=True)
        changed += 1
    c.tags.set_alias(tenant, source, target)
    return changed


def _swap(values: list[str], source: str, target: str) -> list[str]:
    return list(dict.fromkeys(target if v == source else v for v in values))
