"""Calibrated relevance (``domain/relevance.py``): evidence about the (query, file) pair alone, one
fitted model per embedding model, a floor only where a calibration says where it lies."""

from __future__ import annotations

import pytest

from semfs.domain.relevance import CALIBRATIONS, WEAK, WORDS_ONLY, Calibration, Evidence, coverage, judge

pytestmark = pytest.mark.unit

DEFAULT = "all-MiniLM-L6-v2-int8"


def test_coverage_counts_query_words_that_begin_a_word_of_the_texts() -> None:
    # "invoices" matches "invoice" as the snippets' stems do; "acme" the title; "zzqq" nothing
    assert coverage(["invoices", "acme", "zzqq"], ["Acme Corp supply agreement", "Pay each invoice in 45 days"]) == (
        pytest.approx(2 / 3)
    )
    assert coverage([], ["anything"]) == 0.0
    assert coverage(["tb"], ["tbsp of salt"]) == 1.0  # a short word as a prefix, as highlight() marks it


def test_the_default_model_has_a_calibration_and_relevance_rises_with_each_kind_of_evidence() -> None:
    assert DEFAULT in CALIBRATIONS
    weak = judge(Evidence(cosine=0.1, coverage=0.0), DEFAULT).relevance
    closer = judge(Evidence(cosine=0.6, coverage=0.0), DEFAULT).relevance
    worded = judge(Evidence(cosine=0.6, coverage=1.0), DEFAULT).relevance
    assert 0.0 < weak < closer < worded < 1.0
    assert weak < CALIBRATIONS[DEFAULT].floor  # an unrelated passage is below the floor
    assert worded >= WEAK  # a close passage with the query's words is no weak match


def test_without_a_vector_the_words_alone_decide_and_their_floor_applies() -> None:
    none = judge(Evidence(cosine=None, coverage=0.0), DEFAULT)
    all_words = judge(Evidence(cosine=None, coverage=1.0), DEFAULT)
    assert none.relevance < none.floor == WORDS_ONLY.floor
    assert all_words.relevance > WEAK


def test_the_multilingual_model_has_a_calibration_of_its_own() -> None:
    """multilingual-e5 had none: its relevance rested on the words alone, so a cross-language answer (no
    word shared) was as weak as nonsense. Its cosines crowd high (unrelated texts at 0.7-0.8), so the same
    cosine means far less than MiniLM's. It has no floor (one cost 0.018-0.044 nDCG@10 on the fixture
    questions): nonsense is marked weak, not left out."""
    e5 = "multilingual-e5-small-q4"
    assert e5 in CALIBRATIONS and CALIBRATIONS[e5].floor == 0.0
    unrelated = judge(Evidence(cosine=0.78, coverage=0.0), e5)
    answer = judge(Evidence(cosine=0.90, coverage=0.75), e5)
    across_languages = judge(Evidence(cosine=0.92, coverage=0.0), e5)
    assert unrelated.relevance < 0.01 and answer.relevance > WEAK
    assert across_languages.relevance > judge(Evidence(cosine=None, coverage=0.0), e5).relevance
    assert judge(Evidence(cosine=0.78, coverage=0.0), DEFAULT).relevance > unrelated.relevance


def test_a_model_without_a_calibration_weighs_words_and_leaves_nothing_out() -> None:
    # its cosines mean nothing known: relevance rests on the words, and no floor drops what its vectors found
    j = judge(Evidence(cosine=0.95, coverage=0.0), "text-embedding-3-small")
    assert j.floor == 0.0
    assert j.relevance == judge(Evidence(cosine=None, coverage=0.0), DEFAULT).relevance


def test_a_configured_calibration_is_used_for_its_model() -> None:
    extra = {"text-embedding-3-small": Calibration(intercept=-6.0, cosine=10.0, coverage=1.0, floor=0.05)}
    low = judge(Evidence(cosine=0.2, coverage=0.0), "text-embedding-3-small", extra)
    high = judge(Evidence(cosine=0.8, coverage=0.0), "text-embedding-3-small", extra)
    assert low.floor == 0.05 and low.relevance < 0.05 < high.relevance
