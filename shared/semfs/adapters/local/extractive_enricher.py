"""``ExtractiveEnricher``: title from structure, centrality-ranked summary sentences, keyphrase tags.

No model and no network: a summary made only of the document's own sentences (chosen by TF-IDF
centrality, a LexRank-style degree score, kept in document order) and tags from scored 1–3 word
keyphrases. The default local enricher, and the fallback when an LLM fails.

Given a worker (the bounded extraction worker: ``Extractor.run``), it runs there under its own deadline,
like extraction: its text functions are linear (tests/unit/test_linear_text.py), but a 2 MB document is
still seconds of the interpreter, which the serving process should never give to one file. Past the
deadline (or if the worker dies) it raises ``EnrichmentFailed`` and the stage falls back to
``domain.enrichment.minimal_enrichment``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from semfs.domain.enrichment import strip_links, unsafe
from semfs.domain.errors import EnrichmentFailed
from semfs.domain.models import Enrichment
from semfs.domain.tags import is_generic, is_word_like, slugify
from semfs.domain.text import STOPWORDS, could_be_title, sentences, title_from_filename, words
from semfs.ports.enricher import EnrichInput

if TYPE_CHECKING:
    from semfs.ports.extractor import Extractor

MAX_TITLE = 120
MAX_SUMMARY = 600


# Titles that document generators write when the author wrote none.
_GENERATED = re.compile(
    r"^(untitled|untitled document|document\s*\d*|presentation\s*\d*|book\s*\d*|sheet\s*\d*|slide\s*\d+|"
    r"powerpoint presentation|microsoft (word|excel|powerpoint) - .*|title|no title)$",
    re.IGNORECASE,
)


def is_generated_title(title: str) -> bool:
    return bool(_GENERATED.match(" ".join(title.split())))


# A release's own lines in a changelog: a Debian entry's first (``gzip (1.12-1) unstable; urgency=medium``)
# and last (`` -- Bdale Garbee <bdale@gag.com>  Wed, 26 Oct 2022 …``), and bug closures (``Closes: #1234``).
# They say which release, not what the file is about: as tags they gave ``urgency-medium``, ``unstable``,
# ``closes`` and ``garbee-wed`` (issue 51.3); as a title, one release of many.
_ENTRY_HEADER = re.compile(r"^\s*([a-z0-9][a-z0-9+.-]*) \([^()\s]+\) [^;\n]+; urgency=\S+.*$", re.M | re.I)
_ENTRY_TRAILER = re.compile(r"^\s*-- [^<\n]+(?:<[^>\n]*>)?\s+\w{3}, \d.*$", re.M)
_CLOSES = re.compile(r"\(?\bcloses\b:?\s*(?:bug\s*)?#?\d+(?:\s*(?:,|and)\s*(?:bug\s*)?#?\d+)*\)?", re.I)
# names a folder holds one of each of: alone as a title they tell no two files apart ("Copyright" x 700)
_BARE_NAMES = frozenset(
    "copyright readme news changelog changes license licence authors todo install thanks credits history".split()
)
_UPSTREAM_NAME = re.compile(r"^Upstream-Name:\s*(\S[^\n]{0,60})$", re.M)


def without_release_lines(text: str) -> str:
    """``text`` without a changelog's release headers, sign-off lines and bug closures."""
    return _CLOSES.sub(" ", _ENTRY_TRAILER.sub(" ", _ENTRY_HEADER.sub(" ", text)))


def _named(title: str, item: EnrichInput) -> str:
    """A title that says whose file it is: a changelog entry's header becomes the package's changelog, and
    a bare "README" or "Copyright" is prefixed with its folder's name (``/usr/share/doc/gzip/copyright`` →
    "gzip Copyright") or, for a Debian copyright file, its ``Upstream-Name``."""
    entry = _ENTRY_HEADER.match(title)
    if entry:
        return f"{entry.group(1)} changelog"
    if title.lower().strip(" .:#") not in _BARE_NAMES:
        return title
    folder = PurePosixPath(item.came_from).parent.name if item.came_from else ""
    if not folder:
        head = "\n".join(b.text for b in item.document.blocks[:20])[:4000]
        upstream = _UPSTREAM_NAME.search(head)
        folder = upstream.group(1).strip() if upstream else ""
    return f"{folder} {title}"[:MAX_TITLE] if folder and unsafe(folder) is None else title


