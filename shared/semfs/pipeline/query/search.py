"""Hybrid search: BM25 leg(s) + k-NN leg, over-fetched, fused per file (min-max or RRF,
``domain/ranking.py``), optionally reranked.

The tenant is a required argument of every index call; callers get it from the verified
credential, never from the request body.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Literal

from semfs.domain.errors import EmbeddingKeyRefused, EmbeddingUnavailable, NotFound, RerankUnavailable
from semfs.domain.features import enabled
from semfs.domain.models import (
    IndexDoc,
    IndexHit,
    SearchFilters,
    SearchRequest,
    SearchResponse,
    SearchResultItem,
    Snippet,
)
from semfs.domain.ranking import RankedFile, fuse_files, overfetch
from semfs.domain.relevance import WEAK, Calibration, Evidence, coverage, judge
from semfs.domain.tags import slugify
from semfs.domain.text import STOPWORDS, content_terms, query_terms, words
from semfs.domain.vocabulary import SearchMode
from semfs.observability import get_logger

if TYPE_CHECKING:
    from semfs.ports import Container, Embedder
log = get_logger(__name__)


Leg = Literal["semantic", "keyword", "cards"]


SNIPPET_CHARS = 280


ORIGIN_KEYS = ("agent", "run_id", "derived_from", "sender", "subject", "thread_subject")


@dataclass(frozen=True)
class Retrieved:
    files: list[tuple[str, float, list[IndexHit]]]
    degraded: bool
    keyword_query: str  # what the BM25 legs searched (``keyword_text``): the words snippets mark
    # each file's calibrated relevance (``domain/relevance.py``) and the evidence it rests on
    relevance: dict[str, float] = field(default_factory=dict)
    evidence: dict[str, Evidence] = field(default_factory=dict)
    docs: dict[str, IndexDoc] = field(default_factory=dict)  # the documents of the files' hits
    below_floor: int = 0  # files left out because not one of them shares a word with the query
    answered: bool = False  # whether one file reaches the relevance floor (else every file shown is weak)


Vectors = dict[tuple[str, str], list[float]]  # (model, query) → its vector, for the length of one request


def query_vector(embedder: Embedder, query: str, memo: Vectors | None) -> list[float]:
    """``query`` embedded by ``embedder``; with ``memo``, once per request however often it is retrieved
    (a context briefing ranks one message twice; in AWS each embedding is a call to the endpoint)."""
    key = (embedder.model, query)
    if memo is not None and key in memo:
        return memo[key]
    vector = embedder.embed_query(query)
    if memo is not None:
        memo[key] = vector
    return vector


def retrieve(
    c: Container,
    tenant_id: str,
    query: str,
    mode: SearchMode,
    filters: SearchFilters,
    limit: int,
    *,
    floor: bool = True,
    vectors: Vectors | None = None,
) -> Retrieved:
    """Ranked files (id, score, best chunk hits) for ``query``, each with its calibrated relevance; none
    when not one file reaches the relevance floor (``floor=False``: every one). No records are read here.
    ``vectors``: a caller retrieving one query more than once embeds it once."""
    bm25_text = keyword_text(query)
    scoped = _scoped(c, tenant_id, filters)
    if scoped is None:  # an entity no file names: nothing to rank
        return Retrieved(files=[], degraded=False, keyword_query=bm25_text)
    filters = scoped
    k = overfetch(limit)  # the BM25 legs' text: a question's foreign function words left out
    cards = c.settings.search.card_leg
    legs: list[tuple[Leg, list[IndexHit]]] = []
    degraded = False
    model: str | None = None  # the model whose cosines the k-NN leg gives
    if mode in ("hybrid", "semantic") and not enabled(c.settings, "semantic"):
        degraded = True  # switched off: the keyword legs alone, as when the embedder is down
    elif mode in ("hybrid", "semantic"):
        try:
            embedder = c.query_embedder()
            vector = query_vector(embedder, query, vectors)
            model = embedder.model
            together = (
                c.index.hybrid_legs(tenant_id, bm25_text, vector, filters, k, cards)
                if mode == "hybrid" and not c.settings.embedding.new_files_only
                else None
            )
            if together is not None:  # one round trip to a remote index
                names: list[Leg] = ["semantic", "keyword", "cards"] if cards else ["semantic", "keyword"]
                legs = list(zip(names, together, strict=True))
                return _ranked(c, tenant_id, query, bm25_text, legs, limit, floor, model, degraded=False)
            legs += _semantic_legs(c, tenant_id, query, vector, embedder, filters, k, vectors)
        except (EmbeddingUnavailable, EmbeddingKeyRefused) as e:  # a refused key is alarmed, not a 500
            log.warning("embedder unavailable; keyword-only answer", error=type(e).__name__)
            degraded = True
            model = None
    if mode in {"keyword", "hybrid"} or degraded:
        legs.append(("keyword", c.index.keyword(tenant_id, bm25_text, filters, k)))
        if cards:  # file cards are ranked by a BM25 leg of their own (their statistics kept apart)
            legs.append(("cards", c.index.keyword(tenant_id, bm25_text, filters, k, kind="card")))
    return _ranked(c, tenant_id, query, bm25_text, legs, limit, floor, model, degraded)


def _scoped(c: Container, tenant_id: str, filters: SearchFilters) -> SearchFilters | None:
    """The filters as the index applies them: tags through the tenant's merges ("Needs Review" finds
    needs-review, a merged-away name its target), an entity as the ids of the files naming it (None when no
    file does)."""
    if filters.tags:
        from semfs.pipeline.vocabulary import resolve

        typed = [slugify(t) or t for t in filters.tags]
        filters = filters.model_copy(update={"tags": resolve(c, tenant_id, typed)})
    if filters.entity:
        from semfs.pipeline.file_entities import files_naming

        named = files_naming(c, tenant_id, filters.entity)
        if filters.file_ids:
            named = [f for f in named if f in set(filters.file_ids)]
        if not named:
            return None
        filters = filters.model_copy(update={"entity": None, "file_ids": named})
    return filters


def _semantic_legs(
    c: Container,
    tenant_id: str,
    query: str,
    vector: list[float],
    embedder: Embedder,
    filters: SearchFilters,
    k: int,
    vectors: Vectors | None,
) -> list[tuple[Leg, list[IndexHit]]]:
    """The k-NN leg; in new-files-only mode a second one over the files embedded with the configured model
    since the change."""
    legs: list[tuple[Leg, list[IndexHit]]] = [
        ("semantic", c.index.knn(tenant_id, vector, filters, k, model=embedder.model))
    ]
    if c.settings.embedding.new_files_only and embedder is not c.embedder:
        new_vector = query_vector(c.embedder, query, vectors)
        legs.append(("semantic", c.index.knn_staged(tenant_id, new_vector, filters, k, model=c.embedder.model)))
    return legs


@cache
def _stop_lists() -> dict[str, frozenset[str]]:
    """Stop words of 33 languages (the ``stop-words`` package), by ISO 639-1 code."""
    import stop_words

    return {code: frozenset(stop_words.get_stop_words(code)) for code in stop_words.LANGUAGE_MAPPING}


def keyword_text(query: str) -> str:
    """The query for the BM25 legs: without its function words when it is plainly in a language other
    than English.

    The keyword index keeps every word (``en_stem`` drops none) and BM25 weighs a word by its rarity, so
    in a mostly English collection "wer", "hat" and "die" of a German question are rare and look
    informative: the German document that contains them outranks the English one that answers it.

    A query counts as being in language L when at least 2 distinct words, and 30 % of its words, are stop
    words of L and not English function words (``STOPWORDS``), and they outnumber its English ones. Then
    L's stop words are left out, unless nothing would remain. English, short and mixed queries are
    returned as they are: "die hard review", "war crimes" and "la la land soundtrack" keep every word.
    """
    found = words(query)
    tokens = [w.lower() for w in found]
    if len(tokens) < 3:
        return query
    lists = _stop_lists()
    foreign = [t for t in tokens if t not in STOPWORDS]  # an English function word is no evidence
    lang, hits = max(
        ((code, len(set(foreign) & stop)) for code, stop in lists.items() if code != "en"),
        key=lambda x: x[1],
    )
    if hits < 2 or hits <= len(tokens) - len(foreign) or hits < 0.3 * len(tokens):
        return query
    stop = lists[lang]
    kept = [w for w, t in zip(found, tokens, strict=True) if t not in stop]
    return " ".join(kept) if kept else query


def _ranked(
    c: Container,
    tenant_id: str,
    query: str,
    bm25_text: str,
    legs: list[tuple[Leg, list[IndexHit]]],
    limit: int,
    floor: bool,
    model: str | None,
    degraded: bool,
) -> Retrieved:
    """Fuse the legs per file; then, with a reranker configured, let it reorder the top files; then
    weigh each file's evidence: the first ``limit`` files, or none when not one reaches the floor."""
    s = c.settings.search
    weights = [s.fusion_weights.get(name, 1.0) for name, _ in legs]
    files = fuse_files([hits for _, hits in legs], s.fusion, s.rrf_k, weights)
    files = _reranked(c, tenant_id, query, files)
    candidates = files[:limit]
    docs = c.index.get_docs(tenant_id, [h.chunk_id for _, _, hits in candidates for h in hits])
    evidence = _evidence(query_terms(bm25_text), [hits for name, hits in legs if name == "semantic"], candidates, docs)
    extra = {name: Calibration(**cal.model_dump()) for name, cal in s.relevance_calibrations.items()}
    judged = {f: judge(e, model, extra) for f, e in evidence.items()}
    scored = {f: j.relevance for f, j in judged.items()}
    # the floor labels, it does not hide (issue 51): when no file reaches it, the files are still shown,
    # every one weak, unless not one of them shares a content word with the query (then nothing here
    # is about it: "zzqqxx", or a question in words no file uses). A floor per file cost SciFact 0.017
    # nDCG@10, relevant abstracts with few of the query's words and a middling cosine among them.
    answered = not floor or any(j.relevance >= j.floor for j in judged.values())
    related = answered or _shares_a_word(content_terms(bm25_text), candidates, docs)
    kept = candidates if related else []
    return Retrieved(
        files=kept,
        degraded=degraded,
        keyword_query=bm25_text,
        relevance=scored,
        evidence=evidence,
        docs=docs,
        below_floor=len(candidates) - len(kept),
        answered=answered and bool(kept),
    )


