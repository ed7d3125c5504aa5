"""The local index's own rules, beyond the port's contract: the HNSW leg is updated in place and never
answers outside the scope SQLite decides; rids are never reused; the scope is compiled alike by every
backend."""

from __future__ import annotations

import sqlite3
import threading
import typing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from semfs.adapters.local.doc_store import DocStore
from semfs.adapters.local.keyword_index import _TV_FIELDS
from semfs.adapters.local.search_index import LocalSearchIndex
from semfs.domain.models import IndexDoc, SearchFilters
from semfs.domain.scope import DOC_FIELDS, Field
from tests.builders import index_doc
from tests.waits import CEILING_S

pytestmark = pytest.mark.contract
MODEL = "clustered-64"
ALL = SearchFilters()


def clustered(n: int, dim: int = 64, seed: int = 5) -> np.ndarray:
    """Unit vectors around a few hundred centres: shaped like embeddings, unlike uniform noise."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((max(8, n // 20), dim)).astype(np.float32)
    v = centres[rng.integers(0, len(centres), n)] + 0.35 * rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def docs_for(file_id: str, vecs: np.ndarray, tenant: str = "acme", **kw: object) -> list[IndexDoc]:
    return [
        index_doc(file_id, i, f"chunk {i} of {file_id}", tenant=tenant, embedding=v, embedding_model=MODEL, **kw)
        for i, v in enumerate(vecs)
    ]


def fill(index: LocalSearchIndex, vecs: np.ndarray, per_file: int = 4) -> None:
    files = [("acme", f"f{i}", docs_for(f"f{i}", vecs[i : i + per_file])) for i in range(0, len(vecs), per_file)]
    with index.batch():
        for start in range(0, len(files), 50):
            index.replace_files(files[start : start + 50])


def exact_top(vecs: np.ndarray, q: np.ndarray, k: int, per_file: int = 4) -> list[str]:
    order = np.argsort(-(vecs @ q), kind="stable")[:k]
    return [f"f{(i // per_file) * per_file}:{i % per_file}" for i in order]


def graph_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "i.vectors").glob("*.usearch"))


@pytest.mark.parametrize(("build_threads", "least"), [(1, 0.98), (None, 0.95)], ids=["one-thread", "every-core"])
def test_hnsw_leg_recall_against_exact(tmp_path: Path, build_threads: int | None, least: float) -> None:
    """The goal (0.98) holds for the graph one thread builds, which is the same graph every time. Threads
    that build it together interleave as the scheduler lets them: on a busy machine the graph is worse
    (CI beside other work measured 0.978; six builds beside four CPU-bound processes 0.976-0.998), so the
    default build is held to a floor the scheduler cannot take it under, not to the goal."""
    vecs = clustered(4000)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100, build_threads=build_threads)
    fill(index, vecs)
    assert graph_files(tmp_path), "the batch's end folds the rows into a graph"
    queries = clustered(50, seed=9)
    recall = []
    for q in queries:
        got = [h.chunk_id for h in index.knn("acme", q.tolist(), ALL, 10)]
        recall.append(len(set(got) & set(exact_top(vecs, q, 10))) / 10)
    assert np.mean(recall) >= least


def test_a_caller_who_sees_one_percent_of_the_chunks_still_gets_k_exact_hits(tmp_path: Path) -> None:
    """Access lists filter inside the vector leg (``domain/access.py``): the graph's candidates are checked
    in SQLite, widened, and a scope the graph cannot fill is ranked exactly, so a caller who may read 1 %
    of the tenant's chunks gets k hits, all theirs, the same as an exact search over what they see."""
    vecs = clustered(4000)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100, build_threads=1)
    files = [
        ("acme", f"f{i}", docs_for(f"f{i}", vecs[i : i + 4], readers=["u:ann"] if i % 400 == 0 else ["u:bob"]))
        for i in range(0, len(vecs), 4)
    ]
    with index.batch():
        index.replace_files(files)
    assert graph_files(tmp_path)
    mine = np.array([i for i in range(len(vecs)) if (i // 4 * 4) % 400 == 0])
    assert len(mine) == 40  # 1 % of the chunks
    for q in clustered(20, seed=9):
        got = [h.chunk_id for h in index.knn("acme", q.tolist(), ALL.read_as(("tenant", "u:ann")), 10)]
        order = mine[np.argsort(-(vecs[mine] @ q), kind="stable")[:10]]
        assert got == [f"f{i // 4 * 4}:{i % 4}" for i in order]


def test_writes_extend_the_graph_without_rebuilding_and_readers_see_them_at_once(tmp_path: Path) -> None:
    vecs = clustered(600)
    writer = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=200)
    reader = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=200)
    fill(writer, vecs[:400])
    first = graph_files(tmp_path)
    assert len(first) == 1
    reader.knn("acme", vecs[0].tolist(), ALL, 5)  # maps the graph
    # fewer new rows than the tail holds: no file is written, and the other handle finds them exactly
    writer.replace_file("acme", "late", docs_for("late", vecs[400:404]))
    assert graph_files(tmp_path) == first
    assert reader.knn("acme", vecs[401].tolist(), ALL, 1)[0].chunk_id == "late:1"
    # past the tail limit the graph is extended (a new file replaces the old), not rebuilt from zero
    for i in range(404, 600, 4):
        writer.replace_file("acme", f"f{i}", docs_for(f"f{i}", vecs[i : i + 4]))
    writer.vectors.join_builds()  # (extended in the background: a write never waits for a graph)
    (now,) = graph_files(tmp_path)
    assert now != first[0]
    row = writer.store.conn().execute("SELECT high_rid, size FROM vector_files").fetchone()
    assert row["size"] >= 400 and row["high_rid"] >= 400
    assert reader.knn("acme", vecs[599].tolist(), ALL, 1)[0].chunk_id == "f596:3"


def test_deleted_replaced_and_superseded_rows_never_surface(tmp_path: Path) -> None:
    vecs = clustered(800)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=10_000)
    fill(index, vecs)
    assert graph_files(tmp_path)
    index.delete_file("acme", "f0")
    index.replace_file("acme", "f4", docs_for("f4", clustered(4, seed=77)))  # same file id, new vectors
    # f8 gets a newer version in the same lineage: only the latest answers by default
    index.replace_file("acme", "f8", docs_for("f8", vecs[8:12], lineage_id="L"))
    index.replace_file("acme", "f8b", docs_for("f8b", clustered(4, seed=78), lineage_id="L", version=2))
    index.set_latest("acme", "L", "f8b", lambda file_id: pytest.fail("the local index flips the flag in place"))
    for i in (0, 1, 4, 5, 8, 9):
        hits = index.knn("acme", vecs[i].tolist(), ALL, 10)
        assert not {h.file_id for h in hits} & {"f0"}
        assert all(h.chunk_id != f"f{(i // 4) * 4}:{i % 4}" for h in hits if h.file_id in ("f4", "f8"))
    history = index.knn("acme", vecs[9].tolist(), SearchFilters(include_history=True), 1)
    assert history[0].chunk_id == "f8:1"


