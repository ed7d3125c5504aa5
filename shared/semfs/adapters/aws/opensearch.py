"""``OpenSearchIndex``: BM25 + k-NN over an OpenSearch domain or Serverless collection (SigV4).

Each tenant's BM25 statistics are its own: Lucene keeps term statistics per field (document count,
document frequency, average length), so every document's text is also indexed under its tenant's own
fields (``kw.<tenant key>.text`` …), and the keyword legs search only the caller's. Another tenant's
documents then never move a tenant's scores (they moved them in one shared field: a rare word's score
fell when another tenant stored it). Chosen over an index per tenant, which would cost a shard (and
its replicas) per tenant against a domain's 1,000 shards a node, and over routing, which shares a
shard's statistics among the tenants routed to it: fields cost mapping entries (five a tenant; the
index allows ``index.mapping.total_fields.limit``). The vectors stay in one field: cosine similarity
has no collection statistics.

The query bodies are built by pure functions (tested as compiled DSL, since no OpenSearch server
runs offline): ``scope_filter`` is the one place the tenant condition is added, and it goes inside
the ``knn`` clause (efficient filtering) and into every leg's query. The legs
(chunk BM25, card BM25, k-NN) go in one ``_msearch`` round trip and are fused per file by the same
domain fusion as locally (``domain.ranking``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from semfs.config import Settings
from semfs.domain.access import TENANT
from semfs.domain.errors import IndexUnavailable, PermanentError
from semfs.domain.models import DocKind, IndexDoc, IndexHit, SearchFilters
from semfs.domain.outcomes import Outcome
from semfs.domain.ranking import FIELD_BOOSTS
from semfs.domain.scope import DOC_FIELDS, AnyOf, Term, scope
from semfs.domain.tags import slugify
from semfs.domain.text import query_terms
from semfs.observability import get_logger

log = get_logger(__name__)

BULK_RETRIES = 5


# A file card's text has its own field, so Lucene's BM25 statistics for chunks (document count and
# average length, both per field) never count cards; cards are ranked by their own leg.
CARD_TEXT = {"type": "text", "analyzer": "english"}

# each tenant's keyword fields, mapped when its first document arrives (see the module docstring)
KEYWORD_FIELDS: dict[str, Any] = {"type": "object", "dynamic": True}
KEYWORD_TEMPLATES: list[dict[str, Any]] = [
    {f"kw_{name}": {"path_match": f"kw.*.{name}", "mapping": {"type": "text", "analyzer": "english"}}}
    for name in ("text", "title", "card")
] + [{"kw_plain": {"path_match": "kw.*", "match_mapping_type": "string", "mapping": {"type": "text"}}}]
MAX_FIELDS = 50_000  # index.mapping.total_fields.limit: ~10,000 tenants of five fields


def tenant_key(tenant_id: str) -> str:
    """The name of a tenant's keyword fields: a digest, so that any tenant id makes one field name."""
    return "t" + hashlib.sha256(tenant_id.encode()).hexdigest()[:20]


def _keyword_text(src: Mapping[str, Any]) -> dict[str, Any]:
    """A document's searchable text as its tenant's keyword fields hold it."""
    if src.get("kind") == "card":
        return {"card": src.get("card_text") or ""}
    fields = {"text": src.get("text") or "", "title": src.get("title") or "", "filename": src.get("filename") or ""}
    return {**fields, "tags": src.get("tags_text") or ""}


