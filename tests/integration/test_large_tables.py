"""Large tables whole (issue 53.5): every row of a CSV or TSV up to the file-size limit is found by its words.

Before, a table was cut at the text budget (``SEMFS_MAX_TEXT_CHARS``) and its chunks at the embedding cap
(``SEMFS_MAX_CHUNKS``): the rows past either were in no index. Now a table's text budget is the file-size
limit, and the chunks past the embedding cap are indexed for keywords only. Here the two bounds are set small
so a table of 3,000 rows crosses both."""

from __future__ import annotations

from pathlib import Path

import pytest

from semfs.adapters.local.hash_embedder import HashEmbedder
from semfs.bootstrap import bounded_extractor, build_container
from semfs.domain.models import SearchRequest
from semfs.domain.outcomes import Outcome, Status
from semfs.pipeline.catalogue.trash import purge, trash
from semfs.pipeline.documents import KEYWORD_CHUNKS, derived_key, index_record
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.query.search import search
from tests.conftest import make_settings

pytestmark = pytest.mark.integration
T = "acme"
ROWS = 3_000


def table(rows: int = ROWS, delimiter: str = ",") -> bytes:
    lines = [delimiter.join(["sku", "item", "warehouse", "count"])]
    lines += [delimiter.join([f"SKU-{n:05d}", f"part{n}x", f"bay-{n % 40}", str(n % 97)]) for n in range(1, rows + 1)]
    return ("\n".join(lines) + "\n").encode()


def names(c: object, query: str, mode: str = "keyword") -> list[str]:
    return [r.filename for r in search(c, T, SearchRequest(query=query, mode=mode)).results]  # type: ignore[arg-type]


@pytest.fixture
def small_bounds(tmp_path: Path) -> object:
    settings = make_settings(tmp_path, max_text_chars=20_000, max_chunks=20)
    c = build_container(settings, embedder=HashEmbedder(), extractor=bounded_extractor(settings.limits))
    yield c
    c.close()


@pytest.mark.parametrize(("name", "delimiter"), [("stock.csv", ","), ("stock.tsv", "\t")])
def test_every_row_of_a_large_table_is_found_by_its_words(small_bounds: object, name: str, delimiter: str) -> None:
    c = small_bounds
    data = table(delimiter=delimiter)
    assert len(data) > 20_000 * 4  # four times the text budget
    record = ingest_bytes(c, T, data, name).record  # type: ignore[arg-type]
    assert record.status is Status.INDEXED and record.outcome is Outcome.OK_PARTIAL
    for n in (1, 1_500, ROWS):  # the first row, one in the middle, the last
        assert names(c, f"part{n}x") == [name], n
    assert record.chunk_count == 20 and record.keyword_chunks > 0
    assert "every chunk is found by its words" in (record.error or "")
    (hit,) = search(c, T, SearchRequest(query=f"part{ROWS}x", mode="keyword")).results  # type: ignore[arg-type]
    snippet = hit.snippets[0]
    assert snippet.location.row_start <= ROWS + 1 <= snippet.location.row_end  # type: ignore[operator]  # (row 1: the header)
    (doc,) = c.index.get_docs(T, [snippet.chunk_id]).values()  # type: ignore[attr-defined]
    assert doc.embedding is None and doc.text.startswith("sku | item | warehouse | count")  # the header comes along


def test_keyword_chunks_survive_a_reindex_and_go_with_a_purge(small_bounds: object) -> None:
    c = small_bounds
    record = ingest_bytes(c, T, table(), "stock.csv").record  # type: ignore[arg-type]
    index_record(c, c.repo.get(T, record.file_id))  # type: ignore[attr-defined]
    assert names(c, f"part{ROWS}x") == ["stock.csv"]
    key = derived_key(T, record.file_id, KEYWORD_CHUNKS)
    assert c.blobs.exists(key)  # type: ignore[attr-defined]
    trash(c, T, record.file_id)  # type: ignore[arg-type]
    assert names(c, f"part{ROWS}x") == []
    purge(c, T, [record.file_id])  # type: ignore[arg-type]
    assert not c.blobs.exists(key)  # type: ignore[attr-defined]


def test_other_text_keeps_its_budget(small_bounds: object) -> None:
    c = small_bounds
    prose = "\n\n".join(f"Paragraph {n} mentions marker{n}q and nothing else." for n in range(1, 3_001)).encode()
    record = ingest_bytes(c, T, prose, "long.txt").record  # type: ignore[arg-type]
    assert record.outcome is Outcome.OK_PARTIAL and "SEMFS_MAX_TEXT_CHARS" in (record.error or "")
    assert names(c, "marker1q") == ["long.txt"] and names(c, "marker3000q") == []


def workbook(rows: int = ROWS) -> bytes:
    import io

    import xlsxwriter

    out = io.BytesIO()
    book = xlsxwriter.Workbook(out, {"in_memory": True})
    sheet = book.add_worksheet("Stock")
    sheet.write_row(0, 0, ["sku", "item", "warehouse", "count"])
    for n in range(1, rows + 1):
        sheet.write_row(n, 0, [f"SKU-{n:05d}", f"part{n}x", f"bay-{n % 40}", n % 97])
    book.close()
    return out.getvalue()


def spreadsheet(rows: int = ROWS) -> bytes:
    """An OpenDocument sheet (the package as ``tests/unit/test_extractors._odf`` writes it)."""
    from tests.unit.test_extractors import _odf

    def row(*cells: object) -> str:
        return "<table:table-row>" + "".join(
            f"<table:table-cell><text:p>{c}</text:p></table:table-cell>" for c in cells
        )

    body = [row("sku", "item", "warehouse", "count") + "</table:table-row>"]
    body += [
        row(f"SKU-{n:05d}", f"part{n}x", f"bay-{n % 40}", n % 97) + "</table:table-row>" for n in range(1, rows + 1)
    ]
    return _odf(
        "ods",
        "<office:spreadsheet><table:table table:name='Stock'>" + "".join(body) + "</table:table></office:spreadsheet>",
    )


@pytest.mark.parametrize(("name", "build"), [("stock.xlsx", workbook), ("stock.ods", spreadsheet)])
def test_every_row_of_a_large_workbook_is_found_by_its_words(small_bounds: object, name: str, build: object) -> None:
    c = small_bounds
    record = ingest_bytes(c, T, build(), name).record  # type: ignore[arg-type,operator]
    assert record.status is Status.INDEXED and record.outcome is Outcome.OK_PARTIAL
    for n in (1, 1_500, ROWS):
        assert names(c, f"part{n}x") == [name], n
    assert record.chunk_count == 20 and record.keyword_chunks > 0


def test_a_workbook_read_past_its_cpu_budget_keeps_the_rows_read() -> None:
    """A workbook's rows stop at the worker's CPU budget for tables (half the extraction's wall clock), so a huge
    one ends OK_PARTIAL with what was read rather than FAILED_TIMEOUT with nothing; here a budget of no time."""
    from semfs.extractors.office import extract_xlsx

    doc = extract_xlsx(workbook(200), 10_000_000, cpu_s=0.0)
    assert doc.truncated and "CPU budget" in (doc.truncated_by or "")
    whole = extract_xlsx(workbook(200), 10_000_000, cpu_s=30.0)
    assert not whole.truncated and "part200x" in whole.text