def test_a_narrow_filter_is_filled_exactly(tmp_path: Path) -> None:
    vecs = clustered(2000)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100)
    fill(index, vecs)
    rare = clustered(3, seed=99)
    index.replace_file("acme", "rare", docs_for("rare", rare, thread_id="t-rare"))
    far = -vecs[0]  # nowhere near the thread's three chunks: the graph's candidates hold none of them
    hits = index.knn("acme", far.tolist(), SearchFilters(thread_id="t-rare"), 10)
    assert sorted(h.chunk_id for h in hits) == ["rare:0", "rare:1", "rare:2"]


def test_other_tenants_are_never_candidates(tmp_path: Path) -> None:
    vecs = clustered(400)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=50, tail_max=50)
    fill(index, vecs)
    index.replace_files(
        [("globex", f"g{i}", docs_for(f"g{i}", vecs[i : i + 4], tenant="globex")) for i in range(0, 400, 4)]
    )
    for q in vecs[:20]:
        assert all(h.file_id.startswith("f") for h in index.knn("acme", q.tolist(), ALL, 20))
        assert all(h.file_id.startswith("g") for h in index.knn("globex", q.tolist(), ALL, 20))


def test_a_missing_graph_is_rebuilt_from_sqlite(tmp_path: Path) -> None:
    vecs = clustered(500)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100)
    fill(index, vecs)
    for f in graph_files(tmp_path):
        f.unlink()
    fresh = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100)
    assert fresh.knn("acme", vecs[7].tolist(), ALL, 1)[0].chunk_id == "f4:3"
    fresh.vectors.join_builds(CEILING_S)
    assert graph_files(tmp_path), "the search that found the file gone had it built again"


