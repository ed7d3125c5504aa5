"""A reader's keyword leg (issue 50): ranked by BM25 over the files the reader can see, not the tenant's.

``LocalSearchIndex.keyword`` with ``filters.readers`` takes the in-scope matches and ranks them again with
statistics counted in scope (``KeywordIndex.scoped_scores``), so no score or order moves when a file the
reader cannot see is added. This prints what that costs and how far the ranking moves from the index's
own when the reader can see every file (where the two should agree but for the average field length and
the pool): overlap of the top-10 files and same top file, over queries written for Debian's
``/usr/share/doc`` (READMEs, Markdown files and Debian changelogs, cut in 1,500-character chunks). Nothing
was fitted to this set: the pool size (200) was chosen on it for speed, the agreement read after.

    .venv/bin/python bench/reader_keywords.py [--files 1500] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from _common import summary

from semfs.adapters.local.search_index import LocalSearchIndex
from semfs.domain.models import IndexDoc, SearchFilters

QUERIES = [
    "security fix buffer overflow", "new upstream release", "configuration file location",
    "python module documentation", "license copyright notice", "build dependencies updated",
    "memory leak crash", "unicode encoding support", "command line options", "install instructions",
    "systemd service unit", "translation update german", "ssl certificate verification", "regular expression",
    "compression gzip", "network socket timeout", "manual page typo", "library soname bump",
    "keyboard layout", "timezone data",
]  # fmt: skip
CHUNK = 1500


def corpus(limit: int) -> list[IndexDoc]:
    root = Path("/usr/share/doc")
    paths = [*root.glob("*/README*"), *root.glob("*/*.md"), *root.glob("*/changelog.Debian.gz")]
    docs: list[IndexDoc] = []
    for i, path in enumerate(sorted(paths)[:limit]):
        try:
            raw = path.read_bytes()
            raw = gzip.decompress(raw) if path.suffix == ".gz" else raw
        except (OSError, EOFError, gzip.BadGzipFile):
            continue
        text = raw.decode("utf-8", "replace")[:20_000]
        for j in range(0, len(text), CHUNK):
            docs.append(
                IndexDoc(
                    chunk_id=f"c{i}_{j}", file_id=f"f{i}", lineage_id=f"f{i}", tenant_id="t", version=1,
                    is_latest=True, source_type="upload", mime_type="text/plain",
                    filename=f"{path.parent.name}/{path.name}", title=path.parent.name,
                    text=text[j : j + CHUNK], created_at=datetime.now(UTC),
                )
            )  # fmt: skip
    return docs


def top_files(hits: list, n: int = 10) -> list[str]:  # type: ignore[type-arg]
    return list(dict.fromkeys(h.file_id for h in hits))[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1500)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    index = LocalSearchIndex(Path(tempfile.mkdtemp()) / "index.sqlite")
    docs = corpus(args.files)
    by_file: dict[str, list[IndexDoc]] = {}
    for d in docs:
        by_file.setdefault(d.file_id, []).append(d)
    with index.batch():
        index.replace_files([("t", f, ds) for f, ds in by_file.items()])
    everyone, reader = SearchFilters(), SearchFilters().read_as(("tenant",))
    overlap, same_top = [], 0
    for q in QUERIES:
        a, b = top_files(index.keyword("t", q, everyone, 50)), top_files(index.keyword("t", q, reader, 50))
        overlap.append(len(set(a) & set(b)) / max(1, len(a)))
        same_top += a[:1] == b[:1]
    times: dict[str, list[float]] = {"index's statistics": [], "reader's statistics": []}
    for _ in range(args.rounds):
        for q in QUERIES:
            for name, f in (("index's statistics", everyone), ("reader's statistics", reader)):
                t0 = time.perf_counter()
                index.keyword("t", q, f, 50)
                times[name].append(1000 * (time.perf_counter() - t0))
    print(f"{len(by_file)} files, {len(docs)} chunks, {len(QUERIES)} queries x {args.rounds} rounds, k = 50")
    for name, values in times.items():
        print(f"  {name:20} ms  {summary(values)}")
    ratio = statistics.median(times["reader's statistics"]) / statistics.median(times["index's statistics"])
    print(f"  median ratio {ratio:.1f}x")
    print(f"  agreement when the reader sees every file: top-10 overlap mean {statistics.fmean(overlap):.2f},")
    print(f"  same top file {same_top}/{len(QUERIES)}")


if __name__ == "__main__":
    main()
