from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.adapters.local.search_index import LocalSearchIndex
from semfs.domain.models import IndexDoc, SearchFilters
from semfs.ports import IndexWriter, Retriever, SearchIndex, VectorMigration
from tests.builders import index_doc
from tests.waits import CEILING_S

pytestmark = pytest.mark.contract
EMB = HashEmbedder()


def doc(file_id: str, n: int, text: str, tenant: str = "acme", **kw: object) -> IndexDoc:
    values: dict[str, object] = {"embedding": EMB.embed_query(text), "embedding_model": EMB.model, **kw}
    return index_doc(file_id, n, text, tenant=tenant, **values)  # type: ignore[arg-type]


ALL = SearchFilters()


def fill(index: SearchIndex) -> SearchIndex:
    index.replace_file(
        "acme",
        "inv",
        [doc("inv", 0, "Invoice payment due within thirty days"), doc("inv", 1, "Late fees apply after the due date")],
    )
    index.replace_file(
        "acme",
        "bike",
        [
            doc(
                "bike",
                0,
                "The Vela electric bicycle has a belt drive",
                tags=["product"],
                thread_id="t1",
                contact_ids=["c_acme"],
            )
        ],
    )
    index.replace_file("globex", "sec", [doc("sec", 0, "Invoice payment secrets of another tenant", tenant="globex")])
    return index


CAPABILITIES = [IndexWriter, Retriever, VectorMigration]


def _adapters() -> list[type]:
    from semfs.adapters.aws.opensearch import OpenSearchIndex

    return [LocalSearchIndex, OpenSearchIndex]