def test_a_search_never_waits_for_a_graph_a_dead_writer_left_behind(tmp_path: Path) -> None:
    """Issue 33: after a writer was killed mid-load (rows in SQLite, its graph never extended) the next
    search built the graph itself, 87 s at 1M chunks; while a writer loaded, 91 s. Now the search ranks
    the tail exactly, at once and correctly, and the graph is extended in a background thread."""
    import threading

    vecs = clustered(1200)
    writer = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100)
    fill(writer, vecs[:400])
    (before,) = graph_files(tmp_path)
    # the writer dies: 800 more rows committed, no maintenance after them (the store's own write path)
    files = [("acme", f"f{i}", docs_for(f"f{i}", vecs[i : i + 4])) for i in range(400, 1200, 4)]
    writer.store.replace_files(files)
    assert graph_files(tmp_path) == [before]

    reader = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100)
    built_in: list[int] = []
    maintain = reader.vectors._maintain

    def record(model: str, tenant_id: str) -> None:
        built_in.append(threading.get_ident())
        maintain(model, tenant_id)

    reader.vectors._maintain = record  # type: ignore[method-assign]
    for i in (3, 700, 1199):
        assert reader.knn("acme", vecs[i].tolist(), ALL, 1)[0].chunk_id == f"f{(i // 4) * 4}:{i % 4}"
    reader.vectors.join_builds(CEILING_S)
    assert built_in and threading.get_ident() not in built_in  # built, and never by a search's thread
    assert len(built_in) == 1  # once, however many searches found the tail long
    (after,) = graph_files(tmp_path)
    assert after != before
    row = reader.store.conn().execute("SELECT high_rid, size FROM vector_files").fetchone()
    assert row["size"] == 1200
    assert reader.knn("acme", vecs[1199].tolist(), ALL, 1)[0].chunk_id == "f1196:3"


def test_a_search_never_waits_for_a_keyword_rebuild_a_dead_writer_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: after a writer was killed between its SQLite commit and its tantivy commit, the next
    process's first search rebuilt the tenant's keyword index itself (9.35 s at 100k chunks). Now the
    rebuild runs in a thread of its own while searches read the last good commit, which never shows a
    row SQLite no longer holds; the dead writer's rows are found by keyword once the rebuild ends."""
    import threading

    writer = LocalSearchIndex(tmp_path / "i.db")
    for n in range(6):
        writer.replace_file("acme", f"old{n}", [index_doc(f"old{n}", 0, f"pallet manifest {n}")])
    # the writer dies after SQLite committed: a new file, and one old file deleted, never reach tantivy
    writer.store.replace_files([("acme", "new", [index_doc("new", 0, "zeppelin manifest")])])
    writer.store.delete_file("acme", "old5")

    release, rebuilt_in = threading.Event(), []
    real = DocStore.kind_rows
    searching = threading.get_ident()

    def held_back(self: DocStore, kind: str, tenant_id: str) -> typing.Iterator[sqlite3.Row]:
        """A rebuild reads every row of the tenant: held back until the searches below have answered."""
        assert threading.get_ident() != searching, "a search rebuilt the keyword index itself"
        rebuilt_in.append(kind)
        assert release.wait(CEILING_S)
        return real(self, kind, tenant_id)

    monkeypatch.setattr(DocStore, "kind_rows", held_back)
    reader = LocalSearchIndex(tmp_path / "i.db")
    # answered while the rebuild is held back: from the last commit, without the deleted file
    assert {h.file_id for h in reader.keyword("acme", "pallet", ALL, 10)} == {f"old{n}" for n in range(5)}
    assert reader.keyword("acme", "zeppelin", ALL, 10) == []  # not yet: the dead writer's row is the rebuild's
    release.set()
    reader.keywords.join_repairs(CEILING_S)
    assert [h.file_id for h in reader.keyword("acme", "zeppelin", ALL, 10)] == ["new"]
    assert {h.file_id for h in reader.keyword("acme", "manifest", ALL, 10)} == {"new"} | {f"old{n}" for n in range(5)}
    assert rebuilt_in == ["chunk"]  # once, however many searches found the index behind
    # a writer opening a behind index repairs it before it writes (its commit would mark it current)
    writer.store.replace_files([("acme", "later", [index_doc("later", 0, "airship manifest")])])
    second = LocalSearchIndex(tmp_path / "i.db")
    second.replace_file("acme", "after", [index_doc("after", 0, "blimp manifest")])
    third = LocalSearchIndex(tmp_path / "i.db")
    assert [h.file_id for h in third.keyword("acme", "airship", ALL, 10)] == ["later"]


