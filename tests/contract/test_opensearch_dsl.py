"""The OpenSearch request bodies as compiled DSL (no OpenSearch with k-NN runs offline).

A recording client captures what ``OpenSearchIndex`` sends; the bodies are checked against the
documented shapes: the tenant filter inside the ``knn`` clause, the hybrid query's ``filter`` and
its ``search_pipeline`` parameter, the index mapping from the configured dimension.
"""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from semfs.adapters.aws.opensearch import OpenSearchIndex, index_body, rrf_pipeline_body, scope_filter
from semfs.config import Settings
from semfs.domain.models import SearchFilters

pytestmark = pytest.mark.contract


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.indices = self

    def exists(self, **kw: Any) -> bool:
        return True

    def get_alias(self, **kw: Any) -> dict[str, Any]:
        return {"semfs-chunks-v-m": {"aliases": {"semfs-chunks": {}}}}

    def get_mapping(self, **kw: Any) -> dict[str, Any]:
        return {"semfs-chunks-v-m": {"mappings": {"_meta": {"embedding_model": "m"}}}}

    def search(self, **kw: Any) -> dict[str, Any]:
        self.calls.append(("search", kw))
        return {"hits": {"hits": [{"_score": 0.9, "_source": {"chunk_id": "f:0", "file_id": "f"}}]}}


@pytest.fixture
def recorded() -> tuple[OpenSearchIndex, Recorder]:
    rec = Recorder()
    settings = Settings(opensearch_endpoint="https://search.example", hybrid_pipeline="semfs-rrf")
    return OpenSearchIndex(settings, dim=3, client=rec), rec


def test_knn_body_has_the_tenant_filter_inside_the_knn_clause(recorded: tuple[OpenSearchIndex, Recorder]) -> None:
    index, rec = recorded
    hits = index.knn("acme", [0.1, 0.2, 0.3], SearchFilters(tags=["legal"]), 50)
    assert [h.chunk_id for h in hits] == ["f:0"]
    body = rec.calls[0][1]["body"]
    knn = body["query"]["knn"]["embedding"]
    assert knn["vector"] == [0.1, 0.2, 0.3] and knn["k"] == 50 and body["size"] == 50
    inner = knn["filter"]["bool"]["filter"]
    assert inner[0] == {"term": {"tenant_id": "acme"}}
    assert {"term": {"is_latest": True}} in inner and {"term": {"tags": "legal"}} in inner
    assert set(body["query"]) == {"knn"}  # no post-filter outside the knn clause


def test_keyword_body_filters_in_bool_filter(recorded: tuple[OpenSearchIndex, Recorder]) -> None:
    index, rec = recorded
    index.keyword("acme", "What are the payment terms?", SearchFilters(thread_id="t1"), 20)
    query = rec.calls[0][1]["body"]["query"]["bool"]
    assert query["must"][0]["multi_match"]["query"] == "payment terms"
    assert query["must"][0]["multi_match"]["fields"] == ["title^0.25", "filename^1", "text^1", "tags_text^1"]
    assert query["filter"][0] == {"term": {"tenant_id": "acme"}}
    assert {"term": {"thread_id": "t1"}} in query["filter"]


def test_hybrid_body_and_pipeline(recorded: tuple[OpenSearchIndex, Recorder]) -> None:
    index, rec = recorded
    index.hybrid("acme", "payment terms", [1.0, 0.0, 0.0], SearchFilters(), 30)
    call = rec.calls[0][1]
    assert call["params"] == {"search_pipeline": "semfs-rrf"}
    hybrid = call["body"]["query"]["hybrid"]
    keyword, knn = hybrid["queries"]
    # the tenant scope sits inside every sub-query: a top-level hybrid.filter is ignored by engines that
    # predate hybrid pre-filtering, and the scope must never depend on the engine version
    assert "filter" not in hybrid
    assert keyword["bool"]["filter"][0] == {"term": {"tenant_id": "acme"}}
    assert "multi_match" in keyword["bool"]["must"][0]
    assert knn["knn"]["embedding"]["filter"]["bool"]["filter"][0] == {"term": {"tenant_id": "acme"}}
    ranker = rrf_pipeline_body()["phase_results_processors"][0]["score-ranker-processor"]
    assert ranker["combination"] == {"technique": "rrf", "rank_constant": 60}


def test_scope_filter_covers_every_filter() -> None:
    clauses = scope_filter(
        "acme",
        SearchFilters(
            tags=["a", "b"],
            source_type="email_attachment",
            contact_id="c_x",
            thread_id="t",
            mime_type="application/pdf",
            date_from=date(2026, 1, 1),
            date_to=date(2026, 1, 31),
            include_history=True,
            file_ids=["f1"],
        ),
    )
    assert clauses[0] == {"term": {"tenant_id": "acme"}}
    assert {"term": {"is_latest": True}} not in clauses
    assert {"range": {"created_at": {"gte": "2026-01-01", "lt": "2026-02-01"}}} in clauses
    assert {"terms": {"file_id": ["f1"]}} in clauses
    assert len(clauses) == 9


def test_index_mapping_follows_the_embedding_dimension() -> None:
    body = index_body(1536)
    emb = body["mappings"]["properties"]["embedding"]
    assert emb["type"] == "knn_vector" and emb["dimension"] == 1536
    assert emb["method"]["name"] == "hnsw" and emb["method"]["space_type"] == "cosinesimil"
    assert body["settings"]["index"]["knn"] is True
    assert body["mappings"]["properties"]["text"]["analyzer"] == "english"


