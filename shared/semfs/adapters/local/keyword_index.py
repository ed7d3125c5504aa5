"""``TenantKeywords``: a local BM25 leg — one tantivy index (``KeywordIndex``) per tenant of one kind of
document, derived from the ``DocStore``.

Each tenant has its own index, so BM25's statistics (how many documents hold a word, the average
length) are that tenant's alone: with one index for everyone, a tenant's score for a word moved when
another tenant stored a document with it, and so told them apart (1.552 → 1.102 for a rare word).
Chunks and file cards are two indexes, so neither shifts the other's BM25 statistics: one short card
per file would nearly double the document count and halve the average length that chunks are
normalised by (SciFact keyword nDCG@10 0.675 with them in one index, 0.683 without cards). An empty
card is not indexed at all.

Written right after each SQLite commit and rebuilt from SQLite whenever the two disagree (a crash
between the commits): by a writer before it writes, for a reader in a background thread while its
searches read the last good commit. The store counts each tenant's writes, so one tenant's index is
rebuilt, never everyone's. The tenant and every filter go inside the tantivy query as non-scoring
clauses (block-max WAND keeps it ~1 ms at 100k chunks, where SQLite FTS5 scored every matching row).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Any

from semfs.domain.errors import IndexUnavailable
from semfs.domain.ranking import FIELD_BOOSTS, bm25
from semfs.domain.scope import AnyOf, Clause, Term
from semfs.domain.text import query_terms

from .doc_store import DocStore, tenant_generation_key

_WRITER_HEAP = 50_000_000
# the fields of ``_schema``: a folder of another version is rebuilt from SQLite (2: the readers of access lists)
SCHEMA_VERSION = 2
_LOCK_RETRIES = 120  # ~1 min: a batch in another process commits (and lets go) every few seconds
_BATCH_COMMIT_S = 3.0
# the scope's fields as tantivy fields (raw-tokenised; list-valued ones hold one value per entry)
_TV_FIELDS = {
    "tenant": "tenant",
    "reader": "reader",
    "latest": "latest",
    "tag": "tag",
    "source_type": "source_type",
    "contact": "contact",
    "thread": "thread",
    "mime": "mime",
    "created": "created",
    "file_id": "file_id",
}


def query_text(query: str) -> str | None:
    """The query's terms as plain lower-case words: tantivy query syntax in user input is inert."""
    words = [w for t in query_terms(query) for w in re.sub(r"[^\w]+", " ", t).split()]
    return " ".join(words[:64]) or None


def _epoch(d: date) -> int:
    return int(datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp())


def compile_tantivy(schema: Any, clauses: Sequence[Clause]) -> list[Any]:
    """The scope as tantivy queries, one per clause (the tenant first)."""
    import tantivy

    out: list[Any] = []
    for c in clauses:
        field = _TV_FIELDS[c.field]
        if isinstance(c, Term):
            out.append(tantivy.Query.term_query(schema, field, int(c.value) if isinstance(c.value, bool) else c.value))
        elif isinstance(c, AnyOf):
            out.append(tantivy.Query.term_set_query(schema, field, list(c.values)))
        else:
            out.append(
                tantivy.Query.range_query(
                    schema,
                    field,
                    tantivy.FieldType.Integer,
                    _epoch(c.first) if c.first else None,
                    _epoch(c.end) if c.end else None,
                    include_upper=c.end is None,
                )
            )
    return out


def _schema() -> Any:
    import tantivy

    sb = tantivy.SchemaBuilder()
    sb.add_integer_field("rid", stored=True, indexed=True, fast=True)
    for raw in ("key", "tenant", "file_id", "lineage", "source_type", "thread", "mime", "tag", "contact", "reader"):
        sb.add_text_field(raw, stored=False, tokenizer_name="raw")
    sb.add_integer_field("latest", indexed=True, fast=True)
    sb.add_integer_field("created", indexed=True, fast=True)
    for text in ("title", "text"):
        sb.add_text_field(text, stored=False, tokenizer_name="en_stem")
    sb.add_text_field("filename", stored=False)
    sb.add_text_field("tags", stored=False)
    return sb.build()


# how each searched field is tokenised (``_schema``): ``en_stem`` stems, ``default`` does not
_STEMMED = {"title": True, "text": True, "filename": False, "tags": False}


@cache
def _analyzer(stem: bool) -> Any:
    """tantivy's ``en_stem`` (``stem``) or ``default`` tokenizer, to read a stored field as the index did."""
    import tantivy

    builder = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(tantivy.Filter.remove_long(40))
    builder = builder.filter(tantivy.Filter.lowercase())
    if stem:
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    return builder.build()