def test_a_half_written_graph_a_killed_builder_left_is_removed(tmp_path: Path) -> None:
    vecs = clustered(300)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100)
    fill(index, vecs[:200])
    (graph,) = graph_files(tmp_path)
    leftover = graph.parent / f".{graph.name.split('-')[0]}-dead.usearch.tmp"
    leftover.write_bytes(b"half a graph")
    for i in range(200, 300, 4):
        index.replace_file("acme", f"f{i}", docs_for(f"f{i}", vecs[i : i + 4]))
    index.vectors.join_builds()
    assert graph_files(tmp_path) != [graph] and not leftover.exists()


def test_a_write_never_waits_for_its_tenants_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47.7: a write past the tail's limit extended (or rebuilt) the tenant's graph in the writer: a 6 MB file
    of short lines held a worker in its Index stage for 573 s. Now the build runs beside it: while a build is held
    the writes go on and are found (exactly, from the tail), and the graph is extended once the build may go."""
    from semfs.adapters.local import vector_index

    vecs = clustered(500)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100)
    fill(index, vecs[:200])
    (first,) = graph_files(tmp_path)
    held, building = threading.Event(), threading.Event()
    original = vector_index.VectorIndex._add_rows

    def slow_build(self: Any, *args: Any) -> Any:
        building.set()
        assert held.wait(CEILING_S)
        return original(self, *args)

    monkeypatch.setattr(vector_index.VectorIndex, "_add_rows", slow_build)
    done = threading.Event()

    def write() -> None:
        for i in range(200, 500, 4):
            index.replace_file("acme", f"f{i}", docs_for(f"f{i}", vecs[i : i + 4]))
        done.set()

    threading.Thread(target=write, daemon=True).start()
    assert building.wait(CEILING_S)  # a build started ...
    assert done.wait(CEILING_S)  # ... and every write finished while it was held
    assert index.knn("acme", vecs[499].tolist(), ALL, 1)[0].chunk_id == "f496:3"
    held.set()
    index.vectors.join_builds()
    assert graph_files(tmp_path) != [first]


def test_a_model_switch_drops_the_old_models_graphs(tmp_path: Path) -> None:
    vecs = clustered(300)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=50, tail_max=50)
    fill(index, vecs)
    old = graph_files(tmp_path)
    assert old
    new = clustered(300, dim=32, seed=3)
    for i in range(0, 300, 4):
        index.stage_vectors("acme", f"f{i}", "other-32", {f"f{i}:{j}": new[i + j].tolist() for j in range(4)})
    index.switch_model("other-32")
    assert not set(old) & set(graph_files(tmp_path))
    assert index.knn("acme", vecs[0].tolist(), ALL, 5) == []  # a 64-d query against 32-d vectors
    assert index.knn("acme", new[10].tolist(), ALL, 1, model="other-32")[0].chunk_id == "f8:2"


def test_rids_are_never_reused_and_old_stores_migrate(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    conn.execute(
        "CREATE TABLE docs (rid INTEGER PRIMARY KEY, chunk_id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,"
        " file_id TEXT NOT NULL, lineage_id TEXT NOT NULL, tenant_id TEXT NOT NULL, version INTEGER NOT NULL,"
        " is_latest INTEGER NOT NULL, thread_id TEXT, source_type TEXT NOT NULL, mime_type TEXT NOT NULL,"
        " filename TEXT NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL, tags TEXT NOT NULL,"
        " contact_ids TEXT NOT NULL, location TEXT NOT NULL, created_at TEXT NOT NULL, embedding_model TEXT,"
        " embedding BLOB)"
    )
    conn.execute(
        "INSERT INTO docs VALUES (7, 'a:0', 'chunk', 'a', 'a', 'acme', 1, 1, NULL, 'upload', 'text/plain',"
        " 'a.txt', '', 'kept', '[]', '[]', '{}', '2026-01-01T00:00:00+00:00', NULL, NULL)"
    )
    conn.commit()
    conn.close()
    store = DocStore(db)
    assert store.conn().execute("SELECT rid FROM docs WHERE chunk_id = 'a:0'").fetchone()[0] == 7
    index = LocalSearchIndex(db)
    index.replace_file("acme", "b", [index_doc("b", 0, "new")])
    top = index.store.max_rid()
    index.delete_file("acme", "b")
    index.replace_file("acme", "c", [index_doc("c", 0, "newer")])
    assert index.store.max_rid() > top  # the deleted row's rid is not handed out again


def test_every_scope_field_is_compiled_by_every_backend() -> None:
    fields = set(typing.get_args(Field))
    assert set(DOC_FIELDS) == fields  # SQLite and OpenSearch store documents under IndexDoc's names
    assert set(DOC_FIELDS.values()) <= set(IndexDoc.model_fields)
    assert set(_TV_FIELDS) == fields


@pytest.mark.parametrize("first", ["usearch.index", "onnxruntime"])
def test_the_vector_library_and_the_model_runtime_load_in_either_order(first: str) -> None:
    """usearch 2.26 crashed the process when imported before onnxruntime (a `semfs reindex` folds
    vectors into the graph before it embeds anything): both orders must work."""
    import subprocess
    import sys

    second = "onnxruntime" if first == "usearch.index" else "usearch.index"
    done = subprocess.run([sys.executable, "-c", f"import {first}; import {second}"], check=False, timeout=120)
    assert done.returncode == 0


def test_keyword_leg_ranks_as_the_query_with_the_scope_inside(tmp_path: Path) -> None:
    """The leg first ranks the whole index and keeps what SQLite finds in scope; that must be exactly
    the filtered query's ranking, for a tenant holding most rows, one holding few, and narrow filters."""
    from semfs.domain.scope import scope

    rng = np.random.default_rng(4)
    words = "invoice payment contract supplier delivery warehouse bicycle policy budget revenue audit".split()
    index = LocalSearchIndex(tmp_path / "i.db")
    files = []
    for i in range(400):
        tenant = "acme" if i % 10 else "globex"
        text = " ".join(rng.choice(words, size=12))
        files.append((tenant, f"f{i}", [index_doc(f"f{i}", 0, text, tenant=tenant, tags=["t" + str(i % 3)])]))
    index.replace_files(files)
    for tenant in ("acme", "globex"):
        for filters in (ALL, SearchFilters(tags=["t1"]), SearchFilters(file_ids=["f3", "f10", "f20", "f30"])):
            for q in ("invoice payment", "bicycle audit revenue", "warehouse"):
                got = [h.chunk_id for h in index.keyword(tenant, q, filters, 10)]
                inside = index.keywords.of(tenant).search(q, scope(tenant, filters), 10)
                found = index.store.scoped_rids([rid for rid, _ in inside], scope(tenant, filters))
                assert got == [found[rid][0] for rid, _ in inside if rid in found], (tenant, filters, q)
                assert all(
                    h.file_id in {f for t, f, _ in files if t == tenant} for h in index.keyword(tenant, q, filters, 10)
                )


