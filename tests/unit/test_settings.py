"""Settings come in groups by concern; the names people set stay the flat ``SEMFS_*`` ones."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from semfs.config import _GROUPS, FLAT_NAMES, Settings, SettingsError

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]


def test_each_flat_name_is_its_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMFS_OCR_DPI", "150")
    monkeypatch.setenv("SEMFS_EMBED_THREADS", "3")
    monkeypatch.setenv("SEMFS_REENRICH_PER_SWEEP", "7")
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    s = Settings(max_file_mb=5, llm_base_url="http://llm", llm_model="m")
    assert (s.ocr.dpi, s.embedding.threads, s.llm.reenrich_per_sweep, s.aws.region) == (150, 3, 7, "eu-west-1")
    assert (s.limits.max_file_mb, s.llm.base_url) == (5, "http://llm")


def test_every_setting_has_one_flat_name_and_no_two_groups_share_one() -> None:
    fields = sum(len(model.model_fields) for model in _GROUPS.values())
    assert len(FLAT_NAMES) == fields  # no flat name maps to two fields
    top = set(Settings.model_fields) - set(_GROUPS)
    assert not top & set(FLAT_NAMES)


def test_the_template_sets_only_settings_that_exist() -> None:
    """A SEMFS_* variable that names no setting would be ignored without a word."""
    template = (ROOT / "template.yaml").read_text()
    named = {m.lower() for m in re.findall(r"\bSEMFS_([A-Z0-9_]+)\s*:", template)}
    assert named and named <= set(FLAT_NAMES) | set(Settings.model_fields)


def test_a_copy_takes_flat_names_and_refuses_unknown_ones() -> None:
    s = Settings().model_copy(update={"ocr_min_confidence": 0.99, "data_dir": Path("/tmp/x")})
    assert (s.ocr.min_confidence, s.data_dir) == (0.99, Path("/tmp/x"))
    assert s.replace(chunk_tokens=100).chunking.tokens == 100
    with pytest.raises(TypeError, match="no setting 'ocr_min_confidance'"):
        Settings().model_copy(update={"ocr_min_confidance": 0.5})  # a typo is never set silently


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"ocr_dpi": 10}, "SEMFS_OCR_DPI: Input should be greater than or equal to 72"),
        ({"chunk_overlap_tokens": 500}, "SEMFS_CHUNK_OVERLAP_TOKENS must be smaller than SEMFS_CHUNK_TOKENS"),
        ({"llm_base_url": "http://llm"}, "SEMFS_LLM_MODEL is required"),
    ],
)
def test_a_bad_setting_is_named_by_its_environment_variable(values: dict[str, object], message: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(message)):
        Settings(**values)
