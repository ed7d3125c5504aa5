"""``HashEmbedder``: a deterministic, dependency-free embedder for tests (``SEMFS_EMBEDDER=hash``).

Feature hashing of lower-cased word unigrams and character trigrams into ``dim`` buckets, then L2
normalisation: texts that share words land near each other, so tests of the semantic leg mean
something, but it is not a language model and is never the default.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from semfs.domain.errors import EmbeddingUnavailable
from semfs.domain.text import words


class HashEmbedder:
    """Deterministic hashed bag-of-features vectors."""

    def __init__(self, dim: int = 384, model_id: str | None = None) -> None:
        self._dim = dim
        self._model = model_id or f"hash-{dim}"
        self.calls = 0
        self.fail = False  # tests flip this to exercise degraded search / retries

    @property
    def model(self) -> str:
        return self._model

    @property
    def dim(self) -> int:
        return self._dim

    def _vector(self, text: str) -> list[float]:
        v = np.zeros(self._dim, dtype=np.float32)
        for w in (w.lower() for w in words(text)):
            feats = [w] + [w[i : i + 3] for i in range(max(1, len(w) - 2))]
            for j, f in enumerate(feats):
                h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
                v[h % self._dim] += (1.0 if j == 0 else 0.3) * (1 if (h >> 32) & 1 else -1)
        n = float(np.linalg.norm(v))
        if n == 0:
            v[0] = 1.0
            n = 1.0
        return (v / n).tolist()  # type: ignore[no-any-return]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.fail:
            raise EmbeddingUnavailable("hash embedder set to fail")
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]