def _chunk_scores(index: LocalSearchIndex, q: str) -> dict[str, float]:
    return {h.chunk_id: round(h.score, 5) for h in index.keyword("acme", q, ALL, 20)}


def test_file_cards_leave_the_chunks_bm25_statistics_alone(tmp_path: Path) -> None:
    """One short card per file would nearly double BM25's document count and halve the average length
    chunks are normalised by. Cards live in an index of their own: the chunk leg scores exactly as
    with no cards, the card leg finds cards only, and an empty card is not indexed at all."""
    texts = [
        "the supplier shipped forty pallets to the warehouse in march",
        "payment terms are thirty days from the invoice date",
        "the audit found the warehouse stock matched the ledger",
    ]
    chunks = {f"f{i}": index_doc(f"f{i}", 0, t) for i, t in enumerate(texts)}
    cards = {
        "f0": index_doc("f0", 99, "Warehouse delivery note", kind="card", chunk_id="f0:card"),
        "f1": index_doc("f1", 99, "", kind="card", chunk_id="f1:card"),  # an untitled file's card
        "f2": index_doc("f2", 99, "Audit report", kind="card", chunk_id="f2:card"),
    }
    plain = LocalSearchIndex(tmp_path / "plain.db")
    plain.replace_files([("acme", f, [d]) for f, d in chunks.items()])
    carded = LocalSearchIndex(tmp_path / "carded.db")
    carded.replace_files([("acme", f, [d, cards[f]]) for f, d in chunks.items()])
    for q in ("warehouse", "audit warehouse", "invoice"):
        assert _chunk_scores(carded, q) == _chunk_scores(plain, q)
    assert [h.chunk_id for h in carded.keyword("acme", "warehouse", ALL, 10, kind="card")] == ["f0:card"]
    assert carded.card_keywords.of("acme").open().searcher().num_docs == 2  # the empty card is not there
    assert carded.keywords.of("acme").open().searcher().num_docs == 3


