"""``VectorIndex``: the local k-NN leg — an HNSW graph per (model, tenant) and an exact tail.

Each tenant's vectors of the searchable model live in a usearch HNSW file (int8, cosine) beside
``index.db``, memory-mapped by searching processes, so a fresh ``semfs search`` opens a million
vectors without reading them. A file covers the rows up to its ``high_rid``; rows written after it
(the tail) are read incrementally from SQLite and ranked exactly, so a write never rebuilds
anything. When a tail grows past ``TAIL_MAX`` the writer extends the file (copy, add, atomic rename);
a search that finds a tail that long (a file missing, a writer that died mid-load or is loading now)
ranks it exactly and has a background thread build the file, so no search waits for a graph.
Tenants with fewer than ``ann_min`` vectors have no file: exact.

The graph only proposes candidates. SQLite decides: every candidate is checked against the search's
scope there (tenant, latest, filters; a deleted row is simply gone) and rescored exactly with its
float32 vector. Deletes and latest-flips therefore need no graph update; their rows are dropped from
the file when it is next extended. A scope the graph cannot fill after widening (a narrow filter)
is ranked exactly over the rows SQLite selects for it. Row ids are never reused, so a stale graph
entry can only name a row that is gone.

The staged-model switch stays atomic because files belong to one model: after a switch the new
model's vectors are searched exactly until its files are built.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from hashlib import sha256
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from semfs.domain.models import IndexHit
from semfs.domain.scope import AnyOf, Clause, Term

from .doc_store import DocStore, VectorRows

ANN_MIN = 20_000  # below this a tenant's exact scan costs about what a graph search does
TAIL_MAX = 5_000  # rows searched exactly after a file's high_rid before the file is extended (~0.3 ms)
# links per node. At 1M embedding-like vectors a graph with 16 could not reach recall@10 0.98 at any
# breadth the latency allows (0.964 at 512, 0.981 at 1536), one with 32 reaches 0.990 at 512
# (bench/graph_params.py, docs/benchmarks.md); it costs ~25 % more file and a slower build
CONNECTIVITY = 32
EXPANSION_ADD = 128
# the graph search's breadth grows with the graph (size / 2000, within these bounds)
EXPANSION_SEARCH = (128, 512)
_WIDEN = (2, 16, 64)  # candidates asked of the graph, per result wanted, on successive tries
# a caller who may read at most this many of a tenant's rows gets them ranked exactly (issue 50: 1 % of 100k
# chunks, read through the doc_readers index, ranks faster than the graph's widening finds k of them)
FEW_READABLE = 1_500
OVERSAMPLE = 3  # readable candidates wanted per result under an access filter, before the top k is taken
FEW_CACHED = 64  # callers whose few rows are kept (at most 1,500 x 384 float16 each: ~1.2 MB)
READABLE_COUNT_CAP = 20_000  # readable rows counted at most: a share above cap / rows is as good as any
_BUILD_ROWS = 50_000  # vectors read from SQLite per step of a build (bounds the builder's memory)
_BATCH_MAINTAIN_S = 60.0  # inside a batch (a bulk load) files are extended at most this often, and at its end

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vector_files (
  model TEXT NOT NULL, tenant_id TEXT NOT NULL, file TEXT NOT NULL, high_rid INTEGER NOT NULL,
  size INTEGER NOT NULL, PRIMARY KEY (model, tenant_id)
);
"""


@dataclass
class _Part:
    """What this process holds of one (model, tenant): the mapped graph and the exact tail."""

    file: str | None
    high_rid: int
    epoch: int
    graph: Any
    tail: VectorRows
    tail_after: int
    dim: int | None = None

    def extend(self, rows: VectorRows) -> None:
        if len(rows):
            self.dim = rows.matrix.shape[1]
            self.tail = _concat(self.tail, rows)
            self.tail_after = int(rows.rids[-1])


def _concat(a: VectorRows, b: VectorRows) -> VectorRows:
    if not len(a):
        return b
    return VectorRows(
        rids=np.concatenate([a.rids, b.rids]),
        chunk_ids=a.chunk_ids + b.chunk_ids,
        file_ids=a.file_ids + b.file_ids,
        matrix=np.concatenate([a.matrix, b.matrix]),
    )


