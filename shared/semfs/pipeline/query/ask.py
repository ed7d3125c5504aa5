"""Grounded answers (``/ask``) and agent briefings (``/context``) over retrieved chunks.

An answer is returned only when every citation is a chunk retrieved in the caller's scope and its
quote occurs in that chunk, and its text passes the output rules (``domain/enrichment.checked_answer``:
links, addresses and numbers taken out, markup and echoes refused, a length cap); otherwise the answer is
``no_answer`` with the reason. Without an LLM
the answer is extractive: the best supporting sentences, each cited. Which answerer writes it is the
composition root's choice (``pipeline/query/answerers.py``); this module only retrieves and reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from semfs.domain.enrichment import checked_answer
from semfs.domain.errors import EnrichmentFailed, NotFound
from semfs.domain.features import OFF, enabled
from semfs.domain.ids import chunk_id
from semfs.domain.models import IndexDoc, SearchFilters
from semfs.domain.relevance import WEAK
from semfs.domain.results import Answer, BriefingItem, CitedPassage
from semfs.domain.text import content_terms, query_terms
from semfs.pipeline.file_entities import named_in
from semfs.pipeline.query.answerers import literals, subject_of
from semfs.pipeline.query.search import Vectors, by_relevance, highlight, keyword_text, retrieve, shown_scores

if TYPE_CHECKING:
    from semfs.ports import Container


MIN_QUERY_CHARS = 10
ANSWER_MIN = WEAK  # the relevance a file needs to be answered from (bench/answer_quality.py)
LITERAL_PASSAGES = 6  # the passages that say an option a question names, fetched beside the best hits


def _chunks_in_scope(
    c: Container, tenant: str, question: str, filters: SearchFilters, limit: int
) -> tuple[list[IndexDoc], str, str | None]:
    """The retrieved chunks of the files relevant enough to answer from (``ANSWER_MIN`` or above), the text
    the keyword legs searched for them (``keyword_text``), and, when none is, why."""
    found = retrieve(c, tenant, question, "hybrid", filters, limit)
    strong = [(f, hits) for f, _, hits in found.files if found.relevance[f] >= ANSWER_MIN]
    named = literals(question)
    if named:  # a question about an option: any file found may hold its entry, which is evidence enough
        strong = [(f, hits) for f, _, hits in found.files]
    if not strong:
        if not found.files:
            why = "nothing in scope is relevant enough to the question" if found.below_floor else ""
            return [], found.keyword_query, why or "nothing in scope matches the question"
        best = max(found.relevance[f] for f, _, _ in found.files)
        return [], found.keyword_query, f"the closest passages are weak evidence (relevance {best:.2f})"
    ids = [h.chunk_id for _, hits in strong for h in hits]
    docs = dict(found.docs)
    extra = _defining_passages(c, tenant, question, named, filters, [f for f, _ in strong])
    docs |= c.index.get_docs(tenant, [i for i in extra if i not in docs])
    ids = list(dict.fromkeys([*extra, *ids]))
    return [docs[i] for i in ids if i in docs and docs[i].kind == "chunk"], found.keyword_query, None


def _defining_passages(
    c: Container, tenant: str, question: str, named: list[str], filters: SearchFilters, files: list[str]
) -> list[str]:
    """Chunks that may define what the question asks about, read before the best hits. For an option: the
    passages of the files found that say it (its entry may be past their best hits), and those of any file
    with the question's words (the page asked about may not be among them). For "what is gzip used for?":
    where each file found begins (a page says what it is there)."""
    if named:
        scoped = filters.model_copy(update={"file_ids": files})
        said = c.index.keyword(tenant, " ".join(named), scoped, LITERAL_PASSAGES)
        said += c.index.keyword(tenant, " ".join([*named, question]), filters, LITERAL_PASSAGES)
        return list(dict.fromkeys(h.chunk_id for h in said))
    return [chunk_id(f, 0) for f in files] if subject_of(question) else []


FOLLOWS_READ = 2  # a follow-up is read with this many of the questions before it


def ask(
    c: Container,
    tenant: str,
    question: str,
    filters: SearchFilters | None = None,
    limit: int = 6,
    follows: Sequence[str] = (),
) -> Answer:
    """``answered`` with the answer, its citations and the method, or ``no_answer`` with the reason.
    ``follows``: a follow-up's earlier questions, oldest first; the last ``FOLLOWS_READ`` are read with the
    question, so "and for contractors?" finds what "how many days of leave do staff get?" was about."""
    if not enabled(c.settings, "ask"):
        return Answer.refused(OFF["ask"])
    question = " ".join(question.split())
    if len(question) < MIN_QUERY_CHARS and not follows:
        return Answer.refused("the question is too short")
    earlier = [" ".join(q.split()) for q in follows if q.strip()][-FOLLOWS_READ:]
    read_as = " ".join([*earlier, question])[:4000]  # what finds the passages: the follow-up in its conversation
    if len(read_as) < MIN_QUERY_CHARS:
        return Answer.refused("the question is too short")
    chunks, keyword_query, weak = _chunks_in_scope(c, tenant, read_as, without_agent_files(filters), limit)
    if not chunks:
        return Answer.refused(weak or "nothing in scope matches the question")
    if earlier:  # the passages are the conversation's; the sentences that answer are the follow-up's
        keyword_query = keyword_text(question)
    result = c.answerer.answer(question, keyword_query, chunks)
    if isinstance(result, str):
        return Answer.refused(result)
    answer, citations = result
    try:  # the output rules: a model's answer (and a document's sentences) are untrusted text
        shown = checked_answer(answer)
    except EnrichmentFailed as e:
        return Answer.refused(e.reason)
    cited = [CitedPassage.of(x) for x in citations]
    return Answer(status="answered", answer=shown, citations=cited, method=c.answerer.method)


def without_agent_files(filters: SearchFilters | None) -> SearchFilters:
    """``filters`` for an answer or a briefing: without files agents made unless the caller asked for them.
    An agent that saved a draft and asked again was answered from its own draft (issue 52)."""
    filters = filters or SearchFilters()
    if filters.include_agent_files is None:
        return filters.model_copy(update={"include_agent_files": False})
    return filters


def _by_subject(
    c: Container,
    tenant: str,
    subject: str,
    filters: SearchFilters,
    ids: list[str],
    relevance: dict[str, float],
    vectors: Vectors,
) -> dict[str, float]:
    """Each file's relevance to the message's subject where it is higher than to the whole message. A
    relevance weighs the share of the query's words a file holds, and a message of 150 words shares few of
    them with the file it is about: the right file was marked weak (5 of 10 right top files below 0.05,
    issue 51.2). A subject says in a few words what the message is about; a vague one changes nothing."""
    if not ids or not content_terms(subject):
        return {}
    scoped = filters.model_copy(update={"file_ids": ids})
    found = retrieve(c, tenant, subject, "hybrid", scoped, len(ids), floor=False, vectors=vectors)
    return {f: r for f, r in found.relevance.items() if r > relevance.get(f, 0.0)}


def context(
    c: Container, tenant: str, subject: str, body: str, filters: SearchFilters | None = None, limit: int = 5
) -> list[BriefingItem]:
    """A briefing for an agent's prompt: the files relevant to a message, and why each matched. The files
    that name what the message names (its invoice number, the organisation, the people: entities the
    tenant's files are known to name) come first, most of them named first, each saying which."""
    text = " ".join(f"{subject}\n{body}".split())[:2000]
    if len(text) < MIN_QUERY_CHARS:
        return []
    filters = without_agent_files(filters)
    named = named_in(c, tenant, f"{subject}\n{body}")
    naming: dict[str, list[str]] = {}  # file id → the labels of the message's entities it names
    for entity in named:
        for m in c.entities.files(tenant, entity.entity_id, limit=50):
            naming.setdefault(m.file_id, []).append(entity.label)
    vectors: Vectors = {}  # the message is embedded once, however often it is ranked
    found = retrieve(c, tenant, text, "hybrid", filters, limit, vectors=vectors)
    ranked = list(found.files)
    relevance, docs = dict(found.relevance), dict(found.docs)
    if naming:  # ranked by the message's words among themselves, whether or not they reached the floor
        ids = [f for f in naming if not filters.file_ids or f in filters.file_ids]
        scoped = filters.model_copy(update={"file_ids": ids})
        first = retrieve(c, tenant, text, "hybrid", scoped, limit, floor=False, vectors=vectors) if ids else None
        if first is not None:
            relevance |= first.relevance
            docs |= first.docs
            order = sorted(first.files, key=lambda f: -len(naming.get(f[0], [])))  # (stable: by score among ties)
            ranked = [*order, *(f for f in ranked if f[0] not in naming)][:limit]
    relevance |= _by_subject(c, tenant, subject, filters, [f for f, _, _ in ranked], relevance, vectors)
    ranked = by_relevance(ranked, relevance)
    brief = []
    for file_id, score, hits in shown_scores(c, ranked, filters.readers):
        try:
            record = c.repo.get(tenant, file_id)
        except NotFound:  # the index is derived: a record gone since is simply not shown
            continue
        doc = docs.get(hits[0].chunk_id)
        why = highlight(doc.text, query_terms(text), 200)[0] if doc else ""
        if naming.get(file_id):
            why = f"names {', '.join(dict.fromkeys(naming[file_id]))}" + (f": {why}" if why else "")
        brief.append(
            BriefingItem(
                file_id=file_id,
                filename=record.filename,
                title=record.title,
                summary=record.summary,
                score=round(score, 6),
                relevance=round(relevance.get(file_id, 0.0), 4),
                why=why,
                entities=list(dict.fromkeys(naming.get(file_id, []))),
                came_from=record.came_from,
                source_type=record.source_type,
                version=record.version,
                is_latest=record.is_latest,
            )
        )
    return brief