class BulkRecorder(Recorder):
    """Answers bulk requests from a script of per-item statuses."""

    def __init__(self, script: list[list[int]]) -> None:
        super().__init__()
        self.script = script
        self.bulks: list[list[dict[str, Any]]] = []

    def search(self, **kw: Any) -> dict[str, Any]:
        return {"hits": {"hits": []}}

    def bulk(self, body: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        self.bulks.append(body)
        statuses = self.script.pop(0)
        return {
            "errors": any(s >= 300 for s in statuses),
            "items": [{"index": {"_id": f"x{i}", "status": s}} for i, s in enumerate(statuses)],
        }


def _docs(n: int) -> list[Any]:
    from tests.builders import index_doc

    return [index_doc("f", i, "x", title="t", lineage_id="l", embedding=[0.0, 0.0, 1.0]) for i in range(n)]


def test_bulk_retries_only_the_throttled_items() -> None:
    rec = BulkRecorder([[201, 429, 201], [201]])
    waits: list[float] = []
    index = OpenSearchIndex(Settings(opensearch_endpoint="https://x"), dim=3, client=rec, sleep=waits.append)
    index.replace_file("acme", "f", _docs(3))
    assert len(rec.bulks) == 2 and len(waits) == 1
    assert rec.bulks[1] == rec.bulks[0][2:4]  # the second item's action + source, resent alone


def test_bulk_surfaces_other_item_failures() -> None:
    from semfs.domain.errors import PermanentError

    rec = BulkRecorder([[201, 400, 201]])
    with pytest.raises(PermanentError, match="1 document"):
        OpenSearchIndex(Settings(opensearch_endpoint="https://x"), dim=3, client=rec).replace_file(
            "acme", "f", _docs(3)
        )


def test_search_uses_the_native_hybrid_query_when_a_pipeline_is_configured(
    recorded: tuple[OpenSearchIndex, Recorder], tmp_path: Any
) -> None:
    from semfs.adapters.local.hash_embedder import HashEmbedder
    from semfs.pipeline.search import retrieve

    index, rec = recorded
    container = type("C", (), {})()
    container.index, container.embedder = index, HashEmbedder(dim=3)
    container.query_embedder = lambda: container.embedder
    container.settings = Settings(opensearch_endpoint="https://x", hybrid_pipeline="semfs-rrf")
    found = retrieve(container, "acme", "payment terms", "hybrid", SearchFilters(), 10)  # type: ignore[arg-type]
    assert [f for f, _, _ in found.files] == ["f"]
    (call,) = rec.calls
    assert "hybrid" in call[1]["body"]["query"] and call[1]["params"] == {"search_pipeline": "semfs-rrf"}


def test_knn_over_a_staged_model_targets_that_models_index(recorded: tuple[OpenSearchIndex, Recorder]) -> None:
    index, rec = recorded
    index.knn_staged("acme", [0.1, 0.2, 0.3], SearchFilters(), 10, model="m2")
    (call,) = rec.calls
    assert call[1]["index"] == "semfs-chunks-v-m2"
    assert call[1]["body"]["query"]["knn"]["embedding"]["filter"]["bool"]["filter"][0] == {
        "term": {"tenant_id": "acme"}
    }
    rec.calls.clear()
    assert index.knn_staged("acme", [0.1, 0.2, 0.3], SearchFilters(), 10, model="m") == []  # the active one


def test_index_creation_tolerates_a_concurrent_creator() -> None:
    """Two Index functions on a new stack: both see no index, one create wins, the other gets 400
    resource_already_exists_exception - which must not fail the file."""
    from opensearchpy.exceptions import RequestError

    class Racing:
        def __init__(self) -> None:
            self.created = 0
            self.indices = self

        def exists(self, index: str) -> bool:
            return self.created > 0

        def create(self, index: str, body: Any) -> None:
            self.created += 1  # the other function got there first
            raise RequestError(400, "resource_already_exists_exception", {})

    client = Racing()
    index = OpenSearchIndex(Settings(opensearch_endpoint="https://x"), dim=3, client=client)
    index.ensure_index()  # no error
    assert client.created == 1


class SizeLimitedDomain(Recorder):
    """Enforces a managed domain's HTTP request-size limit (10 MiB on t3 instance types): a larger _bulk
    is refused with 413, as the domain refuses it."""

    LIMIT = 10 * 1024 * 1024

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def search(self, **kw: Any) -> dict[str, Any]:
        return {"hits": {"hits": []}}

    def bulk(self, body: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        from opensearchpy.exceptions import TransportError

        size = sum(len(json.dumps(x, separators=(",", ":"), ensure_ascii=False).encode()) + 1 for x in body)
        if size > self.LIMIT:
            raise TransportError(413, "request_entity_too_large", {})
        self.sizes.append(size)
        n = sum(1 for x in body if "index" in x or "delete" in x)
        return {"errors": False, "items": [{"index": {"_id": str(i), "status": 201}} for i in range(n)]}


def test_a_large_file_is_sent_in_bulk_requests_under_the_size_limit() -> None:
    from tests.builders import index_doc

    # 1,000 chunks at 1,536 dimensions: ~32 MiB of ndjson in one request, three times the limit
    docs = [index_doc("f", i, "text " * 100, lineage_id="l", embedding=[0.123456789] * 1536) for i in range(1000)]
    domain = SizeLimitedDomain()
    index = OpenSearchIndex(Settings(opensearch_endpoint="https://x"), dim=1536, client=domain)
    index.replace_file("acme", "f", docs)
    assert len(domain.sizes) >= 4 and max(domain.sizes) <= Settings().bulk_max_bytes