def index_body(dim: int, engine: str = "lucene", shards: int = 1, encoding: str = "float") -> dict[str, Any]:
    """Index settings and mappings, from the configured embedding dimension and shard count. Replicas
    follow the domain's nodes (``0-1``): a one-node dev domain cannot place a replica and stayed yellow
    with the default of one; a two-node domain keeps one copy of each shard on each node. ``encoding``
    ``sq``: the graph holds each vector as 7-bit integers (Lucene's scalar quantizer, OpenSearch 2.16+, the
    full vector kept on disk beside it): a quarter of the memory (``bench/vector_encoding.py`` measures what
    it costs in ranking, ``bench/cost_model.py`` what it saves)."""
    keyword = {"type": "keyword"}
    hnsw: dict[str, Any] = {"m": 16, "ef_construction": 128}
    if encoding == "sq":
        hnsw["encoder"] = {"name": "sq"}  # 7 bits (the 2.x default; "bits" is a 3.x parameter)
    return {
        "settings": {
            "index": {
                "knn": True,
                "number_of_shards": shards,
                "auto_expand_replicas": "0-1",
                "mapping": {"total_fields": {"limit": MAX_FIELDS}},
            }
        },
        "mappings": {
            "dynamic": "strict",
            # the vector is indexed (HNSW graph + doc values) but not stored again as JSON in _source, where
            # 1,536 floats take ~15 KB a chunk: more than the graph (README, sizing OpenSearch); the tenant's
            # keyword fields repeat the text, which _source already holds once
            "_source": {"excludes": ["embedding", "kw"]},
            "dynamic_templates": KEYWORD_TEMPLATES,
            "properties": {
                "kw": KEYWORD_FIELDS,
                "chunk_id": keyword,
                "kind": keyword,
                "file_id": keyword,
                "lineage_id": keyword,
                "tenant_id": keyword,
                "version": {"type": "integer"},
                "is_latest": {"type": "boolean"},
                "contact_ids": keyword,
                "thread_id": keyword,
                "source_type": keyword,
                "tags": keyword,
                "readers": keyword,
                "tags_text": {"type": "text"},
                "mime_type": keyword,
                "filename": {"type": "text", "fields": {"raw": keyword}},
                "title": {"type": "text", "analyzer": "english"},
                "text": {"type": "text", "analyzer": "english"},
                "card_text": CARD_TEXT,
                "location": {"type": "object", "enabled": False},
                "embedding_model": keyword,
                "created_at": {"type": "date"},
                "embedding": {
                    "type": "knn_vector",
                    "dimension": dim,
                    "method": {
                        "name": "hnsw",
                        "engine": engine,
                        "space_type": "cosinesimil",
                        "parameters": hnsw,
                    },
                },
            },
        },
    }


def _readers_filter(tokens: Sequence[str]) -> dict[str, Any]:
    """Documents shared with one of the caller's tokens; one written before access lists has no
    ``readers`` and is the whole tenant's (``domain/access.py``). Inside the query (and inside ``knn``'s
    ``filter``): k-NN finds k documents the caller may see, never k before a post-filter."""
    shared: dict[str, Any] = {"terms": {"readers": list(tokens)}}
    if TENANT not in tokens:
        return shared
    older = {"bool": {"must_not": [{"exists": {"field": "readers"}}]}}
    return {"bool": {"should": [shared, older], "minimum_should_match": 1}}


def scope_filter(tenant_id: str, filters: SearchFilters) -> list[dict[str, Any]]:
    """Every search's scope (``domain.scope``) as bool filter clauses; the tenant clause first."""
    out: list[dict[str, Any]] = []
    for c in scope(tenant_id, filters):
        field = DOC_FIELDS[c.field]
        if isinstance(c, Term):
            out.append({"term": {field: c.value}})
        elif isinstance(c, AnyOf) and c.field == "reader":
            out.append(_readers_filter(c.values))
        elif isinstance(c, AnyOf):
            out.append({"terms": {field: list(c.values)}})
        else:
            rng: dict[str, str] = {}
            if c.first:
                rng["gte"] = c.first.isoformat()
            if c.end:
                rng["lt"] = c.end.isoformat()
            out.append({"range": {field: rng}})
    return out


