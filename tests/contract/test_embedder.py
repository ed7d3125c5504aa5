from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from semfs.adapters.local.e5_embedder import E5Embedder
from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.adapters.local.onnx_embedder import OnnxEmbedder
from semfs.ports import Embedder

pytestmark = pytest.mark.contract

EMBEDDERS: dict[str, Callable[[], Embedder]] = {"hash": HashEmbedder, "onnx": OnnxEmbedder, "e5": E5Embedder}


@pytest.fixture(scope="module", params=sorted(EMBEDDERS))
def embedder(request: pytest.FixtureRequest) -> Embedder:
    if request.param != "hash":
        request.applymarker(pytest.mark.model)
    return EMBEDDERS[request.param]()


def test_vectors_are_unit_length_with_the_declared_dimension(embedder: Embedder) -> None:
    vecs = np.asarray(embedder.embed_documents(["invoice due in thirty days", "", "x" * 5000]))
    assert vecs.shape == (3, embedder.dim)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert embedder.model


def test_deterministic_and_order_preserving(embedder: Embedder) -> None:
    texts = ["alpha beta", "a much longer text about payment terms and delivery schedules", "gamma"]
    a = np.asarray(embedder.embed_documents(texts))
    b = np.asarray(embedder.embed_documents(list(reversed(texts))))[::-1]
    assert np.allclose(a, b, atol=1e-5)
    if not isinstance(embedder, E5Embedder):  # e5 embeds queries with their own prefix, by design
        assert np.allclose(embedder.embed_query("gamma"), a[2], atol=1e-5)


def test_related_texts_are_closer_than_unrelated(embedder: Embedder) -> None:
    q, near, far = embedder.embed_documents(
        [
            "payment terms for invoices",
            "invoices must be paid within thirty days (payment terms)",
            "the bicycle has a carbon fork",
        ]
    )
    assert float(np.dot(q, near)) > float(np.dot(q, far))


@pytest.mark.model
def test_onnx_model_understands_paraphrase() -> None:
    e = OnnxEmbedder()
    q, para, other = e.embed_documents(
        [
            "When do I have to pay the bill?",
            "Invoices are payable within thirty days of receipt.",
            "Goods ship from the Rotterdam warehouse every Tuesday.",
        ]
    )
    assert float(np.dot(q, para)) > float(np.dot(q, other)) + 0.1


@pytest.mark.model
def test_the_local_model_does_not_spin_idle_threads_after_a_pass() -> None:
    """Spinning intra-op threads kept both cores busy after each query embedding and slowed the index
    search that follows it (bench: p95 of 2 ms work after an embedding went to 12-49 ms)."""
    model = OnnxEmbedder(threads=2)
    model.embed_query("load the session")
    session, _ = model._load()
    assert session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.model
def test_the_multilingual_model_matches_a_question_to_its_answer_across_languages() -> None:
    """What the second local model is for: a German or French question finds the passage that answers
    it, in its own language or in English, over one about something else (all-MiniLM-L6-v2 ranks the
    German cat above the English answer: 0.41 against 0.05)."""
    e = E5Embedder()
    passages = np.asarray(
        e.embed_documents(
            [
                "Invoices are payable within thirty days of receipt.",
                "Die Katze schläft den ganzen Nachmittag auf dem Sofa.",
                "Les factures sont payables dans les trente jours suivant leur réception.",
            ]
        )
    )
    for question in ("Wann muss die Rechnung bezahlt werden?", "Quand faut-il payer la facture ?"):
        sims = passages @ np.asarray(e.embed_query(question))
        assert min(sims[0], sims[2]) > sims[1] + 0.02, (question, sims)
