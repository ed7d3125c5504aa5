"""A newcomer's manual pages read by content, not by outcome (issue 47.5).

"21,071 of 21,071 man pages read" counted outcomes: every page ended OK, though all of util-linux's
Asciidoctor pages were read as nothing and mdoc pages lost their option flags. The oracle here is what a
person reads, ``man -P cat`` (groff, written by nobody on the team), and each page is scored on:

- NAME: the words of the page's NAME line are in what semfs extracted;
- options: every ``-x`` / ``--long`` option the rendered page shows is in the extracted text;
- words: the share of the rendered page's distinct words (3+ letters) found in the extracted text.

Pages are a deterministic sample of ``/usr/share/man/man{1,5,8}`` (every k-th by name) plus every
Asciidoctor and every mdoc page among them, so both dialects are always measured. Nothing was fitted to the
figures: the reader knows the man and mdoc macros as their manuals define them.

    .venv/bin/python bench/man_content.py [--pages 400]
"""

from __future__ import annotations

import argparse
import gzip
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from semfs.extractors.troff import extract_man

OPTION = re.compile(r"(?<![\w/.-])(--?[A-Za-z0-9][A-Za-z0-9_-]*)")
WORD = re.compile(r"[^\W\d_]{3,}")


def rendered(path: Path) -> str:
    env = {**os.environ, "MANWIDTH": "1000", "MAN_KEEP_FORMATTING": "", "LC_ALL": "C.UTF-8"}
    man = subprocess.run(
        ["man", "-E", "UTF-8", "-P", "cat", "-l", str(path)], capture_output=True, env=env, timeout=60, check=False
    )
    col = subprocess.run(["col", "-bx"], input=man.stdout, capture_output=True, timeout=60, check=False)
    lines = col.stdout.decode("utf-8", "replace").splitlines()
    return "\n".join(lines[1:-1])  # the header and footer lines are groff's, not the page's


def source(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8", "replace")


def dialect(text: str) -> str:
    head = text[:4000]
    if "Asciidoctor" in head:
        return "asciidoctor"
    return "mdoc" if re.search(r"^\.D[dt]\b", head, re.M) else "man"


def score(path: Path) -> dict[str, object] | None:
    text = source(path)
    if ".so " in text[:200] and len(text) < 300:
        return None  # a link to another page
    truth = rendered(path)
    if not truth.strip():
        return None
    got = extract_man(text)
    ours = got.text + "\n" + (got.title or "")
    our_words = {w.lower() for w in WORD.findall(ours)}
    their_words = {w.lower() for w in WORD.findall(truth)}
    name = re.search(r"^NAME\n\s+(.+)$", truth, re.M)
    name_words = {w.lower() for w in WORD.findall(name.group(1))} if name else set()
    options = set(OPTION.findall(truth))
    our_options = set(OPTION.findall(ours))
    return {
        "page": str(path),
        "dialect": dialect(text),
        "name": bool(name_words) and name_words <= our_words,
        "options": (len(options & our_options), len(options)),
        "words": len(their_words & our_words) / len(their_words) if their_words else 1.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=400, help="how many pages in the sample (default 400)")
    parser.add_argument("--root", type=Path, default=Path("/usr/share/man"))
    args = parser.parse_args()
    every = sorted(p for d in ("man1", "man5", "man8") for p in (args.root / d).glob("*") if p.is_file())
    results = [r for r in (score(p) for p in sampled(every, args.pages)) if r is not None]
    print(f"{len(results)} pages of {len(every)} under {args.root} (man -P cat as the oracle)")
    for group in ("all", "man", "mdoc", "asciidoctor"):
        rows = [r for r in results if group == "all" or r["dialect"] == group]
        if rows:
            print(f"{group:12s} {summary(rows)}")
    worst = sorted(results, key=lambda r: float(r["words"]))[:8]  # type: ignore[arg-type]
    print("lowest word recall:", ", ".join(f"{Path(str(r['page'])).name} {float(r['words']):.2f}" for r in worst))  # type: ignore[arg-type]


def sampled(every: list[Path], pages: int) -> list[Path]:
    """Every k-th page by name, plus every Asciidoctor and mdoc page, whatever the sample caught."""
    step = max(1, len(every) // pages)
    sample = every[::step][:pages]
    chosen = set(sample)
    for p in every:
        head = source(p)[:4000]
        if ("Asciidoctor" in head or re.search(r"^\.D[dt]\b", head, re.M)) and p not in chosen:
            sample.append(p)
            chosen.add(p)
    return sample


def summary(rows: list[dict[str, object]]) -> str:
    found = sum(r["options"][0] for r in rows)  # type: ignore[index]
    shown = sum(r["options"][1] for r in rows)  # type: ignore[index]
    words = [float(r["words"]) for r in rows]  # type: ignore[arg-type]
    return (
        f"pages {len(rows):4d}  NAME line {sum(1 for r in rows if r['name']) / len(rows):.3f}  "
        f"options {found}/{shown} = {found / max(shown, 1):.3f}  "
        f"word recall median {statistics.median(words):.3f}, p10 {sorted(words)[len(words) // 10]:.3f}, "
        f"pages under 0.9: {sum(1 for w in words if w < 0.9)}"
    )


if __name__ == "__main__":
    sys.exit(main())