def test_an_index_with_cards_among_the_chunks_is_rebuilt_in_two(tmp_path: Path) -> None:
    """A store written before cards had their own index: its keyword index holds both kinds. On open the
    count no longer matches the chunks, so the chunk index is rebuilt without cards, and the card index
    is built; searches answer as on a fresh store."""
    index = LocalSearchIndex(tmp_path / "i.db")
    index.replace_files(
        [("acme", "f0", [index_doc("f0", 0, "forty pallets"), index_doc("f0", 1, "Pallet note", kind="card")])]
    )
    old = LocalSearchIndex(tmp_path / "i.db")
    writer = old.keywords.of("acme").open().writer()  # what an index of an old store held: the card as well
    from semfs.adapters.local.keyword_index import _tv_doc

    writer.add_document(_tv_doc(old.store.rows("kind = 'card'", ())[0]))
    writer.commit()
    writer.wait_merging_threads()
    reopened = LocalSearchIndex(tmp_path / "i.db")
    reopened.keywords.of("acme").open()
    reopened.keywords.join_repairs(CEILING_S)  # a reader's repair runs beside its searches
    assert reopened.keywords.of("acme").open().searcher().num_docs == 1
    assert [h.chunk_id for h in reopened.keyword("acme", "pallet", ALL, 5, kind="card")] == ["f0:1"]


def _score(index: LocalSearchIndex, tenant: str, query: str) -> float:
    (hit,) = [h for h in index.keyword(tenant, query, ALL, 10) if h.file_id == "mine"]
    return hit.score


def test_one_tenants_documents_never_move_anothers_scores(tmp_path: Path) -> None:
    """BM25's statistics are each tenant's own. Before, one index held every tenant: tenant a's score
    for a rare word fell from 1.552 to 1.102 once tenant b stored one document with it, so scores told
    a what b's documents say. The same writes to one shared tantivy index are the oracle: there the
    score does move, so this test would see a shared index come back."""
    import tantivy

    index = LocalSearchIndex(tmp_path / "i.db")
    index.replace_file("a", "mine", [index_doc("mine", 0, "the zeppelin contract renewal terms", tenant="a")])
    for n in range(5):
        index.replace_file("a", f"other{n}", [index_doc(f"other{n}", 0, f"invoice number {n} terms", tenant="a")])
    before = {q: _score(index, "a", q) for q in ("zeppelin", "terms", "zeppelin renewal")}
    for n in range(20):  # tenant b writes the rare word, and the common one, many times
        text = "zeppelin zeppelin terms " * (n + 1)
        index.replace_file("b", f"b{n}", [index_doc(f"b{n}", 0, text, tenant="b")])
    assert {q: _score(index, "a", q) for q in before} == before  # to the last bit
    assert {h.file_id for h in index.keyword("b", "zeppelin", ALL, 50)} == {f"b{n}" for n in range(20)}

    shared = tantivy.Index(tantivy.SchemaBuilder().add_text_field("text", stored=False).build())
    writer = shared.writer()
    writer.add_document(tantivy.Document(text="the zeppelin contract renewal terms"))
    writer.commit()
    shared.reload()
    alone = shared.searcher().search(shared.parse_query("zeppelin", ["text"]), 1).hits[0][0]
    writer.add_document(tantivy.Document(text="zeppelin zeppelin terms"))
    writer.commit()
    shared.reload()
    assert shared.searcher().search(shared.parse_query("zeppelin", ["text"]), 1).hits[0][0] != alone


