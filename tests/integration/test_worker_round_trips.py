"""Which files go through the bounded worker process (issue 47.11). A small file of plain text, Markdown or
source code is read, and a short document enriched, in the calling process: their parsers are pure Python and
linear, and the worker's round trip (pickling, pebble's pipes and threads) cost more CPU than the work itself,
about 6 ms a file beside the model in ``bench/ingest_throughput.py``. Everything else keeps the worker's
memory and time bounds: formats with native or XML parsers, larger files, longer documents."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from semfs import demo
from semfs.adapters.local.extractive_enricher import IN_PROCESS_CHARS, ExtractiveEnricher
from semfs.bootstrap import extract_limits
from semfs.config import Settings
from semfs.domain.models import Block, ExtractedDocument
from semfs.extractors.runner import IN_PROCESS_BYTES, SubprocessExtractor
from semfs.ports.enricher import EnrichInput

pytestmark = pytest.mark.integration


class Counted(SubprocessExtractor):
    """The real bounded worker, counting what reaches it."""

    def __init__(self) -> None:
        super().__init__(extract_limits(Settings().limits), timeout_s=60, memory_mb=2048)
        self.sent: list[str] = []

    def _get_pool(self) -> Any:
        self.sent.append("task")
        return super()._get_pool()


@pytest.fixture
def worker() -> Iterator[Counted]:
    w = Counted()
    yield w
    w.close()


def test_small_plain_text_is_read_here_and_everything_else_in_the_worker(worker: Counted) -> None:
    here = {
        "notes.txt": b"Parking permits are renewed every January.",
        "README.md": b"# Parking\n\nRenewed every January at the front desk.",
        "renew.py": b"def renew(permit):\n    return permit.year + 1\n",
    }
    for name, data in here.items():
        assert worker.extract(data, name).document.text.strip(), name
    assert worker.sent == []

    there = {
        "page.html": b"<html><body><p>Renewed every January.</p></body></html>",  # lxml: native code
        "q3.xlsx": demo._q3_workbook(),
        "big.txt": b"Renewed every January at the front desk.\n" * (IN_PROCESS_BYTES // 40 + 1),
    }
    for name, data in there.items():
        assert worker.extract(data, name).document.text.strip(), name
    assert len(worker.sent) == len(there)


def test_a_refused_file_gets_the_same_answer_on_either_path(worker: Counted) -> None:
    from semfs.domain.errors import SemfsError

    with pytest.raises(SemfsError) as refused:
        worker.extract(b"not a pdf at all", "scan.pdf")
    assert refused.value.outcome.name == "REJECTED_TYPE_MISMATCH"


def test_a_short_document_is_enriched_here_and_a_long_one_in_the_worker(worker: Counted) -> None:
    enricher = ExtractiveEnricher(worker, timeout_s=60)
    short = ExtractedDocument(blocks=[Block(text="Parking permits are renewed every January at the front desk.")])
    assert enricher.enrich(EnrichInput(document=short, filename="parking.txt")).title
    assert worker.sent == []
    long = ExtractedDocument(blocks=[Block(text="Parking permits are renewed every January. " * 2000)])
    assert sum(len(b.text) for b in long.blocks) > IN_PROCESS_CHARS
    assert enricher.enrich(EnrichInput(document=long, filename="parking.txt")).title
    assert worker.sent == ["task"]
