"""``HttpReranker``: a ``/rerank`` endpoint in the shape Cohere defined and Jina, vLLM, Hugging Face
TEI (``--rerank`` routes) and LiteLLM serve: ``POST {base}/rerank`` with ``model``, ``query`` and
``documents``; the answer's ``results`` hold ``index`` and ``relevance_score`` per document.

Off unless ``SEMFS_RERANK_BASE_URL`` is set. Passages are sent as data; the scores only reorder
what the fusion found, so a failing endpoint costs the reordering, never the search.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Sequence

from semfs.config import Settings
from semfs.deadlines import time_left
from semfs.domain.errors import RerankUnavailable

MAX_DOCUMENT_CHARS = 2_000  # a passage, not a file: rerankers read ~512 tokens


class HttpReranker:
    def __init__(self, settings: Settings, api_key: Callable[[], str | None] | None = None) -> None:
        assert settings.rerank.base_url
        self._url = settings.rerank.base_url.rstrip("/") + "/rerank"
        self._model = settings.rerank.model
        self._timeout = settings.rerank.timeout_s
        self._key = api_key or (lambda: settings.rerank.api_key)
        self.top_n = settings.rerank.top_n

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        body = {
            "model": self._model,
            "query": query,
            "documents": [d[:MAX_DOCUMENT_CHARS] for d in documents],
            "top_n": len(documents),
            "return_documents": False,
        }
        key = self._key()
        headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})}
        # the URL is the configured endpoint, http(s) only (Settings refuses other schemes)
        request = urllib.request.Request(self._url, data=json.dumps(body).encode(), headers=headers, method="POST")  # noqa: S310
        try:  # (DeadlinePassed is a TimeoutError, an OSError: the fused order stands)
            with urllib.request.urlopen(request, timeout=time_left(self._timeout)) as response:  # noqa: S310
                results = json.loads(response.read())["results"]
            scores = [float("-inf")] * len(documents)
            for r in results:
                scores[int(r["index"])] = float(r["relevance_score"])
        except (OSError, ValueError, KeyError, TypeError, IndexError) as e:  # URLError and timeouts are OSErrors
            raise RerankUnavailable(f"rerank endpoint failed: {type(e).__name__}") from e
        return scores