def _title(item: EnrichInput) -> str:
    return _named(_first_title(item), item)


def _first_title(item: EnrichInput) -> str:
    doc = item.document
    # a title is shown like a model's: one that carries a link, markup or a number is passed over
    if (
        doc.title
        and len(doc.title.strip()) > 2
        and not is_generated_title(doc.title)
        and could_be_title(doc.title)
        and unsafe(doc.title) is None
    ):
        return doc.title.strip()[:MAX_TITLE]
    for block in doc.blocks:
        if block.kind == "heading" and block.text.strip() and not is_generated_title(block.text):
            line = block.text.strip().splitlines()[0][:MAX_TITLE]
            if unsafe(line) is None and could_be_title(line):
                return line
    return title_from_filename(item.filename)[:MAX_TITLE]


def _sentence_pool(item: EnrichInput, limit: int = 200) -> list[str]:
    pool: list[str] = []
    has_body = any(b.kind in ("paragraph", "table") for b in item.document.blocks)
    for block in item.document.blocks:
        # speaker notes and headers/footers describe a document, not what it says, unless that is all it has
        if block.kind in ("title", "heading", "code") or (block.kind == "notes" and has_body):
            continue
        for s in sentences(block.text):
            n = len(words(s))
            if 5 <= n <= 60 and unsafe(s) is None:  # the output rules: no links, addresses, markup, numbers
                pool.append(s)
            if len(pool) >= limit:
                return pool
    if not pool:  # tables, code: fall back to the first lines
        for block in item.document.blocks:
            line = " ".join(block.text.split())[:200]
            if line and unsafe(line) is None:
                pool.append(line)
            if len(pool) >= 3:
                break
    return pool


def _summary(pool: list[str], n: int = 3) -> str:
    pool = _distinct(pool)
    if len(pool) <= n:
        return " ".join(pool)[:MAX_SUMMARY]
    bags = [Counter(w.lower() for w in words(s) if w.lower() not in STOPWORDS) for s in pool]
    df: Counter[str] = Counter()
    for bag in bags:
        df.update(bag.keys())
    idf = {w: math.log(len(pool) / c) + 1.0 for w, c in df.items()}
    vecs = []
    for bag in bags:
        v = {w: tf * idf[w] for w, tf in bag.items()}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        vecs.append({w: x / norm for w, x in v.items()})
    centrality = []
    for i, vi in enumerate(vecs):
        total = 0.0
        for j, vj in enumerate(vecs):
            if i != j:
                total += sum(x * vj.get(w, 0.0) for w, x in vi.items())
        # A slight lead bias: opening sentences tend to say what a document is.
        centrality.append(total * (1.0 + 0.3 / (1 + i)))
    best = sorted(range(len(pool)), key=lambda i: -centrality[i])[:n]
    text = " ".join(pool[i] for i in sorted(best))
    while len(text) > MAX_SUMMARY and len(best) > 1:
        best = best[:-1]
        text = " ".join(pool[i] for i in sorted(best))
    return text[:MAX_SUMMARY]


def _distinct(pool: list[str]) -> list[str]:
    """Sentences once each: a repeated sentence (a boilerplate line, a header on every page) would
    otherwise be its own nearest neighbour and win the summary twice."""
    seen: set[str] = set()
    out = []
    for s in pool:
        key = " ".join(w.lower() for w in words(s))
        if key and key not in seen:
            seen.add(key)
            out.append(s)
    return out


_SPLIT = re.compile(r"[.,;:!?()\[\]{}\"“”|/\n]+")


