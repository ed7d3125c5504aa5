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

from semfs.adapters.aws.opensearch import (
    CARD_TEXT,
    KEYWORD_FIELDS,
    KEYWORD_TEMPLATES,
    OpenSearchIndex,
    index_body,
    scope_filter,
    tenant_key,
)
from semfs.config import Settings
from semfs.domain.models import IndexHit, SearchFilters

pytestmark = pytest.mark.contract


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.mappings: list[dict[str, Any]] = []
        self.indices = self

    def exists(self, **kw: Any) -> bool:
        return True

    def get_alias(self, **kw: Any) -> dict[str, Any]:
        return {"semfs-chunks-v-m": {"aliases": {"semfs-chunks": {}}}}

    def get_mapping(self, **kw: Any) -> dict[str, Any]:
        return {"semfs-chunks-v-m": {"mappings": {"_meta": {"embedding_model": "m"}}}}

    def put_mapping(self, **kw: Any) -> dict[str, Any]:
        self.mappings.append(kw)
        return {"acknowledged": True}

    def search(self, **kw: Any) -> dict[str, Any]:
        self.calls.append(("search", kw))
        return {"hits": {"hits": [{"_score": 0.9, "_source": {"chunk_id": "f:0", "file_id": "f"}}]}}

    msearch_errors: dict[int, int] = {}  # noqa: RUF012 - set per test
    msearch_legs: list[list[tuple[str, str, float]]] | None = None

    def msearch(self, **kw: Any) -> dict[str, Any]:
        """As _msearch answers: 200 with one response per search, an error in place of a failed one."""
        self.calls.append(("msearch", kw))
        out: list[dict[str, Any]] = []
        for n in range(len(kw["body"]) // 2):
            if n in self.msearch_errors:
                out.append({"error": {"type": "es_rejected_execution_exception"}, "status": self.msearch_errors[n]})
                continue
            rows = self.msearch_legs[n] if self.msearch_legs else [("f:0", "f", 0.9)]
            hits = [{"_score": s, "_source": {"chunk_id": c, "file_id": f}} for c, f, s in rows]
            out.append({"hits": {"hits": hits}, "status": 200})
        return {"responses": out}


@pytest.fixture
def recorded() -> tuple[OpenSearchIndex, Recorder]:
    rec = Recorder()
    settings = Settings(opensearch_endpoint="https://search.example")
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
    own = f"kw.{tenant_key('acme')}"
    assert query["must"][0]["multi_match"]["fields"] == [
        f"{own}.title^0.25",
        f"{own}.filename^1",
        f"{own}.text^1",
        f"{own}.tags^0.1",
    ]
    assert query["filter"][0] == {"term": {"tenant_id": "acme"}}
    assert {"term": {"thread_id": "t1"}} in query["filter"]


def test_hybrid_legs_go_in_one_msearch_with_the_scope_inside_every_leg(
    recorded: tuple[OpenSearchIndex, Recorder],
) -> None:
    index, rec = recorded
    legs = index.hybrid_legs("acme", "payment terms", [1.0, 0.0, 0.0], SearchFilters(), 30, cards=True)
    assert legs is not None and len(legs) == 3
    ((what, call),) = rec.calls
    assert what == "msearch"
    headers, (knn, keyword, cards) = call["body"][0::2], call["body"][1::2]
    assert headers == [{"index": "semfs-chunks"}] * 3
    for leg, kind in ((keyword, "chunk"), (cards, "card")):
        assert leg["query"]["bool"]["filter"][0] == {"term": {"tenant_id": "acme"}}
        assert {"term": {"kind": kind}} in leg["query"]["bool"]["filter"]
    assert cards["query"]["bool"]["must"][0]["multi_match"]["fields"] == [f"kw.{tenant_key('acme')}.card"]
    assert knn["query"]["knn"]["embedding"]["filter"]["bool"]["filter"][0] == {"term": {"tenant_id": "acme"}}


def test_a_failed_msearch_leg_fails_the_search(recorded: tuple[OpenSearchIndex, Recorder]) -> None:
    """_msearch answers 200 with a per-search error: a throttled leg is retryable, never an empty leg."""
    from semfs.domain.errors import IndexUnavailable

    index, rec = recorded
    rec.msearch_errors = {1: 429}
    with pytest.raises(IndexUnavailable):
        index.hybrid_legs("acme", "payment terms", [1.0, 0.0, 0.0], SearchFilters(), 30, cards=False)


def test_cards_have_their_own_text_field_so_chunk_bm25_statistics_never_count_them(
    recorded: tuple[OpenSearchIndex, Recorder],
) -> None:
    """Lucene keeps BM25's document count and average length per field: a card's text in ``card_text``
    leaves the chunks' ``text`` statistics as if there were no cards. An index made before that field
    existed gets it added by the first writer (a strict mapping would refuse the write otherwise); a reader
    never changes the mapping (its role has no ``es:ESHttpPut``: issue 28), and finds no cards there yet."""
    from semfs.adapters.aws.opensearch import _source
    from tests.builders import index_doc

    card = _source(index_doc("f", 9, "Invoice 2291", kind="card"))
    chunk = _source(index_doc("f", 0, "pallets"))
    assert card["card_text"] == "Invoice 2291" and "text" not in card
    assert chunk["text"] == "pallets" and "card_text" not in chunk
    assert set(index_body(3)["mappings"]["properties"]) >= {"text", "card_text"}
    index, rec = recorded
    index.keyword("acme", "invoice", SearchFilters(), 5, kind="card")
    assert rec.mappings == []
    writer = OpenSearchIndex(Settings(opensearch_endpoint="https://x"), dim=3, client=rec)  # Index's environment
    writer.ensure_index()
    writer.ensure_index()  # once per environment
    assert rec.mappings == [
        {"index": "semfs-chunks", "body": {"properties": {"card_text": CARD_TEXT}}},
        READERS,
        TENANT_FIELDS,
    ]
    query = rec.calls[0][1]["body"]["query"]["bool"]
    assert query["must"][0]["multi_match"]["fields"] == [f"kw.{tenant_key('acme')}.card"]
    assert query["filter"][0] == {"term": {"tenant_id": "acme"}}
    assert query["filter"][-1] == {"term": {"kind": "card"}}


def test_a_writer_that_read_first_still_adds_the_missing_field(recorded: tuple[OpenSearchIndex, Recorder]) -> None:
    """Re-embed asks for the active model (a read) before it writes: finding the index must not count as
    having checked its mapping, or an index made before ``card_text`` would never get the field there."""
    index, rec = recorded
    assert index.active_model() == "m"
    index.ensure_index()
    assert rec.mappings == [
        {"index": "semfs-chunks", "body": {"properties": {"card_text": CARD_TEXT}}},
        READERS,
        TENANT_FIELDS,
    ]


CARDS = {"index": "semfs-chunks", "body": {"properties": {"card_text": CARD_TEXT}}}
READERS = {"index": "semfs-chunks", "body": {"properties": {"readers": {"type": "keyword"}}}}
TENANT_FIELDS = {
    "index": "semfs-chunks",
    "body": {"dynamic_templates": KEYWORD_TEMPLATES, "properties": {"kw": KEYWORD_FIELDS}},
}


def test_each_tenants_keyword_leg_reads_only_its_own_fields_so_its_statistics_are_its_own(
    recorded: tuple[OpenSearchIndex, Recorder],
) -> None:
    """Issue 27: with one shared ``text`` field, tenant a's BM25 score for a rare word fell (1.552 to 1.102)
    once tenant b stored a document with it: the scores told a what b's documents say. Lucene keeps term
    statistics per field (document count, document frequency and average length count the documents that
    have the field), so each document's text also goes under its tenant's own fields and each keyword leg
    searches only the caller's.

    What this test cannot see: osmem-server, the stand-in OpenSearch these tests run on, counts every
    document of the index in BM25's document count, not those with the field as Lucene does, so the score
    itself cannot be shown unchanged there. It checks the rule on the wire: what is written, and what each
    query reads."""
    from semfs.adapters.aws.opensearch import _source
    from tests.builders import index_doc

    a, b = tenant_key("acme"), tenant_key("globex")
    assert a != b and a.isalnum() and tenant_key("x.y z").isalnum()  # any tenant id makes one field name
    doc = index_doc("f", 0, "pallets of zebra tape")
    written = _source(doc)
    assert written["kw"] == {
        tenant_key(doc.tenant_id): {
            "text": "pallets of zebra tape",
            "title": written["title"] or "",
            "filename": written["filename"],
            "tags": written["tags_text"],
        }
    }
    body = index_body(3)
    assert "kw" in body["mappings"]["_source"]["excludes"]  # the text is kept once in _source
    index, rec = recorded
    index.keyword("acme", "zebra", SearchFilters(), 5)
    index.hybrid_legs("globex", "zebra", [1.0, 0.0, 0.0], SearchFilters(), 5, cards=True)
    fields = [rec.calls[0][1]["body"]["query"]["bool"]["must"][0]["multi_match"]["fields"]]
    fields += [leg["query"]["bool"]["must"][0]["multi_match"]["fields"] for leg in rec.calls[1][1]["body"][3::2]]
    assert all(f.startswith(f"kw.{a}.") for f in fields[0])
    assert all(f.startswith(f"kw.{b}.") for leg in fields[1:] for f in leg)


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


def test_readers_filter_inside_the_scope_and_documents_from_before_access_lists_are_the_tenants() -> None:
    """The caller's tokens are a filter clause next to the tenant's, so they sit inside ``knn``'s ``filter``
    (k documents the caller may see, never k before a post-filter). A document indexed before access lists
    has no ``readers``: it is the whole tenant's, so it passes when the caller reads as ``tenant``."""
    members = scope_filter("acme", SearchFilters().read_as(("tenant", "u:ann", "g:hr")))
    assert members[0] == {"term": {"tenant_id": "acme"}}
    assert members[1] == {
        "bool": {
            "should": [
                {"terms": {"readers": ["tenant", "u:ann", "g:hr"]}},
                {"bool": {"must_not": [{"exists": {"field": "readers"}}]}},
            ],
            "minimum_should_match": 1,
        }
    }
    assert scope_filter("acme", SearchFilters().read_as(("u:ann",)))[1] == {"terms": {"readers": ["u:ann"]}}
    assert not any("readers" in str(c) for c in scope_filter("acme", SearchFilters()))  # an admin: no filter
    assert index_body(3)["mappings"]["properties"]["readers"] == {"type": "keyword"}


def test_index_mapping_follows_the_embedding_dimension() -> None:
    body = index_body(1536)
    emb = body["mappings"]["properties"]["embedding"]
    assert emb["type"] == "knn_vector" and emb["dimension"] == 1536
    assert emb["method"]["name"] == "hnsw" and emb["method"]["space_type"] == "cosinesimil"
    assert body["settings"]["index"]["knn"] is True
    assert body["mappings"]["properties"]["text"]["analyzer"] == "english"


def test_a_quantized_index_asks_lucene_for_its_scalar_quantizer() -> None:
    """The shape OpenSearch 2.16-2.19 documents for Lucene's scalar quantization: ``encoder.name`` ``sq`` in the
    HNSW method's parameters, on the lucene engine (faiss has its own encoders; "bits" is only 3.x's)."""
    method = index_body(1536, encoding="sq")["mappings"]["properties"]["embedding"]["method"]
    assert method["engine"] == "lucene" and method["parameters"] == {
        "m": 16,
        "ef_construction": 128,
        "encoder": {"name": "sq"},
    }
    plain = index_body(1536)["mappings"]["properties"]["embedding"]["method"]["parameters"]
    assert "encoder" not in plain


def test_a_new_index_gets_the_configured_shards() -> None:
    """Shards are fixed when an index is created: SEMFS_INDEX_SHARDS (the IndexShards parameter) decides."""

    class Creating:
        def __init__(self) -> None:
            self.indices, self.bodies = self, []

        def exists(self, index: str) -> bool:
            return bool(self.bodies)

        def create(self, index: str, body: Any) -> None:
            self.bodies.append(body)

    client = Creating()
    OpenSearchIndex(Settings(opensearch_endpoint="https://x", index_shards=3), dim=3, client=client).ensure_index()
    assert client.bodies[0]["settings"]["index"]["number_of_shards"] == 3


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


@pytest.mark.parametrize("fusion", ["rrf", "minmax"])
def test_opensearch_ranks_as_the_local_index_does(
    recorded: tuple[OpenSearchIndex, Recorder], tmp_path: Any, fusion: str
) -> None:
    """The same legs fused both ways: through OpenSearch (one _msearch, fused in the function) and
    through the local index (each leg called, fused in the function) rank the files identically."""
    from semfs.adapters.local.hash_embedder import HashEmbedder
    from semfs.pipeline.query.search import retrieve

    legs = [
        [("a:0", "a", 0.91), ("b:2", "b", 0.90), ("c:0", "c", 0.55)],  # k-NN (OpenSearch: (1 + cos) / 2)
        [("c:0", "c", 7.1), ("b:1", "b", 6.9), ("d:0", "d", 2.0)],  # chunk BM25
        [("b:card", "b", 3.3), ("a:card", "a", 1.2)],  # card BM25
    ]
    index, rec = recorded
    rec.msearch_legs = legs

    class Local:  # the local index's leg calls, answering the same hits
        def hybrid_legs(self, *a: Any, **kw: Any) -> None:
            return None

        def knn(self, *a: Any, **kw: Any) -> list[IndexHit]:
            return _as_hits(legs[0])

        def keyword(self, *a: Any, kind: str = "chunk", **kw: Any) -> list[IndexHit]:
            return _as_hits(legs[1] if kind == "chunk" else legs[2])

        def get_docs(self, *a: Any, **kw: Any) -> dict[str, Any]:
            return {}

    index.get_docs = Local().get_docs  # type: ignore[method-assign]  # (the recorder answers no documents)
    from semfs.adapters.local.disabled import NoReranking

    ranked = []
    for backend in (index, Local()):
        container = type("C", (), {})()
        container.index, container.embedder = backend, HashEmbedder(dim=3)
        container.query_embedder = lambda c=container: c.embedder
        container.reranker = NoReranking()
        container.settings = Settings(fusion=fusion, card_leg=True)  # type: ignore[arg-type]
        found = retrieve(container, "acme", "payment terms", "hybrid", SearchFilters(), 10)  # type: ignore[arg-type]
        ranked.append([(f, round(s, 9), [h.chunk_id for h in hs]) for f, s, hs in found.files])
    assert ranked[0] == ranked[1]
    assert ranked[0][0][0] == "b"  # in all three legs


def _as_hits(rows: list[tuple[str, str, float]]) -> list[IndexHit]:
    return [IndexHit(chunk_id=c, file_id=f, score=s) for c, f, s in rows]


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
    assert len(domain.sizes) >= 4 and max(domain.sizes) <= Settings().aws.bulk_max_bytes


class SourceExcludingDomain(Recorder):
    """Keeps documents as OpenSearch does under the mapping's ``_source.excludes``: an excluded field is
    indexed (here: the vector, kept aside) but not stored, and an ``update`` rebuilds the document from what
    was stored, so a partial update of a document whose vector is excluded leaves it without one. Answers
    the two searches ``set_latest`` and ``replace_file`` send (the lineage's files, a file's document ids)."""

    def __init__(self, excludes: list[str]) -> None:
        super().__init__()
        self.excludes = excludes
        self.docs: dict[tuple[str, str], dict[str, Any]] = {}  # (index, id) → the stored _source
        self.vectors: dict[tuple[str, str], Any] = {}  # (index, id) → the indexed vector

    def _store(self, key: tuple[str, str], source: dict[str, Any]) -> None:
        self.vectors[key] = source.get("embedding")
        self.docs[key] = {k: v for k, v in source.items() if k not in self.excludes}

    def search(self, **kw: Any) -> dict[str, Any]:
        terms = [c["term"] for c in kw["body"]["query"]["bool"]["filter"]]
        found = sorted((k, s) for k, s in self.docs.items() if all(s.get(f) == v for t in terms for f, v in t.items()))
        if "aggs" in kw["body"]:
            latest: dict[str, bool] = {}
            for _, s in found:
                latest[s["file_id"]] = latest.get(s["file_id"], False) or s["is_latest"]
            buckets = [{"key": {"f": f}, "latest": {"value": 1.0 if v else 0.0}} for f, v in sorted(latest.items())]
            return {"aggregations": {"files": {"buckets": buckets}}}
        return {"hits": {"hits": [{"_index": k[0], "_id": k[1], "sort": [s["chunk_id"]]} for k, s in found]}}

    def bulk(self, body: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        items, lines = [], iter(body)
        for action in lines:
            op, meta = next(iter(action.items()))
            key = (meta["_index"], meta["_id"])
            if op == "delete":
                self.docs.pop(key, None)
                self.vectors.pop(key, None)
            elif op == "index":
                self._store(key, next(lines))
            elif op == "update":  # rebuilt from the stored _source: the excluded vector is gone
                self._store(key, {**self.docs[key], **next(lines)["doc"]})
            items.append({op: {"_id": meta["_id"], "status": 200}})
        return {"errors": False, "items": items}


def test_a_version_change_keeps_the_vector_of_every_version() -> None:
    """The mapping keeps vectors out of ``_source`` (they would double the disk at 10M chunks), so the
    latest flag of an older version cannot be changed by a partial update: it is rewritten whole."""
    from tests.builders import index_doc

    excludes = index_body(3)["mappings"]["_source"]["excludes"]
    assert excludes == ["embedding", "kw"]
    domain = SourceExcludingDomain(excludes)
    index = OpenSearchIndex(Settings(opensearch_endpoint="https://x"), dim=3, client=domain)
    v1 = index_doc("v1", 0, "thirty days", lineage_id="L", embedding=[0.0, 0.0, 1.0], embedding_model="m")
    v2 = index_doc(
        "v2",
        0,
        "forty days",
        lineage_id="L",
        version=2,
        is_latest=False,
        embedding=[0.0, 1.0, 0.0],
        embedding_model="m",
    )
    index.replace_file("acme", "v1", [v1])
    index.replace_file("acme", "v2", [v2])
    as_recorded = {
        "v1": [v1.model_copy(update={"is_latest": False})],
        "v2": [v2.model_copy(update={"is_latest": True})],
    }
    index.set_latest("acme", "L", "v2", as_recorded.__getitem__)
    got = {key[1]: (source["is_latest"], domain.vectors[key]) for key, source in domain.docs.items()}
    assert got == {"v1:0": (False, [0.0, 0.0, 1.0]), "v2:0": (True, [0.0, 1.0, 0.0])}


def test_replicas_follow_the_domains_nodes() -> None:
    """OpenSearch's default of one replica cannot be placed on a one-node (dev) domain, which then stays
    yellow for good; ``auto_expand_replicas`` keeps 0 replicas on one node and 1 on two or more."""
    settings = index_body(3)["settings"]["index"]
    assert settings["auto_expand_replicas"] == "0-1"
    assert "number_of_replicas" not in settings  # the two would contradict each other


def test_a_knn_hit_scores_its_cosine_as_the_local_index_does(recorded: tuple[OpenSearchIndex, Recorder]) -> None:
    """``cosinesimil`` answers (1 + cos) / 2 (OpenSearch's "Spaces" table); the calibrated relevance
    (domain/relevance.py) is fitted on cosines, so the adapter gives the cosine back: 0.9 → 0.8."""
    index, rec = recorded
    (hit,) = index.knn("acme", [1.0, 0.0, 0.0], SearchFilters(), 5)
    assert hit.score == pytest.approx(0.8)
    rec.msearch_legs = [[("f:0", "f", 0.75)], [("f:0", "f", 7.5)]]
    knn, keyword = index.hybrid_legs("acme", "q", [1.0, 0.0, 0.0], SearchFilters(), 5, cards=False) or []
    assert knn[0].score == pytest.approx(0.5) and keyword[0].score == pytest.approx(7.5)  # BM25 as it is