def test_a_write_to_one_tenant_never_rebuilds_anothers_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each tenant's index knows which of the store's writes were its tenant's: another process
    opening the store after tenant b's writes rebuilds nothing for tenant a."""
    first = LocalSearchIndex(tmp_path / "i.db")
    first.replace_file("a", "mine", [index_doc("mine", 0, "alpha notes", tenant="a")])
    first.replace_file("b", "theirs", [index_doc("theirs", 0, "beta notes", tenant="b")])
    rebuilt: list[str] = []
    real = DocStore.kind_rows

    def spy(self: DocStore, kind: str, tenant_id: str) -> typing.Iterator[sqlite3.Row]:
        rebuilt.append(tenant_id)
        return real(self, kind, tenant_id)

    monkeypatch.setattr(DocStore, "kind_rows", spy)
    again = LocalSearchIndex(tmp_path / "i.db")
    assert [h.file_id for h in again.keyword("a", "notes", ALL, 5)] == ["mine"]
    again.replace_file("b", "more", [index_doc("more", 0, "gamma notes", tenant="b")])
    third = LocalSearchIndex(tmp_path / "i.db")
    assert [h.file_id for h in third.keyword("a", "notes", ALL, 5)] == ["mine"]
    assert rebuilt == []


def test_the_shared_index_of_an_older_store_gives_way_to_one_per_tenant(tmp_path: Path) -> None:
    first = LocalSearchIndex(tmp_path / "i.db")
    first.replace_file("a", "mine", [index_doc("mine", 0, "alpha notes", tenant="a")])
    legacy = tmp_path / "i.tantivy"
    legacy.mkdir()
    (legacy / "meta.json").write_text("{}")  # where the one index for every tenant was kept
    again = LocalSearchIndex(tmp_path / "i.db")
    assert not legacy.exists()  # derived data, rebuilt per tenant from SQLite
    assert [h.file_id for h in again.keyword("a", "alpha", ALL, 5)] == ["mine"]


def _rows_counted(store: DocStore, kind: str, tenant: str) -> int:
    """The count the slow way: every row of the tenant that the keyword index of ``kind`` holds."""
    where = "kind = 'chunk'" if kind == "chunk" else "kind = 'card' AND text != ''"
    sql = f"SELECT COUNT(*) FROM docs WHERE tenant_id = ? AND {where}"
    return int(store.conn().execute(sql, (tenant,)).fetchone()[0])


def _docs(file_id: str, n: int, tenant: str, card: str | None) -> list[IndexDoc]:
    chunks = [index_doc(file_id, i, f"chunk {i} of {file_id}", tenant=tenant) for i in range(n)]
    if card is not None:
        chunks.append(index_doc(file_id, n, card, tenant=tenant, kind="card", chunk_id=f"{file_id}:card"))
    return chunks


def test_the_counts_sqlite_keeps_are_the_rows_through_every_kind_of_write(tmp_path: Path) -> None:
    """What the keyword indexes are checked against on open (``doc_counts``, kept by triggers) equals a
    count of the rows after inserts, replacements, deletes, cards with and without text, and updates."""
    rng = np.random.default_rng(7)
    index = LocalSearchIndex(tmp_path / "i.db")
    store = index.store
    for step in range(60):
        tenant = f"t{rng.integers(3)}"
        file_id = f"{tenant}-f{rng.integers(12)}"  # (a chunk id is unique across tenants)
        if rng.random() < 0.25:
            index.delete_file(tenant, file_id)
        else:
            card = [None, "", "a summary card"][int(rng.integers(3))]
            index.replace_file(tenant, file_id, _docs(file_id, int(rng.integers(0, 5)), tenant, card))
        if step % 10 == 9:  # a card's text emptied in place, and one filled: the update trigger
            store.conn().execute("UPDATE docs SET text = '' WHERE kind = 'card' AND rid % 2 = 0")
            store.conn().execute("UPDATE docs SET text = 'filled' WHERE kind = 'card' AND text = '' AND rid % 3 = 0")
        for t in ("t0", "t1", "t2"):
            for kind in ("chunk", "card"):
                assert store.kind_count(kind, t) == _rows_counted(store, kind, t), (step, t, kind)
    assert sum(store.kind_count("chunk", t) for t in ("t0", "t1", "t2")) > 0


def test_opening_a_keyword_index_counts_no_rows(tmp_path: Path) -> None:
    """A fresh process's first keyword query checks its index against SQLite in O(1): no statement it
    runs counts or scans the tenant's documents (a COUNT(*) took 2.6-3.6 s at 1M chunks)."""
    first = LocalSearchIndex(tmp_path / "i.db")
    for i in range(20):
        first.replace_file("acme", f"f{i}", _docs(f"f{i}", 3, "acme", "card of the file"))
    fresh = LocalSearchIndex(tmp_path / "i.db")
    said: list[str] = []
    fresh.store.conn().set_trace_callback(said.append)
    assert next(h.file_id for h in fresh.keyword("acme", "chunk of f7", ALL, 3)) == "f7"
    fresh.store.conn().set_trace_callback(None)
    assert said and not [s for s in said if "COUNT(" in s.upper()], said