def _field_text(row: sqlite3.Row, field: str) -> str:
    return " ".join(json.loads(row["tags"])) if field == "tags" else str(row[field] or "")


def file_key(tenant_id: str, file_id: str) -> str:
    return f"{tenant_id}\x1f{file_id}"


def _tv_doc(row: sqlite3.Row) -> Any:
    import tantivy

    tags = json.loads(row["tags"])
    return tantivy.Document(
        rid=row["rid"],
        key=file_key(row["tenant_id"], row["file_id"]),
        tenant=row["tenant_id"],
        file_id=row["file_id"],
        lineage=f"{row['tenant_id']}\x1f{row['lineage_id']}",
        source_type=row["source_type"],
        thread=row["thread_id"] or "",
        mime=row["mime_type"],
        tag=tags or [""],
        contact=json.loads(row["contact_ids"]) or [""],
        reader=json.loads(row["readers"]) or [""],
        latest=int(row["is_latest"]),
        created=int(datetime.fromisoformat(row["created_at"]).timestamp()),
        title=row["title"],
        text=row["text"],
        filename=row["filename"],
        tags=" ".join(tags),
    )


# which of the store's rows each index holds


def _holds(kind: str, row: sqlite3.Row) -> bool:
    return bool(row["kind"] == kind and (kind == "chunk" or row["text"]))


