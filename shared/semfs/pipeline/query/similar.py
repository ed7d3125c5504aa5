"""More like this: the files nearest a file by meaning, from the vectors semfs stored for it (no model
call, so it answers with the embedder off or refused). A file's card (title, summary, tags) is its
meaning in one vector; the latest version of each other file is ranked by the k-NN leg against it, and
the file's own lineage (its other versions) is left out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from semfs.domain.errors import InvalidRequest, NotFound
from semfs.domain.features import require
from semfs.domain.models import SearchFilters
from semfs.domain.outcomes import Status
from semfs.domain.results import SimilarFile
from semfs.pipeline.documents import load_chunks

if TYPE_CHECKING:
    from semfs.ports import Container

MAX_SIMILAR = 50


def similar(
    c: Container, tenant_id: str, file_id: str, limit: int = 10, readers: tuple[str, ...] | None = None
) -> list[SimilarFile]:
    """Up to ``limit`` other files of the tenant, nearest first. ``NotFound`` for a file the tenant does
    not have; only files shared with ``readers`` (the caller's tokens; ``None``: every file), filtered inside
    the k-NN search; ``InvalidRequest`` for one not indexed (it has no vectors yet); ``Disabled`` while semantic
    search is switched off."""
    require(c.settings, "semantic")
    record = c.repo.get(tenant_id, file_id)
    if record.status is not Status.INDEXED or record.chunks_key is None:
        raise InvalidRequest("only an indexed file has files like it (this one is not indexed)")
    chunks, vectors = load_chunks(c, record)
    if not len(vectors):
        return []
    probe = vectors[len(chunks)] if len(vectors) > len(chunks) else vectors.mean(axis=0)
    own = {v.file_id for v in c.repo.lineage(tenant_id, record.lineage_id)} | {file_id}
    limit = max(1, min(limit, MAX_SIMILAR))
    hits = c.index.knn(
        tenant_id, probe.tolist(), SearchFilters().read_as(readers), k=4 * limit + 10, model=record.embedding_model
    )
    best: dict[str, float] = {}
    for hit in hits:  # best first: a file's first hit is its best
        if hit.file_id not in own and hit.file_id not in best:
            best[hit.file_id] = hit.score
    out: list[SimilarFile] = []
    for other, score in best.items():
        try:
            found = c.repo.get(tenant_id, other)
        except NotFound:  # (the index is ahead of a delete)
            continue
        if found.deleted_at is None:
            out.append(
                SimilarFile(
                    file_id=found.file_id, filename=found.filename, title=found.title, score=round(score, 4),
                    came_from=found.came_from,
                )
            )  # fmt: skip
        if len(out) >= limit:
            break
    return out