def _keyword_clause(tenant_id: str, query: str, kind: DocKind = "chunk") -> dict[str, Any]:
    """BM25 over the tenant's own keyword fields only: its statistics are its documents' alone."""
    text = " ".join(query_terms(query)) or query
    own = f"kw.{tenant_key(tenant_id)}"
    # (the same field weights as the local keyword leg)
    fields = [f"{own}.{f}^{w:g}" for f, w in FIELD_BOOSTS.items()] if kind == "chunk" else [f"{own}.card"]
    return {"multi_match": {"query": text, "fields": fields, "type": "best_fields", "operator": "or"}}


def _keyword_query(tenant_id: str, query: str, scope: list[dict[str, Any]], kind: DocKind) -> dict[str, Any]:
    clause = _keyword_clause(tenant_id, query, kind)
    return {"bool": {"must": [clause], "filter": [*scope, {"term": {"kind": kind}}]}}


_SOURCE = {"excludes": ["embedding", "kw"]}


def keyword_body(tenant_id: str, query: str, filters: SearchFilters, k: int, kind: DocKind = "chunk") -> dict[str, Any]:
    return {
        "size": k,
        "_source": ["chunk_id", "file_id"],
        "query": _keyword_query(tenant_id, query, scope_filter(tenant_id, filters), kind),
    }


def knn_body(tenant_id: str, vector: Sequence[float], filters: SearchFilters, k: int) -> dict[str, Any]:
    """k-NN with the scope *inside* the knn clause (filtered during the graph search, not after)."""
    return {
        "size": k,
        "_source": ["chunk_id", "file_id"],
        "query": {
            "knn": {
                "embedding": {
                    "vector": list(vector),
                    "k": k,
                    "filter": {"bool": {"filter": scope_filter(tenant_id, filters)}},
                }
            }
        },
    }


def hybrid_searches(
    index: str, tenant_id: str, query: str, vector: Sequence[float], filters: SearchFilters, k: int, cards: bool
) -> list[dict[str, Any]]:
    """The hybrid search's legs as one ``_msearch`` body (header, body, header, body…): k-NN, chunk
    BM25 and card BM25, each with the tenant scope inside it. Fused per file by the caller, as every
    backend is: OpenSearch's own hybrid query fuses per document, which would rank differently."""
    bodies = [knn_body(tenant_id, vector, filters, k), keyword_body(tenant_id, query, filters, k)]
    if cards:
        bodies.append(keyword_body(tenant_id, query, filters, k, kind="card"))
    return [line for body in bodies for line in ({"index": index}, body)]


def _source(d: IndexDoc) -> dict[str, Any]:
    body = d.model_dump(mode="json", exclude={"location"})
    if body.get("embedding") is None:  # a keyword-only document (a file's notes): no vector field at all
        body.pop("embedding", None)
    body["location"] = d.location.model_dump(exclude_none=True)
    body["tags_text"] = " ".join(d.tags)
    if d.kind == "card":
        body["card_text"] = body.pop("text")
    body["kw"] = {tenant_key(d.tenant_id): _keyword_text(body)}
    return body


def _answered(what: str, status: Any) -> Exception:
    """An OpenSearch error status as semfs's error: throttled or unavailable is retryable, the rest is not."""
    if status in (429, 502, 503, 504):
        return IndexUnavailable(f"{what}: OpenSearch answered {status}")
    return PermanentError(f"{what}: OpenSearch answered {status}", outcome=Outcome.FAILED_INDEX)