class KeywordIndex:
    """BM25 over one tenant's documents of one ``kind``; inside its collection's batch, commits (each
    ~20 ms of fsync) are deferred to every few seconds and the batch's end. A crash inside a batch is
    repaired from SQLite on the next open."""

    def __init__(self, path: Path, store: DocStore, kind: str, tenant_id: str, batching: Callable[[], bool]) -> None:
        self._path = path
        self._store = store
        self._kind = kind
        self._tenant = tenant_id
        self._generation_key = tenant_generation_key(tenant_id)
        self._meta_key = f"keyword_generation_{kind}:{tenant_id}"
        self._batching = batching  # whether the collection this index belongs to is in a batch
        self._tv: Any = None
        self._seen_generation = -1
        self._lock = threading.RLock()
        self._held: Any = None  # the tantivy writer while commits are deferred
        self._last_commit = time.monotonic()
        self._repair: threading.Thread | None = None  # the background rebuild, once started

    def open(self, *, repaired: bool = False) -> Any:
        """Open (or create) the tantivy index and rebuild it from SQLite when they disagree: before
        returning when ``repaired`` (a writer, whose own commit would otherwise mark the index current)
        or when the index holds nothing yet (new, or removed: there is no last commit to read), else in
        a background thread while searches read the last good commit (a reader never waits for a
        rebuild: 9 s at 100k chunks after a killed writer). A reader's open reloads the index when SQLite
        has moved on since; a writer's does not (issue 47.11), and the next reader's open does."""
        import tantivy

        with self._lock:
            if self._tv is None:
                self._path.mkdir(parents=True, exist_ok=True)
                self._tv = tantivy.Index(_schema(), path=str(self._path))
                self._tv.reload()
                if self._behind():
                    self._repair_soon()
            repair = self._repair
        if repair is not None and repair.is_alive() and (repaired or self._tv.searcher().num_docs == 0):
            repair.join()
        if repaired:  # a writer's open: it reads nothing, and the reload a reader needs cost ~1 ms a file
            return self._tv
        with self._lock:
            gen = self._store.generation()
            if gen != self._seen_generation:
                self._tv.reload()
                self._seen_generation = gen
            return self._tv

    def _writer(self) -> Any:
        """The single tantivy writer; another process may hold its lock for a moment."""
        for attempt in range(_LOCK_RETRIES):
            try:
                return self._tv.writer(heap_size=_WRITER_HEAP, num_threads=1)
            except ValueError:  # tantivy's error for a held writer lock
                time.sleep(min(0.05 * (attempt + 1), 0.5))
        raise IndexUnavailable("the keyword index is locked by another writer")

    def _behind(self) -> bool:
        """Whether the last commit misses SQLite's latest write (a process died between the two): O(1)."""
        if self._store.meta(self._meta_key) != self._store.meta(self._generation_key):
            return True
        return bool(self._tv.searcher().num_docs != self._store.kind_count(self._kind, self._tenant))

    def _repair_soon(self) -> None:
        """Rebuild in a thread of its own (called under ``self._lock``). Searches meanwhile read the last
        commit: every hit is looked up in SQLite and kept only in scope, so a stale index never shows a
        row that is gone or out of scope; rows the dead writer added are found by keyword once it ends
        (by k-NN at once: the vector leg ranks its tail exactly)."""
        self._repair = threading.Thread(
            target=self._rebuild, name=f"semfs-keywords-{self._kind}-{self._generation_key}", daemon=True
        )
        self._repair.start()

    def _rebuild(self) -> None:
        """Rebuild from SQLite — unless another process holds the writer: it is alive and will commit."""
        try:
            writer = self._tv.writer(heap_size=_WRITER_HEAP, num_threads=1)
        except ValueError:
            return
        generation = self._store.meta(self._generation_key)
        try:
            writer.delete_all_documents()
            for row in self._store.kind_rows(self._kind, self._tenant):
                writer.add_document(_tv_doc(row))
            writer.commit()
        finally:
            writer.wait_merging_threads()
        self._tv.reload()
        self._store.mark_keyword_committed(generation, self._meta_key)

    def join_repair(self, timeout: float | None = None) -> None:
        """Wait for a background rebuild this process started (tests, benches, a clean shutdown)."""
        repair = self._repair
        if repair is not None:
            repair.join(timeout)

    def _commit_held(self) -> None:
        writer, self._held = self._held, None
        if writer is None:
            return
        try:
            writer.commit()
        finally:
            writer.wait_merging_threads()  # releases the writer lock for other processes
        self._last_commit = time.monotonic()
        self._tv.reload()
        written = self._store.last_tenant_generation.get(self._tenant)
        if written is not None:  # the generation of this handle's last write to the tenant
            self._store.mark_keyword_committed(written, self._meta_key)

    def sync(self, delete_keys: Sequence[str], rows: Sequence[sqlite3.Row], *, all_docs: bool = False) -> None:
        """Apply a change SQLite has committed: drop these files' documents, add ``rows``."""
        self.join_repair()  # the rebuild holds the writer; the change may come after what it read
        with self._lock:
            if self._held is None:
                self._held = self._writer()
            if all_docs:
                self._held.delete_all_documents()
            for key in delete_keys:
                self._held.delete_documents_by_term("key", key)
            for row in rows:
                if _holds(self._kind, row):
                    self._held.add_document(_tv_doc(row))
            if not self._batching() or time.monotonic() - self._last_commit > _BATCH_COMMIT_S:
                self._commit_held()

    def erase(self) -> None:
        """Drop every document and the segment files that held them (a tenant's erasure: a deleted
        document stays in its segment until a merge, and a dropped segment's files until a collection)."""
        self.sync([], [], all_docs=True)
        with self._lock:
            self._commit_held()
            writer = self._writer()
            try:
                writer.garbage_collect_files()
            finally:
                writer.wait_merging_threads()

    def commit(self) -> None:
        """Commit what a batch deferred."""
        with self._lock:
            self._commit_held()

    def search(self, query: str, clauses: Sequence[Clause], k: int) -> list[tuple[int, float]]:
        """(rid, BM25 score) of the top ``k`` in scope (no clauses: of the tenant's index), best first."""
        import tantivy

        text = query_text(query)
        if text is None:
            return []
        index = self.open()
        if self._held is not None:  # this process's own deferred writes become visible first
            with self._lock:
                self._commit_held()
        try:
            parsed = index.parse_query(text, list(FIELD_BOOSTS), field_boosts=FIELD_BOOSTS)
        except ValueError:  # a query tantivy cannot parse finds nothing, it is not a 500
            return []
        scope = compile_tantivy(index.schema, clauses)
        query_all = (
            tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, parsed)]
                + [(tantivy.Occur.Must, tantivy.Query.const_score_query(q, 0.0)) for q in scope]
            )
            if scope
            else parsed  # a bare disjunction: block-max WAND prunes it
        )
        searcher = index.searcher()
        return [(searcher.doc(addr)["rid"][0], float(score)) for score, addr in searcher.search(query_all, k).hits]

    def scoped_scores(self, query: str, clauses: Sequence[Clause], rows: Sequence[sqlite3.Row]) -> dict[int, float]:
        """BM25 of ``rows`` (documents in scope) for ``query`` with statistics of the documents in scope
        only: how many of them there are and how many hold each term (counted by tantivy with the scope
        inside the query), each field's average length over ``rows``. The index's own scores weigh a
        word by its rarity among every document of the tenant, so for a caller who reads only some of
        them a score, and the order of two files, would move when a file they cannot see is added.
        Fields and boosts are the keyword leg's (``FIELD_BOOSTS``)."""
        import tantivy

        text = query_text(query)
        if text is None or not rows:
            return {}
        index = self.open()
        searcher = index.searcher()
        scope = compile_tantivy(index.schema, clauses)

        def count(extra: list[Any]) -> int:
            q = tantivy.Query.boolean_query([(tantivy.Occur.Must, x) for x in [*extra, *scope]])
            return int(searcher.search(q, 1, count=True).count)

        n = count([])
        scores = dict.fromkeys((int(r["rid"]) for r in rows), 0.0)
        for field, boost in FIELD_BOOSTS.items():
            analyzer = _analyzer(_STEMMED[field])
            terms = sorted(set(analyzer.analyze(text)))
            if not terms:
                continue
            df = {t: count([tantivy.Query.term_query(index.schema, field, t)]) for t in terms}
            tokens = {int(r["rid"]): analyzer.analyze(_field_text(r, field)) for r in rows}
            average = sum(len(t) for t in tokens.values()) / len(tokens)
            for rid, toks in tokens.items():
                tf = Counter(toks)
                scores[rid] += boost * sum(bm25(tf[t], df[t], n, len(toks), average) for t in terms)
        return scores