def _empty() -> VectorRows:
    return VectorRows(np.zeros(0, dtype=np.int64), [], [], np.zeros((0, 0), dtype=np.float32))


def _breadth(size: int) -> int:
    low, high = EXPANSION_SEARCH
    return min(high, max(low, size // 2000))


def _top(scores: npt.NDArray[np.float32], k: int) -> npt.NDArray[np.intp]:
    top = min(k, len(scores))
    part = np.argpartition(-scores, top - 1)[:top]
    order: npt.NDArray[np.intp] = part[np.argsort(-scores[part], kind="stable")]
    return order


class VectorIndex:
    """Approximate candidates from per-tenant HNSW files, exact answers from SQLite."""

    def __init__(
        self,
        directory: Path,
        store: DocStore,
        *,
        ann_min: int = ANN_MIN,
        tail_max: int = TAIL_MAX,
        build_threads: int | None = None,
    ) -> None:
        self._dir = directory
        self._store = store
        self._ann_min = ann_min
        self._tail_max = tail_max
        # threads that add rows to a graph (every core by default). Only one thread builds the same graph
        # every time: threads interleave as the scheduler lets them, and on a busy machine the graph they
        # build is worse (recall@10 0.976-0.998 over six builds of one 4,000-vector set beside four
        # CPU-bound processes; 0.998 each time in one thread)
        self._build_threads = build_threads or os.cpu_count() or 1
        self._parts: dict[tuple[str, str], _Part] = {}
        self._lock = threading.RLock()
        self._batch_depth = 0
        self._touched: set[str] = set()
        self._writable: dict[tuple[str, str], tuple[str, Any]] = {}  # graphs written in this batch, in memory
        self._last_maintain = 0.0
        self._building: set[tuple[str, str]] = set()  # (model, tenant) a background thread is building
        self._builders: list[threading.Thread] = []
        self._schema_ready = False
        # (tenant, tokens) → (store generation, readable rows): the share an access filter keeps
        self._readable_counts: dict[tuple[str, tuple[str, ...]], tuple[int, int]] = {}
        # (model, tenant, tokens) → (store generation, the few rows they read and their vectors, or None)
        self._few_rows: dict[tuple[str, str, tuple[str, ...]], tuple[int, Any]] = {}

    def _conn(self) -> Any:
        conn = self._store.conn()
        if not self._schema_ready:
            conn.executescript(_SCHEMA)
            self._schema_ready = True
        return conn

    def _manifest(self, model: str, tenant_id: str) -> tuple[str | None, int, int]:
        """The tenant's current file, the last rid it covers, and how many vectors it holds."""
        row = (
            self._conn()
            .execute(
                "SELECT file, high_rid, size FROM vector_files WHERE model = ? AND tenant_id = ?", (model, tenant_id)
            )
            .fetchone()
        )
        return (row[0], int(row[1]), int(row[2])) if row else (None, 0, 0)

    def _epoch(self) -> int:
        """Bumped by every write that changes vectors in place (a model switch, a clear)."""
        return self._store.meta("vector_epoch")

    # -- reads ------------------------------------------------------------------------------------
    def _part(self, model: str, tenant_id: str) -> _Part:
        """This process's view of the tenant's vectors, brought up to date: the current file mapped,
        the rows after it appended to the tail."""
        from usearch.index import Index

        file, high_rid, _ = self._manifest(model, tenant_id)
        epoch = self._epoch()
        with self._lock:
            part = self._parts.get((model, tenant_id))
            if part is None or (part.file, part.high_rid, part.epoch) != (file, high_rid, epoch):
                graph = None
                if file is not None:
                    with suppress(OSError, RuntimeError, ValueError):
                        graph = Index.restore(str(self._dir / file), view=True)  # None when missing
                # a file gone or unreadable: SQLite has every row, and the tail starts at the first
                start = high_rid if graph is not None else 0
                part = _Part(file, high_rid, epoch, graph, tail=_empty(), tail_after=start)
                self._parts[(model, tenant_id)] = part
            part.extend(self._store.vectors([Term("tenant", tenant_id)], after_rid=part.tail_after, dim=part.dim))
            return part

    def search(
        self, model: str, tenant_id: str, clauses: Sequence[Clause], vector: Sequence[float], k: int
    ) -> list[IndexHit]:
        q = np.asarray(vector, dtype=np.float32)
        part = self._part(model, tenant_id)
        in_graph = part.graph.size if part.graph is not None else 0
        if len(part.tail) >= self._tail_max and len(part.tail) + in_graph >= self._ann_min:
            # missing or far behind (a writer died mid-load, or is loading now): this search ranks the
            # tail exactly and never waits for the graph; a background thread extends it (issue 33)
            self._maintain_soon(model, tenant_id)
        if part.dim is not None and part.dim != q.shape[0]:
            return []
        graph = part.graph
        if graph is not None and graph.ndim != q.shape[0]:
            return []
        readers = next((c for c in clauses if isinstance(c, AnyOf) and c.field == "reader"), None)
        wants = [k * widen for widen in _WIDEN]
        if readers is not None:
            few = self._few(model, part, tenant_id, readers.values)
            if few is not None:  # a caller who may read a few rows: those rows, ranked exactly
                return self._rank_few(few, clauses, q, k)
            wants = self._filtered_wants(part, tenant_id, readers.values, k)
        for want in wants:
            hits = self._round(part, tenant_id, clauses, readers, q, want)
            exhausted = want >= len(part.tail) and (graph is None or want >= graph.size)
            if len(hits) >= k or exhausted:
                return hits[:k]
        # a narrow scope the graph could not fill: rank exactly what SQLite selects for it
        return self._exact(self._store.vectors(clauses, dim=q.shape[0]), q, k)

    def _filtered_wants(self, part: _Part, tenant_id: str, tokens: tuple[str, ...], k: int) -> list[int]:
        """How many candidates to ask the graph for under an access filter: as many as hold ``OVERSAMPLE``
        readable ones per result for the share of the rows the caller reads (so that their top k is the
        filtered search's top k), then four and sixteen times that."""
        rows = len(part.tail) + (part.graph.size if part.graph is not None else 0)
        share = self._readable(tenant_id, tokens, rows) / max(1, rows)
        first = max(2 * k, int(OVERSAMPLE * k / max(share, 1e-6)))
        return [first, 4 * first, 16 * first]

    def _round(
        self,
        part: _Part,
        tenant_id: str,
        clauses: Sequence[Clause],
        readers: AnyOf | None,
        q: npt.NDArray[np.float32],
        want: int,
    ) -> list[IndexHit]:
        """The in-scope hits among the tail's and the graph's best ``want``, rescored exactly, best first."""
        scored: dict[int, float] = {}
        if len(part.tail):  # exact already: SQLite only checks the scope (no vector read)
            top = _top(part.tail.matrix @ q, want)
            scored = dict(zip(part.tail.rids[top].tolist(), (part.tail.matrix[top] @ q).tolist(), strict=True))
        in_scope = self._store.scoped_rids(list(scored), clauses)
        found = [(rid, score) for rid, score in scored.items() if rid in in_scope]
        hits = [IndexHit(chunk_id=in_scope[r][0], file_id=in_scope[r][1], score=s) for r, s in found]
        graph = part.graph
        if graph is not None and graph.size:
            graph.expansion_search = _breadth(graph.size)
            keys = graph.search(q, min(want, graph.size), threads=1).keys.astype(np.int64).tolist()
            if readers is not None:  # the readable ones first, through the readers index (no row read)
                keys = self._store.readable_of(tenant_id, readers.values, keys)
            hits += self._exact(self._store.vectors_of(keys, clauses, dim=q.shape[0]), q, want)
        return sorted(hits, key=lambda h: -h.score)

    def _readable(self, tenant_id: str, tokens: tuple[str, ...], rows: int) -> int:
        """How many rows ``tokens`` read (counted up to ``READABLE_COUNT_CAP``), remembered until the store's
        next write: a search pays for the count once per write, not once per query."""
        generation = self._store.generation()
        key = (tenant_id, tokens)
        with self._lock:
            known = self._readable_counts.get(key)
        if known is not None and known[0] == generation:
            return known[1]
        counted = self._store.reader_count(tenant_id, tokens, max(FEW_READABLE + 1, min(rows, READABLE_COUNT_CAP)))
        with self._lock:
            if len(self._readable_counts) > 1024:
                self._readable_counts.clear()
            self._readable_counts[key] = (generation, counted)
        return counted

    def _few(
        self, model: str, part: _Part, tenant_id: str, tokens: tuple[str, ...]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float16]] | None:
        """The rows ``tokens`` read, when they are at most ``FEW_READABLE``, with the vectors the graph and the
        tail hold for them (float16: for ranking, not scoring); ``None`` when they are more. Remembered until
        the store's next write, so a caller's searches gather them once."""
        generation = self._store.generation()
        key = (model, tenant_id, tokens)
        with self._lock:
            known = self._few_rows.get(key)
        if known is not None and known[0] == generation:
            kept: tuple[npt.NDArray[np.int64], npt.NDArray[np.float16]] | None = known[1]
            return kept
        rids = self._store.reader_rows(tenant_id, tokens, FEW_READABLE)
        gathered = None if rids is None else self._gather(part, np.asarray(rids, dtype=np.int64))
        with self._lock:
            if len(self._few_rows) >= FEW_CACHED:
                self._few_rows.pop(next(iter(self._few_rows)))
            self._few_rows[key] = (generation, gathered)
        return gathered

    @staticmethod
    def _gather(part: _Part, rids: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float16]]:
        """``rids``' vectors from the tail and the graph (no SQLite read); a row in neither is left out."""
        mine = np.isin(part.tail.rids, rids)
        found, rows = [part.tail.rids[mine]], [part.tail.matrix[mine].astype(np.float16)]
        graph = part.graph
        if graph is not None and graph.size:
            keys = rids[~np.isin(rids, part.tail.rids)] if len(part.tail) else rids
            keys = keys[np.asarray(graph.contains(keys.astype(np.uint64)), dtype=bool)] if len(keys) else keys
            if len(keys):
                held = graph.get(keys.astype(np.uint64), dtype=np.float32)  # one vector per key, all present
                found.append(keys)
                rows.append(np.concatenate(held).reshape(len(keys), -1).astype(np.float16))
        if not any(len(r) for r in found):
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float16)
        return np.concatenate(found), np.concatenate([r for r in rows if len(r)])

    def _rank_few(
        self,
        few: tuple[npt.NDArray[np.int64], npt.NDArray[np.float16]],
        clauses: Sequence[Clause],
        q: npt.NDArray[np.float32],
        k: int,
    ) -> list[IndexHit]:
        """The top ``k`` in scope of a few rows the caller may read: ranked by the vectors ``_few`` gathered,
        the best ``OVERSAMPLE * k`` then checked against the whole scope and rescored exactly; every one of
        them read from SQLite when too few of those are in scope (a narrow filter besides the readers)."""
        rids, matrix = few
        if not len(rids):
            return []
        best = rids[_top((matrix @ q.astype(np.float16)).astype(np.float32), OVERSAMPLE * k)]
        hits = self._exact(self._store.vectors_of(best.tolist(), clauses, dim=q.shape[0]), q, k)
        if len(hits) >= k or len(best) == len(rids):
            return hits
        return self._exact(self._store.vectors_of(rids.tolist(), clauses, dim=q.shape[0]), q, k)

    @staticmethod
    def _exact(rows: VectorRows, q: npt.NDArray[np.float32], k: int) -> list[IndexHit]:
        if not len(rows) or rows.matrix.shape[1] != q.shape[0]:
            return []
        scores = rows.matrix @ q
        return [
            IndexHit(chunk_id=rows.chunk_ids[i], file_id=rows.file_ids[i], score=float(scores[i]))
            for i in _top(scores, k)
        ]

    def search_staged(self, model: str, clauses: Sequence[Clause], vector: Sequence[float], k: int) -> list[IndexHit]:
        """Vectors staged for a model not yet searchable: a migration's transient set, ranked exactly."""
        q = np.asarray(vector, dtype=np.float32)
        return self._exact(self._store.staged_vectors(clauses, model), q, k)

    # -- maintenance ------------------------------------------------------------------------------
    def after_write(self, tenants: Sequence[str] | None = None, *, settle: bool = False) -> None:
        """Called after SQLite commits: extend the files of tenants whose tails grew past ``TAIL_MAX``
        (inside a batch at most every minute), in a background thread: a file's Index stage never waits
        for a graph. Extending can mean rebuilding a tenant's whole graph (a quarter of it deleted), minutes
        at a few hundred thousand vectors; done in the writer, every file whose write passed the limit paid it
        in its Index stage (issue 47.7 reported a worker held there 573 s; bench/write_beside_graph.py).
        ``settle`` (a batch's end, after every file of it) waits for those builds and folds every tail of a
        tenant large enough for a graph into it, before the process exits."""
        with self._lock:  # writer threads (`semfs ingest`, the serve workers) share this set
            self._touched.update(tenants if tenants is not None else self._store.vector_tenants())
            if not settle and self._batch_depth and time.monotonic() - self._last_maintain < _BATCH_MAINTAIN_S:
                return
            self._last_maintain = time.monotonic()
            touched, self._touched = self._touched, set()
        model = self._store.active_model()
        if model is None:
            return
        for tenant_id in sorted(touched):
            _, high_rid, size = self._manifest(model, tenant_id)
            tail = self._store.count([Term("tenant", tenant_id)], after_rid=high_rid)
            if tail + size < self._ann_min or not tail:
                continue
            if settle:
                self._maintain(model, tenant_id)
            elif tail >= self._tail_max:
                self._maintain_soon(model, tenant_id)

    @contextmanager
    def batch(self) -> Iterator[None]:
        with self._lock:
            self._batch_depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._batch_depth -= 1
            if not self._batch_depth:
                self.join_builds()  # (a build running now holds the tenant's lock: settling would skip it)
                self.after_write([], settle=True)
                self._writable.clear()  # outside a bulk load, a process holds only the mapped files

    def _maintain_soon(self, model: str, tenant_id: str) -> None:
        """Extend the tenant's file in a background thread, one per (model, tenant) in this process.
        A process that exits first leaves its half-built copy behind; the next builder removes it."""
        with self._lock:
            if (model, tenant_id) in self._building:
                return
            self._building.add((model, tenant_id))

        def build() -> None:
            try:
                self._maintain(model, tenant_id)
            finally:
                with self._lock:
                    self._building.discard((model, tenant_id))

        thread = threading.Thread(target=build, name=f"semfs-graph-{tenant_id}", daemon=True)
        with self._lock:  # a long-running server keeps only the builds still running
            self._builders = [t for t in self._builders if t.is_alive()] + [thread]
        thread.start()

    def join_builds(self, timeout: float | None = None) -> None:
        """Wait for this process's background graph builds (tests, and a clean shutdown)."""
        while self._builders:
            self._builders.pop().join(timeout)

    def _maintain(self, model: str, tenant_id: str) -> None:
        """Extend (or build) the tenant's file: one process at a time, others keep the exact tail."""
        from usearch.index import Index

        self._dir.mkdir(parents=True, exist_ok=True)
        key = sha256(f"{model}\x1f{tenant_id}".encode()).hexdigest()[:24]
        with (self._dir / f"{key}.lock").open("w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return
            for stale in self._dir.glob(f".{key}-*.tmp"):  # a builder that died before its rename
                stale.unlink(missing_ok=True)
            file, high_rid, _ = self._manifest(model, tenant_id)
            scope = [Term("tenant", tenant_id)]
            alive = self._store.count(scope, after_rid=0) - self._store.count(scope, after_rid=high_rid)
            graph = None
            mine = self._writable.pop((model, tenant_id), None)
            if mine is not None and mine[0] == file:
                graph = mine[1]  # the copy this process wrote last: no re-read
            elif file is not None:
                with suppress(OSError, RuntimeError, ValueError):
                    graph = Index.restore(str(self._dir / file))
            if graph is not None and graph.size > 1.25 * alive + 1000:
                graph = None  # a quarter of it deleted or replaced: rebuild rather than carry the dead
            if graph is None:
                high_rid = 0
            graph, new_high = self._add_rows(graph, scope, high_rid)
            self._publish(model, tenant_id, key, file, graph, new_high)

    def _add_rows(self, graph: Any, scope: Sequence[Clause], after_rid: int) -> tuple[Any, int]:
        """``graph`` (or a new one) with the rows gone since ``after_rid`` removed and those after added."""
        from usearch.index import Index

        if graph is not None:  # rows gone since the file was written leave it now
            live = self._store.live_rids(scope, up_to=after_rid)
            dead = np.setdiff1d(np.asarray(graph.keys, dtype=np.int64), live)
            if len(dead):
                graph.remove(dead.astype(np.uint64))
        high = after_rid
        while True:
            rows = self._store.vectors(scope, after_rid=high, limit=_BUILD_ROWS)
            if not len(rows):
                break
            if graph is None:
                graph = Index(
                    ndim=rows.matrix.shape[1],
                    metric="cos",
                    dtype="i8",
                    connectivity=CONNECTIVITY,
                    expansion_add=EXPANSION_ADD,
                    expansion_search=EXPANSION_SEARCH[0],
                )
            if rows.matrix.shape[1] == graph.ndim:
                graph.add(rows.rids.astype(np.uint64), rows.matrix, threads=self._build_threads)
            high = int(rows.rids[-1])
        return graph, high

    def _publish(self, model: str, tenant_id: str, key: str, old: str | None, graph: Any, high_rid: int) -> None:
        """Write ``graph`` under a new name, then point the manifest at it, then drop the old file."""
        name = None
        size = graph.size if graph is not None else 0
        if size:
            name = f"{key}-{uuid.uuid4().hex[:8]}.usearch"
            tmp = self._dir / f".{name}.tmp"
            graph.save(str(tmp))
            tmp.replace(self._dir / name)
        conn = self._conn()
        if name is None:
            conn.execute("DELETE FROM vector_files WHERE model = ? AND tenant_id = ?", (model, tenant_id))
        else:
            conn.execute(
                "INSERT OR REPLACE INTO vector_files VALUES (?, ?, ?, ?, ?)", (model, tenant_id, name, high_rid, size)
            )
        if name is not None and self._batch_depth:  # a bulk load extends it again soon: keep it in memory
            self._writable[(model, tenant_id)] = (name, graph)
        if old is not None and old != name:
            with suppress(FileNotFoundError):
                (self._dir / old).unlink()  # processes that mapped it keep their mapping until they look again

    def drop_tenant(self, tenant_id: str) -> None:
        """Forget the tenant's graph files of every model (its documents are gone from SQLite: a graph
        keeps the vectors of removed rows until it is rebuilt, so an erasure removes the files)."""
        self.join_builds()  # a build that read the tenant's rows before they went must not publish after
        conn = self._conn()
        files = [r[0] for r in conn.execute("SELECT file FROM vector_files WHERE tenant_id = ?", (tenant_id,))]
        conn.execute("DELETE FROM vector_files WHERE tenant_id = ?", (tenant_id,))
        with self._lock:
            for key in [k for k in self._parts if k[1] == tenant_id]:
                del self._parts[key]
            for key in [k for k in self._writable if k[1] == tenant_id]:
                del self._writable[key]
        for f in files:
            with suppress(FileNotFoundError):
                (self._dir / f).unlink()

    def drop_all(self) -> None:
        """Forget every file: the store was cleared, or its vectors replaced by another model's
        (the write that did so bumped the vector epoch, so other processes look again too)."""
        conn = self._conn()
        files = [r[0] for r in conn.execute("SELECT file FROM vector_files")]
        conn.execute("DELETE FROM vector_files")
        for f in files:
            with suppress(FileNotFoundError):
                (self._dir / f).unlink()
        with self._lock:
            self._parts.clear()
            self._writable.clear()