class OpenSearchIndex:
    """SearchIndex on OpenSearch (see module docstring). Connects on first use."""

    # BM25 statistics are the shard's: a caller who reads only some files is shown ranks, not scores
    reader_statistics = False

    def __init__(
        self,
        settings: Settings,
        dim: int,
        client: Any = None,
        model: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        assert settings.aws.opensearch_endpoint
        self._sleep = sleep  # between bulk retries of throttled items (a test passes a no-op)
        self._settings = settings
        self._dim = dim
        self._client = client
        self._model = model or settings.embedding.resolved_model
        # an alias over one concrete index per embedding model: a model switch moves the alias atomically
        self._index = settings.aws.index_name
        self._ready = False  # a writer made the index or checked its mapping
        self._seen = False  # a reader found the index (its mapping unchecked)
        self._refresh: bool | str = "wait_for"

    @property
    def client(self) -> Any:
        if self._client is None:
            from opensearchpy import OpenSearch, RequestsHttpConnection

            endpoint = self._settings.aws.opensearch_endpoint or ""
            auth = None
            if endpoint.startswith("https://"):
                import boto3
                from opensearchpy import AWSV4SignerAuth

                credentials = boto3.Session().get_credentials()
                auth = AWSV4SignerAuth(
                    credentials, self._settings.aws.region or "us-east-1", self._settings.aws.opensearch_service
                )
            self._client = OpenSearch(
                hosts=[endpoint],
                http_auth=auth,
                use_ssl=endpoint.startswith("https"),
                verify_certs=True,
                connection_class=RequestsHttpConnection,
                timeout=30,
            )
        return self._client

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        from opensearchpy.exceptions import ConnectionError as OsConnectionError
        from opensearchpy.exceptions import TransportError

        try:
            return fn(*args, **kwargs)
        except OsConnectionError as e:
            raise IndexUnavailable(f"{what}: cannot reach OpenSearch") from e
        except TransportError as e:
            raise _answered(what, e.status_code) from e

    def _concrete(self, model: str) -> str:
        return f"{self._index}-v-{slugify(model) or 'model'}"

    def _create_concrete(self, model: str, dim: int, alias: bool) -> str:
        name = self._concrete(model)
        if not self._call("exists", self.client.indices.exists, index=name):
            body = index_body(dim, shards=self._settings.aws.index_shards, encoding=self._settings.aws.vector_encoding)
            body["mappings"]["_meta"] = {"embedding_model": model}
            if alias:
                body["aliases"] = {self._index: {}}
            try:
                self._call("create index", self.client.indices.create, index=name, body=body)
            except PermanentError as e:
                # parallel Index functions on a new stack: another one created it between our check
                # and our create, which is what we wanted
                if not self._call("exists", self.client.indices.exists, index=name):
                    raise
                log.info("index created concurrently", index=name, error=type(e).__name__)
        return name

    def ensure_index(self) -> None:
        """Make the index, or add a field an older one lacks: for the functions that write documents."""
        self._exists(create=True)

    def _exists(self, create: bool) -> bool:
        """Whether the index is there (asked once per execution environment, then remembered).

        Only a writer (``create``) makes it or changes its mapping. Those are ``PUT``s, and the template
        grants ``es:ESHttpPut`` to the functions that write documents (Index, re-embed) alone: a search or
        delete function that sent one on its first call was refused, so a fresh stack's search answered
        500 (issue 28). A reader finds no index on a stack where nothing was indexed yet: no hits."""
        if self._ready or (self._seen and not create):
            return True
        exists = self._seen or self._call("exists", self.client.indices.exists, index=self._index)
        if not create:
            self._seen = bool(exists)
            return self._seen
        if not exists:
            self._create_concrete(self._model, self._dim, alias=True)
        else:  # an index made before cards or tenants had their own fields (adding fields is allowed in place)
            mappings = self._call("get mapping", self.client.indices.get_mapping, index=self._index)
            if any("card_text" not in m["mappings"].get("properties", {}) for m in mappings.values()):
                body = {"properties": {"card_text": CARD_TEXT}}
                self._call("put mapping", self.client.indices.put_mapping, index=self._index, body=body)
            if any("readers" not in m["mappings"].get("properties", {}) for m in mappings.values()):
                # documents written before access lists have none: the whole tenant's (scope_filter)
                body = {"properties": {"readers": {"type": "keyword"}}}
                self._call("put mapping", self.client.indices.put_mapping, index=self._index, body=body)
            if any("kw" not in m["mappings"].get("properties", {}) for m in mappings.values()):
                # its documents are found by keyword again once `semfs reindex` has rewritten them
                tenants: dict[str, Any] = {"dynamic_templates": KEYWORD_TEMPLATES, "properties": {"kw": KEYWORD_FIELDS}}
                self._call("put mapping", self.client.indices.put_mapping, index=self._index, body=tenants)
                log.warning("index has no per-tenant keyword fields yet: run semfs reindex")
        self._ready = self._seen = True
        return True

    def _active_index(self) -> str:
        found = self._call("get alias", self.client.indices.get_alias, name=self._index)
        return str(next(iter(found)))

    def active_model(self) -> str | None:
        if not self._exists(create=False):
            return None
        mapping = self._call("get mapping", self.client.indices.get_mapping, index=self._active_index())
        meta = next(iter(mapping.values()))["mappings"].get("_meta", {})
        return str(meta["embedding_model"]) if meta.get("embedding_model") else None

    def stage_vectors(self, tenant_id: str, file_id: str, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Copy the file's documents into ``model``'s index with the new vectors (not yet searchable)."""
        self.ensure_index()
        if not vectors:
            return
        target = self._create_concrete(model, len(next(iter(vectors.values()))), alias=False)
        body = self._scope_query(tenant_id, file_id=file_id)
        body.update({"size": 10_000, "_source": _SOURCE})
        hits = self._call("search", self.client.search, index=self._index, body=body)["hits"]["hits"]
        ops: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        for h in hits:
            src = dict(h["_source"])
            if src["chunk_id"] in vectors:
                src.update(embedding=list(vectors[src["chunk_id"]]), embedding_model=model)
                src["kw"] = {tenant_key(src["tenant_id"]): _keyword_text(src)}  # (not kept in _source)
                ops.append(({"index": {"_index": target, "_id": h["_id"]}}, src))
        if ops:
            self._bulk_ops(ops)

    def staged_file_ids(
        self, model: str, tenant_id: str | None = None, *, after: str | None = None, until: str | None = None
    ) -> set[tuple[str, str]]:
        name = self._concrete(model)
        if name == self._active_index() or not self._call("exists", self.client.indices.exists, index=name):
            return set()
        query = _file_range(tenant_id, after, until)
        found: set[tuple[str, str]] = set()
        next_key: dict[str, Any] | None = None
        while True:
            composite: dict[str, Any] = {
                "size": 1000,
                "sources": [{"t": {"terms": {"field": "tenant_id"}}}, {"f": {"terms": {"field": "file_id"}}}],
            }
            if next_key:
                composite["after"] = next_key
            body = {"size": 0, "query": query, "aggs": {"files": {"composite": composite}}}
            agg = self._call("search", self.client.search, index=name, body=body)["aggregations"]["files"]
            found |= {(b["key"]["t"], b["key"]["f"]) for b in agg["buckets"]}
            next_key = agg.get("after_key")
            if not next_key or not agg["buckets"]:
                return found

    def switch_model(self, model: str) -> None:
        """Move the alias to ``model``'s index in one ``_aliases`` call, then drop the old index."""
        self.ensure_index()
        old, new = self._active_index(), self._concrete(model)
        if old == new:
            return
        self._call("refresh", self.client.indices.refresh, index=new)
        actions = [{"remove": {"index": old, "alias": self._index}}, {"add": {"index": new, "alias": self._index}}]
        self._call("update aliases", self.client.indices.update_aliases, body={"actions": actions})
        self._call("delete index", self.client.indices.delete, index=old)

    def _scope_query(self, tenant_id: str, **terms: str) -> dict[str, Any]:
        clauses = [{"term": {"tenant_id": tenant_id}}] + [{"term": {k: v}} for k, v in terms.items()]
        return {"query": {"bool": {"filter": clauses}}}

    def _bulk(self, actions: list[dict[str, Any]], sources: list[dict[str, Any] | None]) -> None:
        """Bulk-index with per-item results: 429s are retried with backoff, other failures raised."""
        pending = list(zip(actions, sources, strict=True))
        for attempt in range(BULK_RETRIES + 1):
            body: list[dict[str, Any]] = [x for pair in pending for x in pair if x is not None]
            result = self._call("bulk", self.client.bulk, body=body, refresh=self._refresh)
            retry, failed = [], []
            for pair, item in zip(pending, result.get("items", []), strict=False):
                status = next(iter(item.values())).get("status", 500)
                if status == 429:
                    retry.append(pair)
                elif status >= 300:
                    failed.append(next(iter(item.values())).get("_id"))
            if failed:
                raise PermanentError(f"bulk: {len(failed)} document(s) rejected", outcome=Outcome.FAILED_INDEX)
            if not retry:
                return
            pending = retry
            self._sleep(min(0.2 * 2**attempt, 5))
        raise IndexUnavailable(f"bulk: {len(pending)} document(s) still throttled")

    def _all_indices(self) -> str:
        return f"{self._index}-v-*"

    def _ids(self, tenant_id: str, **terms: str) -> list[str]:
        """Document ids in a scope. Deletes and flag updates go through ids + bulk rather than
        delete/update_by_query, which OpenSearch Serverless does not offer."""
        body = self._scope_query(tenant_id, **terms)
        body.update({"size": 1000, "_source": False, "sort": [{"chunk_id": "asc"}]})
        ids: list[str] = []
        while True:
            hits = self._call("search", self.client.search, index=self._all_indices(), body=body)["hits"]["hits"]
            ids += [f"{h['_index']}\x1f{h['_id']}" for h in hits]
            if len(hits) < 1000:
                return ids
            body["search_after"] = hits[-1]["sort"]

    def _bulk_ops(self, ops: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> None:
        """Send ``ops`` in bulk requests of at most ``bulk_max_bytes`` each (t3 domains take 10 MiB per
        request; a 1,000-chunk file at 1,536 dimensions is ~32 MiB), each with its per-item accounting."""
        limit = self._settings.aws.bulk_max_bytes
        batch: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        size = 0
        for op in ops:
            # ndjson: one line per action and per source
            n = sum(len(json.dumps(x, separators=(",", ":"), ensure_ascii=False).encode()) + 1 for x in op if x)
            if batch and size + n > limit:
                self._bulk([a for a, _ in batch], [x for _, x in batch])
                batch, size = [], 0
            batch.append(op)
            size += n
        if batch:
            self._bulk([a for a, _ in batch], [x for _, x in batch])

    def replace_file(self, tenant_id: str, file_id: str, docs: Sequence[IndexDoc]) -> None:
        self.ensure_index()
        for d in docs:
            if d.tenant_id != tenant_id or d.file_id != file_id:
                raise ValueError("every document must belong to the file being replaced")
        active = self.active_model()
        active_index = self._active_index()
        keep = {(active_index, d.chunk_id) for d in docs}
        ops: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        for d in docs:
            src = _source(d)
            if d.embedding_model not in (None, active):  # mid-switch: searchable now without a vector,
                staged_index = self._create_concrete(d.embedding_model, len(d.embedding or []), alias=False)
                ops.append(({"index": {"_index": staged_index, "_id": d.chunk_id}}, dict(src)))
                keep.add((staged_index, d.chunk_id))  # ... and with it once the switch happens
                src.pop("embedding", None)
                src["embedding_model"] = active
            ops.append(({"index": {"_index": active_index, "_id": d.chunk_id}}, src))
        for pair in self._ids(tenant_id, file_id=file_id):
            index, _, doc_id = pair.partition("\x1f")
            if (index, doc_id) not in keep:
                ops.append(({"delete": {"_index": index, "_id": doc_id}}, None))
        if ops:
            self._bulk_ops(ops)

    def replace_files(self, files: Sequence[tuple[str, str, Sequence[IndexDoc]]]) -> None:
        for tenant_id, file_id, docs in files:
            if any(d.tenant_id != tenant_id or d.file_id != file_id for d in docs):
                raise ValueError("every document must belong to the file being replaced")
        for tenant_id, file_id, docs in files:  # each file's stale ids are found by its own query
            self.replace_file(tenant_id, file_id, docs)

    def delete_file(self, tenant_id: str, file_id: str) -> int:
        return self._delete_scope(tenant_id, file_id=file_id)

    def forget_tenant(self, tenant_id: str) -> int:
        """Every document of the tenant in every model's index, by id in bulk (Serverless has no
        delete_by_query). A deleted document stays in its Lucene segment until a merge expunges it:
        the domain's own merges do that; nothing here forces one."""
        return self._delete_scope(tenant_id)

    def _delete_scope(self, tenant_id: str, **terms: str) -> int:
        if not self._exists(create=False):
            return 0  # nothing was ever indexed
        pairs = [p.partition("\x1f") for p in self._ids(tenant_id, **terms)]
        if pairs:
            self._bulk_ops([({"delete": {"_index": index, "_id": doc_id}}, None) for index, _, doc_id in pairs])
        return len({doc_id for index, _, doc_id in pairs if index == self._active_index()})

    def set_latest(
        self,
        tenant_id: str,
        lineage_id: str,
        latest_file_id: str | None,
        docs_of: Callable[[str], Sequence[IndexDoc]],
    ) -> None:
        """Rewrite each version whose flag changes, whole: vectors are not in ``_source`` (the mapping
        excludes them: they would double the disk), and OpenSearch rebuilds an updated document from
        ``_source``, so a partial ``update`` of the flag would drop the document's vector."""
        if not self._exists(create=False):
            return  # nothing was ever indexed: no flag to change
        body = self._scope_query(tenant_id, lineage_id=lineage_id)
        composite = {"size": 1000, "sources": [{"f": {"terms": {"field": "file_id"}}}]}
        body.update(
            {
                "size": 0,
                "aggs": {"files": {"composite": composite, "aggs": {"latest": {"max": {"field": "is_latest"}}}}},
            }
        )
        changed: list[str] = []
        while True:
            agg = self._call("search", self.client.search, index=self._index, body=body)["aggregations"]["files"]
            for b in agg["buckets"]:
                file_id = b["key"]["f"]
                if bool(b["latest"]["value"]) != (file_id == latest_file_id):
                    changed.append(file_id)
            if not agg["buckets"] or not agg.get("after_key"):
                break
            composite["after"] = agg["after_key"]
        for file_id in changed:
            self.replace_file(tenant_id, file_id, docs_of(file_id))

    def _hits(self, result: dict[str, Any], knn: bool = False) -> list[IndexHit]:
        """The hits; a k-NN leg's as the cosine itself, as the local index scores them (``cosinesimil``
        answers (1 + cos) / 2: OpenSearch's "Spaces" table), so relevance is calibrated alike."""
        return [
            IndexHit(
                chunk_id=h["_source"]["chunk_id"],
                file_id=h["_source"]["file_id"],
                score=2 * float(h["_score"]) - 1 if knn else float(h["_score"]),
            )
            for h in result["hits"]["hits"]
        ]

    def keyword(
        self, tenant_id: str, query: str, filters: SearchFilters, k: int, kind: DocKind = "chunk"
    ) -> list[IndexHit]:
        if not self._exists(create=False):
            return []
        body = keyword_body(tenant_id, query, filters, k, kind)
        return self._hits(self._call("search", self.client.search, index=self._index, body=body))

    def knn(
        self, tenant_id: str, vector: Sequence[float], filters: SearchFilters, k: int, model: str | None = None
    ) -> list[IndexHit]:
        if not self._exists(create=False):
            return []
        body = knn_body(tenant_id, vector, filters, k)
        return self._hits(self._call("search", self.client.search, index=self._index, body=body), knn=True)

    def knn_staged(
        self, tenant_id: str, vector: Sequence[float], filters: SearchFilters, k: int, model: str
    ) -> list[IndexHit]:
        if not self._exists(create=False):
            return []
        name = self._concrete(model)
        if name == self._active_index() or not self._call("exists", self.client.indices.exists, index=name):
            return []
        body = knn_body(tenant_id, vector, filters, k)
        return self._hits(self._call("search", self.client.search, index=name, body=body), knn=True)

    def hybrid_legs(
        self, tenant_id: str, query: str, vector: Sequence[float], filters: SearchFilters, k: int, cards: bool
    ) -> list[list[IndexHit]] | None:
        """The legs in one round trip (``_msearch``); a leg that failed fails the search as ``search`` would."""
        if not self._exists(create=False):
            return [[] for _ in range(3 if cards else 2)]
        body = hybrid_searches(self._index, tenant_id, query, vector, filters, k, cards)
        result = self._call("msearch", self.client.msearch, body=body)
        legs: list[list[IndexHit]] = []
        for n, answer in enumerate(result["responses"]):
            if "error" in answer:  # _msearch answers 200 with the failed search's status inside
                raise _answered("msearch", int(answer.get("status", 500)))
            legs.append(self._hits(answer, knn=n == 0))  # the k-NN search comes first (hybrid_searches)
        return legs

    def get_docs(self, tenant_id: str, chunk_ids: Sequence[str]) -> dict[str, IndexDoc]:
        if not chunk_ids or not self._exists(create=False):
            return {}
        body = {
            "size": len(chunk_ids),
            "_source": _SOURCE,
            "query": {
                "bool": {"filter": [{"term": {"tenant_id": tenant_id}}, {"terms": {"chunk_id": list(chunk_ids)}}]}
            },
        }
        result = self._call("search", self.client.search, index=self._index, body=body)
        out: dict[str, IndexDoc] = {}
        for h in result["hits"]["hits"]:
            src = dict(h["_source"])
            src.pop("tags_text", None)
            src.pop("kw", None)  # (an index made before _source left them out)
            if "card_text" in src:
                src["text"] = src.pop("card_text")
            out[src["chunk_id"]] = IndexDoc.model_validate(src)
        return out

    def file_ids(self, tenant_id: str | None = None, *, after: str | None = None, until: str | None = None) -> set[str]:
        if not self._exists(create=False):
            return set()
        query = _file_range(tenant_id, after, until)
        found: set[str] = set()
        next_key: dict[str, Any] | None = None
        while True:
            composite: dict[str, Any] = {"size": 1000, "sources": [{"f": {"terms": {"field": "file_id"}}}]}
            if next_key:
                composite["after"] = next_key
            body = {"size": 0, "query": query, "aggs": {"files": {"composite": composite}}}
            agg = self._call("search", self.client.search, index=self._index, body=body)["aggregations"]["files"]
            found |= {b["key"]["f"] for b in agg["buckets"]}
            next_key = agg.get("after_key")
            if not next_key or not agg["buckets"]:
                return found

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Bulk writes without waiting for refresh; one refresh at the end."""
        self.ensure_index()
        self._refresh = False
        try:
            yield
        finally:
            self._refresh = "wait_for"
            self._call("refresh", self.client.indices.refresh, index=self._index)

    def clear(self) -> None:
        """Drop every model's index; the next write recreates one for the configured model (reindex)."""
        self.ensure_index()
        for name in self._call("get indices", self.client.indices.get, index=self._all_indices()):
            self._call("delete index", self.client.indices.delete, index=name)
        self._ready = self._seen = False


def _file_range(tenant_id: str | None, after: str | None, until: str | None) -> dict[str, Any]:
    """Documents of one tenant (when given) whose file id is in ``(after, until]`` (when given)."""
    filters: list[dict[str, Any]] = [{"term": {"tenant_id": tenant_id}}] if tenant_id else []
    bounds = {op: v for op, v in (("gt", after), ("lte", until)) if v is not None}
    if bounds:
        filters.append({"range": {"file_id": bounds}})
    return {"bool": {"filter": filters}} if filters else {"match_all": {}}