class TenantKeywords:
    """One ``KeywordIndex`` per tenant for one kind of document, each in a folder of its own under
    ``path`` (named by a digest of the tenant id: any id is a safe folder name), opened on first use."""

    def __init__(self, path: Path, store: DocStore, kind: str = "chunk") -> None:
        self._path = path
        self._store = store
        self._kind = kind
        self._indexes: dict[str, KeywordIndex] = {}
        self._lock = threading.Lock()
        self._batch_depth = 0
        self._current: KeywordIndex | None = None  # the index written last (the one holding a writer)
        legacy = path.with_suffix(".tantivy")  # one index for every tenant (derived data: rebuilt per tenant)
        if (legacy / "meta.json").exists():
            shutil.rmtree(legacy, ignore_errors=True)
        if path.is_dir():  # a tenant's index of an earlier schema: derived data, rebuilt from SQLite in a new folder
            for old in path.iterdir():
                if old.is_dir() and not old.name.startswith(f"v{SCHEMA_VERSION}-"):
                    shutil.rmtree(old, ignore_errors=True)

    def of(self, tenant_id: str) -> KeywordIndex:
        with self._lock:
            index = self._indexes.get(tenant_id)
            if index is None:
                digest = hashlib.sha256(tenant_id.encode("utf-8", "surrogatepass")).hexdigest()[:24]
                folder = self._path / f"v{SCHEMA_VERSION}-{digest}"
                index = KeywordIndex(folder, self._store, self._kind, tenant_id, lambda: self._batch_depth > 0)
                self._indexes[tenant_id] = index
            return index

    def open(self, tenants: Sequence[str]) -> None:
        """Open these tenants' indexes before SQLite changes, repaired first if they were behind."""
        for tenant in tenants:
            self.of(tenant).open(repaired=True)

    def join_repairs(self, timeout: float | None = None) -> None:
        """Wait for every background rebuild this process started."""
        with self._lock:
            indexes = list(self._indexes.values())
        for index in indexes:
            index.join_repair(timeout)

    def sync(
        self, tenants: Sequence[str], delete_keys: Sequence[str], rows: Sequence[sqlite3.Row], *, all_docs: bool = False
    ) -> None:
        """Apply a change SQLite has committed to each of ``tenants``' indexes. Inside a batch, one
        tenant's writer is held at a time: moving to another tenant commits the one before (a held
        writer keeps its memory arena)."""
        for tenant in tenants:
            mine = [r for r in rows if r["tenant_id"] == tenant]
            keys = [k for k in delete_keys if k.startswith(file_key(tenant, ""))]
            index = self.of(tenant)
            with self._lock:
                previous, self._current = self._current, index
            if previous is not None and previous is not index:
                previous.commit()
            index.sync(keys, mine, all_docs=all_docs)

    def erase(self, tenant_id: str) -> None:
        """Drop every document of the tenant and the files that held them (opened first by the caller)."""
        self.of(tenant_id).erase()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Defer every tenant index's commits to every few seconds and the end (see ``KeywordIndex.batch``)."""
        with self._lock:
            self._batch_depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._batch_depth -= 1
                done = self._batch_depth == 0
                indexes = list(self._indexes.values())
            if done:
                for index in indexes:
                    index.commit()
