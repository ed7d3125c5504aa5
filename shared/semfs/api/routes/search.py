"""Finding things: hybrid search, grounded answers and the context briefing for agents."""

from __future__ import annotations

from semfs.api.models import (
    AskOut,
    AskRequest,
    ContextOut,
    ContextRequest,
)
from semfs.api.request import container, current_tenant, named, new_router, ok, record_in_tenant
from semfs.domain.models import SearchFilters, SearchRequest, SearchResponse
from semfs.pipeline import names
from semfs.pipeline.query.ask import ask, context
from semfs.pipeline.query.search import search

router = new_router()


@router.post("/search", summary="Search files by meaning and keyword", responses=ok(SearchResponse))
def search_route(request: SearchRequest) -> SearchResponse:
    """Hybrid (BM25 + k-NN fused), keyword or semantic search over the caller's files, grouped by file,
    each with its best snippets and their locations. Filters take ids, or a thread's subject and a
    contact's name or address."""
    tenant = current_tenant()
    scoped = request.model_copy(update={"filters": named(tenant, request.filters)})
    return search(container(), tenant, scoped)


@router.post("/ask", summary="A grounded answer with citations", responses=ok(AskOut))
def ask_route(request: AskRequest) -> AskOut:
    """An answer only when every citation is a retrieved passage in scope whose quote occurs in it;
    otherwise ``no_answer`` with the reason."""
    tenant = current_tenant()
    filters = named(tenant, request.filters)
    if request.file_id:
        filters = filters.model_copy(update={"file_ids": [record_in_tenant(request.file_id).file_id]})
    if request.thread_id:
        filters = filters.model_copy(update={"thread_id": names.thread_id(container(), tenant, request.thread_id)})
    answer = ask(container(), tenant, request.question, filters, request.limit, follows=request.follows)
    return AskOut.model_validate(answer.model_dump())


@router.post("/context", summary="The files an agent should know about for a message", responses=ok(ContextOut))
def context_route(request: ContextRequest) -> ContextOut:
    tenant = current_tenant()
    filters = named(tenant, SearchFilters(contact_id=request.contact_id, thread_id=request.thread_id))
    items = context(container(), tenant, request.subject, request.body, filters, request.limit)
    return ContextOut.model_validate({"items": [item.model_dump() for item in items]})