def test_a_store_from_before_the_counts_is_counted_once_and_then_kept(tmp_path: Path) -> None:
    db = tmp_path / "i.db"
    index = LocalSearchIndex(db)
    for i in range(5):
        index.replace_file("acme", f"f{i}", _docs(f"f{i}", 2, "acme", "a card"))
    index.replace_file("beta", "b", _docs("b", 4, "beta", None))
    conn = sqlite3.connect(db)  # what an earlier semfs wrote: no counts, no triggers
    conn.executescript(
        "DROP TRIGGER docs_count_ai; DROP TRIGGER docs_count_ad; DROP TRIGGER docs_count_au; DROP TABLE doc_counts;"
    )
    conn.close()
    again = LocalSearchIndex(db)
    assert (again.store.kind_count("chunk", "acme"), again.store.kind_count("card", "acme")) == (10, 5)
    assert again.store.kind_count("chunk", "beta") == 4
    again.replace_file("beta", "cedar", _docs("cedar", 3, "beta", "card"))
    again.delete_file("acme", "f0")
    for tenant in ("acme", "beta"):
        for kind in ("chunk", "card"):
            assert again.store.kind_count(kind, tenant) == _rows_counted(again.store, kind, tenant)
    assert [h.file_id for h in again.keyword("beta", "cedar", ALL, 1)] == ["cedar"]


def test_a_scope_of_many_files_is_one_sql_variable(tmp_path: Path) -> None:
    """Issue 47.8: a list in a scope is bound as one JSON value, never one SQLite variable per item (the
    limit is 32,766 here and 999 in older builds)."""
    from semfs.adapters.local.doc_store import compile_sql
    from semfs.domain.scope import AnyOf, Term

    where, params = compile_sql([Term("tenant", "acme"), AnyOf("file_id", tuple(f"f_{i}" for i in range(40_000)))])
    assert len(params) == 2 and where.count("?") == 2


def test_a_store_from_before_the_readers_index_gets_it_filled_once(tmp_path: Path) -> None:
    """``doc_readers`` is derived from each row's readers: a store written before it (or before access
    lists, whose rows read as the tenant's) has it filled on open, and a caller's search finds its rows."""
    vecs = clustered(40)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=1000, tail_max=1000)
    index.replace_file("acme", "mine", docs_for("mine", vecs[:4], readers=["u:ann"]))
    index.replace_file("acme", "old", docs_for("old", vecs[4:8]))
    conn = sqlite3.connect(tmp_path / "i.db")
    conn.executescript(
        "DROP TRIGGER docs_readers_ai; DROP TRIGGER docs_readers_ad; DROP TRIGGER docs_readers_au;"
        " DROP TABLE doc_readers;"
    )
    conn.close()
    reopened = LocalSearchIndex(tmp_path / "i.db", ann_min=1000, tail_max=1000)
    hits = reopened.knn("acme", vecs[0].tolist(), ALL.read_as(("tenant", "u:ann")), 10)
    assert {h.file_id for h in hits} == {"mine", "old"} and len(hits) == 8
    assert {h.file_id for h in reopened.knn("acme", vecs[0].tolist(), ALL.read_as(("u:bob",)), 10)} == set()


def test_a_few_readable_rows_with_another_filter_still_get_every_match(tmp_path: Path) -> None:
    """The few rows a caller may read are first ranked by the graph's vectors and only the best checked
    against the rest of the scope: when a tag leaves none of those, every readable row is checked."""
    vecs = clustered(2000)
    index = LocalSearchIndex(tmp_path / "i.db", ann_min=100, tail_max=100, build_threads=1)
    files = [
        (
            "acme",
            f"f{i}",
            docs_for(
                f"f{i}", vecs[i : i + 4], readers=["u:ann"] if i < 200 else ["u:bob"], tags=["rare"] if i == 196 else []
            ),
        )
        for i in range(0, len(vecs), 4)
    ]
    with index.batch():
        index.replace_files(files)
    q = vecs[0]  # nearest to f0, far from f196
    scope = SearchFilters(tags=["rare"]).read_as(("u:ann",))
    assert {h.file_id for h in index.knn("acme", q.tolist(), scope, 10)} == {"f196"}