@pytest.mark.parametrize("capability", CAPABILITIES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("adapter", _adapters(), ids=lambda a: a.__name__)
def test_every_adapter_offers_each_capability_with_its_parameters(adapter: type, capability: type) -> None:
    """The index port is three capabilities (writing, retrieving, migrating vectors): every adapter has
    each method of each, taking the parameters the capability names, in its order (callers pass them by
    keyword, so a renamed parameter is a broken contract even where mypy sees a compatible type)."""
    import inspect

    members = [n for n, v in vars(capability).items() if callable(v) and not n.startswith("_")]
    assert members, capability
    for name in members:
        ours = list(inspect.signature(getattr(adapter, name)).parameters)
        theirs = list(inspect.signature(getattr(capability, name)).parameters)
        assert ours == theirs, f"{adapter.__name__}.{name}{ours} is not {capability.__name__}.{name}{theirs}"


def test_the_capabilities_together_are_the_whole_port() -> None:
    def methods(t: type) -> set[str]:
        return {n for n, v in vars(t).items() if callable(v) and not n.startswith("_")}

    parts = [methods(c) for c in CAPABILITIES]
    assert set().union(*parts) == {n for c in SearchIndex.__mro__ if c not in (object,) for n in methods(c)}
    assert sum(len(p) for p in parts) == len(set().union(*parts))  # no method in two capabilities


@pytest.fixture
def filled(search_index: SearchIndex) -> SearchIndex:
    return fill(search_index)


@pytest.fixture
def filled_vectors(vector_index: SearchIndex) -> SearchIndex:
    return fill(vector_index)


FILTER_CASES = [
    (SearchFilters(tags=["product"]), {"bike"}),
    (SearchFilters(thread_id="t1"), {"bike"}),
    (SearchFilters(contact_id="c_acme"), {"bike"}),
    (SearchFilters(file_ids=["inv"]), {"inv"}),
    (SearchFilters(mime_type="application/pdf"), set()),
    (SearchFilters(date_from=date(2026, 5, 1), date_to=date(2026, 5, 1)), {"inv", "bike"}),
    (SearchFilters(date_from=date(2026, 5, 2)), set()),
    (SearchFilters(source_type="email_attachment"), set()),
]


class TestIndexWriter:
    """Writes: per-file replace, delete, the latest flag, batches and clear, seen by the next search."""

    def test_replace_file_is_idempotent_and_replaces(self, filled: SearchIndex) -> None:
        filled.replace_file("acme", "inv", [doc("inv", 0, "Completely new wording about kittens")])
        filled.replace_file("acme", "inv", [doc("inv", 0, "Completely new wording about kittens")])
        assert filled.keyword("acme", "thirty days", ALL, 10) == []
        assert [h.chunk_id for h in filled.keyword("acme", "kittens", ALL, 10)] == ["inv:0"]
        assert filled.get_docs("acme", ["inv:1"]) == {}

    def test_replace_refuses_documents_of_another_file(self, search_index: SearchIndex) -> None:
        with pytest.raises(ValueError, match="belong"):
            search_index.replace_file("acme", "a", [doc("b", 0, "x")])

    def test_delete_file(self, filled: SearchIndex) -> None:
        assert filled.delete_file("acme", "inv") == 2
        assert filled.delete_file("acme", "inv") == 0
        assert filled.keyword("acme", "invoice", ALL, 10) == []
        assert filled.file_ids("acme") == {"bike"}

    def test_forgetting_a_tenant_leaves_no_document_of_it_and_every_other_tenants(self, filled: SearchIndex) -> None:
        before = filled.file_ids("globex")
        assert filled.forget_tenant("acme") == 3  # every document fill() gave acme
        assert filled.forget_tenant("acme") == 0  # idempotent
        assert filled.file_ids("acme") == set() and filled.keyword("acme", "invoice", ALL, 10) == []
        assert filled.file_ids("globex") == before
        assert [h.file_id for h in filled.keyword("globex", "invoice secrets", ALL, 10)] == ["sec"]

    def test_a_forgotten_tenant_leaves_the_vector_leg(self, filled_vectors: SearchIndex) -> None:
        filled_vectors.forget_tenant("acme")
        assert filled_vectors.knn("acme", EMB.embed_query("invoice"), ALL, 10) == []
        assert {h.file_id for h in filled_vectors.knn("globex", EMB.embed_query("invoice"), ALL, 10)} == {"sec"}

    def test_deleted_files_leave_the_vector_leg(self, filled_vectors: SearchIndex) -> None:
        filled_vectors.delete_file("acme", "inv")
        assert "inv" not in {h.file_id for h in filled_vectors.knn("acme", EMB.embed_query("invoice"), ALL, 10)}

    @pytest.mark.parametrize("leg", ["keyword", "knn"])
    def test_latest_and_history(self, search_index: SearchIndex, vector_index: SearchIndex, leg: str) -> None:
        if leg == "knn":
            search_index = vector_index
        search_index.replace_file("acme", "v1", [doc("v1", 0, "contract thirty days", lineage_id="L")])
        search_index.replace_file(
            "acme", "v2", [doc("v2", 0, "contract forty five days", lineage_id="L", is_latest=False, version=2)]
        )
        rewritten: list[str] = []

        def docs_of(file_id: str) -> list[IndexDoc]:  # what the pipeline builds from the stored chunks
            rewritten.append(file_id)
            text, version = {"v1": ("contract thirty days", 1), "v2": ("contract forty five days", 2)}[file_id]
            return [doc(file_id, 0, text, lineage_id="L", is_latest=file_id == "v2", version=version)]

        search_index.set_latest("acme", "L", "v2", docs_of)
        assert set(rewritten) <= {"v1", "v2"}  # only versions whose flag changed, if any

        def ids(filters: SearchFilters) -> set[str]:
            if leg == "keyword":
                return {h.file_id for h in search_index.keyword("acme", "contract", filters, 10)}
            return {h.file_id for h in search_index.knn("acme", EMB.embed_query("contract"), filters, 10)}

        assert ids(ALL) == {"v2"}
        assert ids(SearchFilters(include_history=True)) == {"v1", "v2"}

    def test_clear(self, search_index: SearchIndex) -> None:
        search_index.replace_file("acme", "a", [doc("a", 0, "x")])
        search_index.clear()
        assert search_index.file_ids() == set()

    def test_writes_after_a_search_are_seen(self, vector_index: SearchIndex) -> None:
        # the vector cache must notice writes made after it was loaded
        search_index = vector_index
        search_index.knn("acme", EMB.embed_query("x"), ALL, 5)
        search_index.replace_file("acme", "late", [doc("late", 0, "arrived later")])
        assert search_index.knn("acme", EMB.embed_query("arrived later"), ALL, 5)[0].file_id == "late"

    def test_batched_writes_become_searchable_at_the_end(self, search_index: SearchIndex) -> None:
        with search_index.batch():
            for i in range(20):
                search_index.replace_file("acme", f"b{i}", [doc(f"b{i}", 0, f"batch document number {i} about otters")])
        assert len(search_index.keyword("acme", "otters", ALL, 50)) == 20


class TestRetriever:
    """Reads: the BM25 and k-NN legs inside the tenant and the scope, stored documents, file ids."""

    def test_keyword_ranks_matches_and_ors_terms(self, filled: SearchIndex) -> None:
        hits = filled.keyword("acme", "invoice payment", ALL, 10)
        assert hits[0].chunk_id == "inv:0"
        assert {h.file_id for h in hits} == {"inv"}
        assert hits == sorted(hits, key=lambda h: -h.score)
        # one matching term is enough (OR), stemming matches "payments" to "payment"
        assert filled.keyword("acme", "payments zebra", ALL, 10)[0].chunk_id == "inv:0"

    def test_fts_syntax_in_queries_is_inert(self, filled: SearchIndex) -> None:
        for q in ['"unbalanced', "NEAR(a b)", "AND OR NOT", "*", "-", "()", "title:", "^2 ~ OR"]:
            assert filled.keyword("acme", q, ALL, 10) == [], q  # operators are not searched for, and never raise
        for q in ['"unbalanced invoice', "invoice AND OR NOT", "col:invoice", "(invoice)", "invoice^9 -payment"]:
            hits = filled.keyword("acme", q, ALL, 10)
            assert hits and hits[0].file_id == "inv", q  # the words in them still are

    def test_a_document_without_a_vector_is_found_by_its_words_alone(self, search_index: SearchIndex) -> None:
        """A file's notes are one keyword-only document (their meaning is in the embedded card): stored and
        found by BM25 in every backend, with no vector field (OpenSearch's knn_vector has no null)."""
        words = index_doc("n", 0, "Note: the zeppelin clause needs a second signature", chunk_id="n:notes")
        search_index.replace_file("acme", "n", [doc("n", 0, "supply agreement"), words])
        assert [h.chunk_id for h in search_index.keyword("acme", "zeppelin signature", ALL, 5)] == ["n:notes"]
        assert search_index.get_docs("acme", ["n:notes"])["n:notes"].embedding is None

    def test_a_vectorless_document_never_reaches_the_knn_leg(self, vector_index: SearchIndex) -> None:
        words = index_doc("n", 0, "Note: the zeppelin clause", chunk_id="n:notes")
        vector_index.replace_file("acme", "n", [doc("n", 0, "zeppelin clause"), words])
        assert [h.chunk_id for h in vector_index.knn("acme", EMB.embed_query("zeppelin clause"), ALL, 5)] == ["n:0"]

    def test_knn_ranks_by_cosine(self, filled_vectors: SearchIndex) -> None:
        filled = filled_vectors
        hits = filled.knn("acme", EMB.embed_query("electric bicycle belt drive"), ALL, 10)
        assert hits[0].chunk_id == "bike:0"
        assert hits == sorted(hits, key=lambda h: -h.score)
        assert hits[0].score == pytest.approx(max(h.score for h in hits))

    @pytest.mark.parametrize("leg", ["keyword", "knn"])
    def test_tenant_is_applied_inside_every_leg(
        self, search_index: SearchIndex, vector_index: SearchIndex, leg: str
    ) -> None:
        filled = fill(search_index if leg == "keyword" else vector_index)
        q = "invoice payment secrets"
        hits = (
            filled.keyword("acme", q, ALL, 50) if leg == "keyword" else filled.knn("acme", EMB.embed_query(q), ALL, 50)
        )
        assert "sec" not in {h.file_id for h in hits}
        other = (
            filled.keyword("globex", q, ALL, 50)
            if leg == "keyword"
            else filled.knn("globex", EMB.embed_query(q), ALL, 50)
        )
        assert {h.file_id for h in other} == {"sec"}
        assert filled.get_docs("acme", ["sec:0"]) == {}

    @pytest.mark.parametrize(("filters", "expected"), FILTER_CASES)
    def test_filters_apply_to_the_keyword_leg(
        self, filled: SearchIndex, filters: SearchFilters, expected: set[str]
    ) -> None:
        q = "invoice payment bicycle belt drive"
        assert {h.file_id for h in filled.keyword("acme", q, filters, 50)} == expected

    @pytest.mark.parametrize(("filters", "expected"), FILTER_CASES)
    def test_filters_apply_to_the_vector_leg(
        self, filled_vectors: SearchIndex, filters: SearchFilters, expected: set[str]
    ) -> None:
        q = "invoice payment bicycle belt drive"
        assert {h.file_id for h in filled_vectors.knn("acme", EMB.embed_query(q), filters, 50)} == expected

    @pytest.mark.parametrize("leg", ["keyword", "knn"])
    def test_readers_are_applied_inside_every_leg(
        self, search_index: SearchIndex, vector_index: SearchIndex, leg: str
    ) -> None:
        """A caller reads as its tokens (``domain/access.py``): a file shared with none of them is never a
        hit, one shared with a group they are in is; an admin (``None``) sees every file."""
        index = fill(search_index if leg == "keyword" else vector_index)
        index.replace_file("acme", "hr", [doc("hr", 0, "Invoice payment of salaries", readers=["g:hr"])])
        index.replace_file("acme", "own", [doc("own", 0, "Invoice payment to my dentist", readers=["u:ann"])])
        q = "invoice payment"

        def files(tokens: tuple[str, ...] | None) -> set[str]:
            f = ALL.read_as(tokens)
            hits = index.keyword("acme", q, f, 50) if leg == "keyword" else index.knn("acme", EMB.embed_query(q), f, 50)
            return {h.file_id for h in hits}

        assert files(("tenant", "u:bob")) == {"inv", "bike"} & files(None)
        assert files(("tenant", "u:bob", "g:hr")) == ({"inv", "bike"} & files(None)) | {"hr"}
        assert files(("tenant", "u:ann")) == ({"inv", "bike"} & files(None)) | {"own"}
        assert {"hr", "own", "inv"} <= files(None)
        assert files(("u:ann",)) == {"own"}

    def test_file_ids_in_a_key_range(self, search_index: SearchIndex) -> None:
        for file_id in ("f_a", "f_b", "f_c", "f_d"):
            search_index.replace_file("acme", file_id, [doc(file_id, 0, f"text of {file_id}")])
        search_index.replace_file("globex", "f_b2", [doc("f_b2", 0, "another tenant", tenant="globex")])
        assert search_index.file_ids("acme", after="f_a", until="f_c") == {"f_b", "f_c"}  # (after, until]
        assert search_index.file_ids("acme", after="f_b") == {"f_c", "f_d"}
        assert search_index.file_ids("acme", until="f_a") == {"f_a"}

    def test_get_docs_round_trips_fields(self, filled: SearchIndex) -> None:
        got = filled.get_docs("acme", ["bike:0"])["bike:0"]
        assert got.tags == ["product"] and got.thread_id == "t1" and got.contact_ids == ["c_acme"]
        assert got.text.startswith("The Vela") and got.embedding is None

    def test_knn_on_empty_index(self, vector_index: SearchIndex) -> None:
        assert vector_index.knn("acme", EMB.embed_query("x"), ALL, 5) == []


class TestLocalIndexRecovery:
    """The local index's derived parts catch up with SQLite, its truth, across handles and crashes."""

    def test_a_second_handle_sees_writes_of_the_first(self, tmp_path: Path) -> None:
        # `semfs ingest` in one process while `semfs serve` searches in another
        reader, writer = LocalSearchIndex(tmp_path / "i.db"), LocalSearchIndex(tmp_path / "i.db")
        assert reader.keyword("acme", "kittens", ALL, 5) == []
        writer.replace_file("acme", "k", [doc("k", 0, "kittens playing")])
        assert [h.file_id for h in reader.keyword("acme", "kittens", ALL, 5)] == ["k"]
        assert [h.file_id for h in reader.knn("acme", EMB.embed_query("kittens playing"), ALL, 5)] == ["k"]

    def test_keyword_index_is_rebuilt_from_sqlite_when_they_disagree(self, tmp_path: Path) -> None:
        first = LocalSearchIndex(tmp_path / "i.db")
        first.replace_file("acme", "k", [doc("k", 0, "kittens playing")])
        shutil.rmtree(tmp_path / "i.keywords")  # as if the process died before the keyword commit
        assert not (tmp_path / "i.keywords").exists()
        again = LocalSearchIndex(tmp_path / "i.db")
        assert [h.file_id for h in again.keyword("acme", "kittens", ALL, 5)] == ["k"]

    def test_writes_lost_in_a_crashed_batch_are_repaired_from_sqlite(self, tmp_path: Path) -> None:
        first = LocalSearchIndex(tmp_path / "i.db")
        first.replace_file("acme", "a", [doc("a", 0, "aardvarks")])
        crashed = first.batch()  # the process dies inside the batch: its deferred keyword commit never happens
        crashed.__enter__()
        first.replace_file("acme", "b", [doc("b", 0, "badgers in a batch")])
        acme = first.keywords.of("acme")
        held = acme._held
        held.rollback()
        held.wait_merging_threads()
        acme._held = None
        again = LocalSearchIndex(tmp_path / "i.db")
        # a reader answers from the last commit at once and repairs the rest beside its searches
        assert [h.file_id for h in again.keyword("acme", "aardvarks", ALL, 5)] == ["a"]
        again.keywords.join_repairs(CEILING_S)
        assert [h.file_id for h in again.keyword("acme", "badgers", ALL, 5)] == ["b"]
        assert [h.file_id for h in again.keyword("acme", "aardvarks", ALL, 5)] == ["a"]


@pytest.fixture(params=["local", "opensearch"])
def migrating_index(request: pytest.FixtureRequest, tmp_path: Path) -> SearchIndex:
    """An index whose searchable model is ``m-old``, holding two files (the local one learns its model
    from the first vectors written; OpenSearch is told it, as the composition root does)."""
    index: SearchIndex
    if request.param == "local":
        index = LocalSearchIndex(tmp_path / "i.db")
    else:
        from semfs.adapters.aws.opensearch import OpenSearchIndex
        from semfs.config import Settings

        url = request.getfixturevalue("osmem_url")
        index = OpenSearchIndex(Settings(opensearch_endpoint=url, index_name="semfs-switch"), dim=384, model="m-old")
    index.replace_file("acme", "a", [doc("a", 0, "aardvark notes", embedding_model="m-old")])
    index.replace_file("acme", "b", [doc("b", 0, "badger notes", embedding_model="m-old")])
    return index


class TestVectorMigration:
    """A re-embed: vectors of the new model staged beside the searchable ones, writes and deletes during
    the migration reaching both, and one switch after which the new model is the searchable one."""

    def test_staged_vectors_follow_writes_and_deletes_until_the_switch(self, migrating_index: SearchIndex) -> None:
        index = migrating_index
        assert index.active_model() == "m-old"
        index.stage_vectors("acme", "a", "m-new", {"a:0": [0.1] * 128})
        assert index.staged_file_ids("m-new") == {("acme", "a")}
        assert index.staged_file_ids("m-new", "globex") == set()
        # a file written mid-switch is searchable now (by keyword) and is staged for the new model too
        index.replace_file(
            "acme", "c", [doc("c", 0, "cormorant notes", embedding_model="m-new", embedding=[0.2] * 128)]
        )
        assert index.staged_file_ids("m-new") == {("acme", "a"), ("acme", "c")}
        assert {h.file_id for h in index.keyword("acme", "notes", ALL, 10)} == {"a", "b", "c"}
        # a delete mid-switch reaches the staged vectors as well
        index.delete_file("acme", "a")
        index.stage_vectors("acme", "b", "m-new", {"b:0": [0.3] * 128})
        assert index.staged_file_ids("m-new") == {("acme", "b"), ("acme", "c")}
        assert index.staged_file_ids("m-new", after="b", until="c") == {("acme", "c")}
        index.switch_model("m-new")
        assert index.active_model() == "m-new"
        assert {h.file_id for h in index.keyword("acme", "notes", ALL, 10)} == {"b", "c"}
        assert index.staged_file_ids("m-new") == set()  # nothing is staged once it is the searchable model

    def test_the_new_models_vectors_are_searched_before_and_after_the_switch(self, tmp_path: Path) -> None:
        """k-NN runs only on the local index here (osmem has no k-NN; the DSL tests check OpenSearch's)."""
        index = LocalSearchIndex(tmp_path / "i.db")
        index.replace_file("acme", "a", [doc("a", 0, "aardvark notes", embedding_model="m-old")])
        index.replace_file("acme", "b", [doc("b", 0, "badger notes", embedding_model="m-old")])
        index.stage_vectors("acme", "b", "m-new", {"b:0": [1.0, 0.0, 0.0, 0.0]})
        assert [h.file_id for h in index.knn_staged("acme", [1.0, 0.0, 0.0, 0.0], ALL, 5, "m-new")] == ["b"]
        assert index.knn("acme", [1.0, 0.0, 0.0, 0.0], ALL, 5, model="m-new") == []  # not searchable yet
        index.switch_model("m-new")
        assert [h.file_id for h in index.knn("acme", [1.0, 0.0, 0.0, 0.0], ALL, 5, model="m-new")] == ["b"]