def keyphrases(text: str, k: int = 8) -> list[str]:
    """RAKE-style candidates (stopword-delimited runs of 1–3 words) scored by frequency × length,
    with single words weighted by how often they occur; numbers alone are never tags."""
    counts = _phrase_counts(text)
    scored: list[tuple[float, str]] = []
    long_text = sum(counts[p] for p in counts if " " not in p) > 80
    for phrase, c in counts.items():
        n = phrase.count(" ") + 1
        if c < 2 and (n > 1 or long_text):
            continue  # a phrase said once in a long text is not what the text is about
        if n == 1 and len(phrase) < 4:
            continue
        scored.append((c * (1.0 + 0.6 * (n - 1)), phrase))
    scored.sort(key=lambda x: (-x[0], x[1]))
    chosen: list[str] = []
    for _, phrase in scored:
        # skip a phrase contained in (or containing) one already chosen
        if not any(phrase in c or c in phrase for c in chosen):
            chosen.append(phrase)
        if len(chosen) >= k:
            break
    return chosen


def _phrase_counts(text: str) -> Counter[str]:
    """How often each run of 1–3 words between stop words, punctuation and numbers occurs."""
    counts: Counter[str] = Counter()
    for fragment in _SPLIT.split(text.lower()):
        run: list[str] = []
        for w in [*words(fragment), ""]:
            if w and w not in STOPWORDS and len(w) > 2 and not w[0].isdigit():  # 1992-1993, 2.1.3: no tag
                run.append(w)
                continue
            for size in (1, 2, 3):
                for i in range(len(run) - size + 1):
                    counts[" ".join(run[i : i + size])] += 1
            run = []
    return counts


# A short document is enriched here, not in the worker, whose round trip cost more CPU than enriching a page
# does (issue 47.11). The enrichment is linear in the text but holds the interpreter while it runs (~3 ms a KB:
# 8 KB ~25 ms, beside a server's searches); a longer document goes to the worker, under its deadline.
IN_PROCESS_CHARS = 8 * 1024


class ExtractiveEnricher:
    """Title, summary and tags from the document itself; in ``worker`` under ``timeout_s`` when given and the
    document is longer than ``IN_PROCESS_CHARS``."""

    def __init__(self, worker: Extractor | None = None, timeout_s: float = 60) -> None:
        self._worker = worker
        self._timeout = timeout_s

    def enrich(self, item: EnrichInput) -> Enrichment:
        if self._worker is None or sum(len(b.text) for b in item.document.blocks) <= IN_PROCESS_CHARS:
            return enrich_extractively(item)
        try:
            result: Enrichment = self._worker.run(enrich_extractively, (item,), self._timeout)
        except TimeoutError as e:
            raise EnrichmentFailed(f"extractive enrichment took longer than {self._timeout:.0f}s") from e
        except (MemoryError, ChildProcessError) as e:
            raise EnrichmentFailed("extractive enrichment ended its worker") from e
        return result


def enrich_extractively(item: EnrichInput) -> Enrichment:
    """The extractive enrichment itself (a module-level function: it runs in the worker process)."""
    title = _title(item)
    pool = _sentence_pool(item)
    summary = _summary(pool) or f"{title}."
    body = strip_links(without_release_lines("\n".join(b.text for b in item.document.blocks)[:200_000]))
    # a title the document gave counts twice; one made of the file's name or path says nothing the text
    # does ("doc-git-relnotes" on every release note), so it is left out of the tags
    own_title = title != title_from_filename(item.filename)[:MAX_TITLE]
    text = f"{title}. {title}. {body}" if own_title else body
    tags = [slugify(p) for p in keyphrases(text, k=16)]
    tags = [t for t in dict.fromkeys(tags) if t and not is_generic(t) and is_word_like(t)][:10]
    if len(tags) < 5 and own_title:
        extra = (slugify(w) for w in words(title) if w.lower() not in STOPWORDS)
        tags.extend(t for t in extra if t and t not in tags and len(t) > 2 and not is_generic(t))
    return Enrichment(title=title, summary=summary, auto_tags=tags[:10])