def _shares_a_word(terms: list[str], files: list[RankedFile], docs: dict[str, IndexDoc]) -> bool:
    """Whether any of ``files`` (its title, name or matched passages) holds one of ``terms``."""
    if not terms:
        return False
    texts = [t for _, _, hits in files for h in hits if h.chunk_id in docs for t in _doc_texts(docs[h.chunk_id])]
    return coverage(terms, texts) > 0


def _doc_texts(doc: IndexDoc) -> tuple[str, str, str]:
    return doc.title, doc.filename, doc.text


def by_relevance(files: list[RankedFile], relevance: dict[str, float]) -> list[RankedFile]:
    """The files in the order of the relevance they are shown with; ties (and files without one) keep the
    ranking's order. A person reads a list top-down as most relevant first: 0.00 above 0.01, or an
    agent's draft at 0.70 above the agreement at 0.74, reads as a mistake."""
    return sorted(files, key=lambda f: -relevance.get(f[0], 0.0))


def _evidence(
    terms: list[str], semantic: list[list[IndexHit]], files: list[RankedFile], docs: dict[str, IndexDoc]
) -> dict[str, Evidence]:
    """Each file's evidence (``domain/relevance.py``): its nearest passage's cosine, where a k-NN leg
    ran (a file that leg did not return gets the leg's lowest score, which bounds its own), and the
    share of the query's words in its title, name and matched passages."""
    best: dict[str, float] = {}
    for leg in semantic:
        for hit in leg:
            best[hit.file_id] = max(best.get(hit.file_id, hit.score), hit.score)
    lowest = min((h.score for leg in semantic for h in leg), default=None)
    out: dict[str, Evidence] = {}
    for file_id, _, hits in files:
        found = [docs[h.chunk_id] for h in hits if h.chunk_id in docs]
        texts = [t for d in found[:1] for t in (d.title, d.filename)] + [d.text for d in found]
        cosine = best.get(file_id, lowest)
        out[file_id] = Evidence(cosine=cosine, coverage=coverage(terms, texts))
    return out


def _reranked(c: Container, tenant_id: str, query: str, files: list[RankedFile]) -> list[RankedFile]:
    """The reranker's top ``n`` files reordered by its score of each one's best passage (their scores
    become its scores); the rest follow in fused order. A failing reranker, or one that reorders
    fewer than two, leaves the fused order."""
    n = c.reranker.top_n
    top, rest = files[:n], files[n:]
    if len(top) < 2:
        return files
    best = [hits[0].chunk_id for _, _, hits in top]
    docs = c.index.get_docs(tenant_id, best)
    try:
        scores = c.reranker.rerank(query, [docs[cid].text if cid in docs else "" for cid in best])
    except RerankUnavailable as e:
        log.warning("reranker unavailable; fused order kept", error=type(e).__name__)
        return files
    order = sorted(range(len(top)), key=lambda i: -scores[i])
    return [(top[i][0], scores[i], top[i][2]) for i in order] + rest


def highlight(text: str, terms: list[str], width: int = SNIPPET_CHARS) -> tuple[str, list[tuple[int, int]]]:
    """A window of ``text`` around the first query-term match, and the (start, end) of each match in it.

    Terms match as word prefixes of up to 5 characters, roughly as the stemmed keyword leg does.
    """
    flat = " ".join(text.split())
    stems = [t[: max(4, min(len(t), 5))] for t in terms if t]
    pattern = re.compile(r"\b(" + "|".join(re.escape(s) for s in stems) + r")\w*", re.IGNORECASE) if stems else None
    start = 0
    if pattern is not None:
        first = pattern.search(flat)
        if first is not None and first.start() > width // 3:
            start = flat.rfind(" ", 0, first.start() - width // 4) + 1
    window = flat[start : start + width]
    if start + width < len(flat):
        cut = window.rfind(" ")
        window = (window[:cut] if cut > width // 2 else window) + " …"
    if start > 0:
        window = "… " + window
    spans = [(m.start(), m.end()) for m in pattern.finditer(window)] if pattern is not None else []
    return window, spans


def shown_scores(
    c: Container, files: Sequence[tuple[str, float, list[IndexHit]]], readers: tuple[str, ...] | None
) -> list[tuple[str, float, list[IndexHit]]]:
    """The files with the score a caller is shown. Where the index ranks a reader's keyword leg by the
    statistics of the files they can see (``reader_statistics``), or the caller reads every file, the
    fused score. Elsewhere (OpenSearch, whose BM25 weighs a word by how rare it is in the shard, files the
    caller cannot see included) a caller who reads as ``readers`` gets each file's reciprocal rank
    (1, 1/2, 1/3 …): a raw keyword score would move when a file they cannot see is added."""
    if readers is None or c.index.reader_statistics:
        return list(files)
    return [(f, 1.0 / (i + 1), hits) for i, (f, _, hits) in enumerate(files)]


def below_their_sources(items: list[SearchResultItem]) -> list[SearchResultItem]:
    """The results with each file an agent made listed after every file it was made from that is listed
    too: a draft that quotes the agreement is no better a source than the agreement (issue 52)."""
    out = list(items)
    for item in items:
        sources = set(item.origin.get("derived_from") or []) if item.source_type == "agent_generated" else set()
        at = [i for i, x in enumerate(out) if x.file_id in sources]
        here = out.index(item)
        if at and max(at) > here:
            out.insert(max(at), out.pop(here))
    return out


def search(c: Container, tenant_id: str, request: SearchRequest) -> SearchResponse:
    """Search one tenant's files; each result carries its best snippets with their locations and its
    calibrated relevance. A query nothing answers closely enough gets no results and a note saying so."""
    found = retrieve(c, tenant_id, request.query, request.mode, request.filters, request.limit)
    docs = found.docs
    terms = query_terms(found.keyword_query)  # the words the keyword leg searched
    items: list[SearchResultItem] = []
    for file_id, score, hits in shown_scores(c, by_relevance(found.files, found.relevance), request.filters.readers):
        try:
            record = c.repo.get(tenant_id, file_id)
        except NotFound:
            continue  # the index is derived: a record gone since is simply not shown
        if record.deleted_at is not None:
            continue
        snippets: list[Snippet] = []
        chunk_hits = [h for h in hits if h.chunk_id in docs and docs[h.chunk_id].kind == "chunk"]
        for hit in chunk_hits or [h for h in hits if h.chunk_id in docs]:
            doc = docs[hit.chunk_id]
            text, spans = highlight(doc.text, terms)
            snippets.append(Snippet(chunk_id=doc.chunk_id, text=text, location=doc.location, highlights=spans))
        relevance = found.relevance.get(file_id, 0.0)
        items.append(
            SearchResultItem(
                file_id=file_id,
                filename=record.filename,
                title=record.title,
                summary=record.summary,
                score=round(score, 6),
                relevance=round(relevance, 4),
                weak=relevance < WEAK,
                version=record.version,
                is_latest=record.is_latest,
                tags=record.all_tags,
                source_type=record.source_type,
                mime_type=record.mime_type,
                snippets=snippets,
                document_date=record.document_date,
                ingested_at=record.created_at,
                origin={k: record.provenance[k] for k in ORIGIN_KEYS if record.provenance.get(k)},
                came_from=record.came_from,
            )
        )
    items = below_their_sources(items)
    note = None
    if not items:
        note = (
            f"nothing here is about the query: {found.below_floor} file(s) came close in theme, none shares a"
            " word with it"
            if found.below_floor
            else "no file matches the query"
        )
    elif not found.answered:
        note = "no file answers the query closely: these share a word or a theme with it, each marked weak"
    log.info(
        "search",
        mode=request.mode,
        results=len(items),
        degraded=found.degraded,
        query_chars=len(request.query),
    )
    return SearchResponse(
        results=items, degraded=found.degraded, mode=request.mode, left_out=found.below_floor, note=note
    )
