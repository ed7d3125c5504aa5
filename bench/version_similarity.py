"""How well ``semfs.domain.similarity`` tells revisions from unrelated files that share a name.

Unrelated: pairs of different files with the same name under /usr/share/doc (README*, NEWS*; identical
texts left out — those are duplicates, not versions). Revisions: consecutive git versions of files of this
repository, and the demo contract drafts. Prints, for the rule semfs uses and for the plain measures,
how many unrelated pairs would be linked and how many revisions missed.

    .venv/bin/python bench/version_similarity.py [--pairs 1500]
"""

from __future__ import annotations

import argparse
import gzip
import io
import itertools
import random
import re
import subprocess
from pathlib import Path

from semfs import demo
from semfs.domain.similarity import resemblance

ROOT = Path(__file__).resolve().parents[1]
FILES = [
    "README.md",
    "docs/benchmarks.md",
    "template.yaml",
    "Makefile",
    "shared/semfs/cli/files.py",
    "shared/semfs/server.py",
    "shared/semfs/pipeline/search.py",
    "shared/semfs/web/app.js",
    "shared/semfs/domain/models.py",
]


def _read(p: Path) -> str:
    data = p.read_bytes()
    return (gzip.decompress(data) if p.suffix == ".gz" else data).decode("utf-8", "replace")[:200_000]


def unrelated_pairs(n: int) -> list[tuple[str, str]]:
    groups: dict[str, list[Path]] = {}
    for p in Path("/usr/share/doc").glob("*/*"):
        if p.is_file() and re.match(r"(README|NEWS)", p.name):
            groups.setdefault(p.name.removesuffix(".gz"), []).append(p)
    pairs = [(a, b) for ps in groups.values() for a, b in itertools.combinations(ps[:60], 2)]
    random.Random(1).shuffle(pairs)
    texts = ((_read(a), _read(b)) for a, b in pairs)
    return list(itertools.islice(((a, b) for a, b in texts if a != b), n))


def revision_pairs() -> list[tuple[str, str]]:
    out = []
    for f in FILES:
        git = ["git", "-C", str(ROOT)]
        log = subprocess.run([*git, "log", "--format=%H", "--", f], check=False, capture_output=True, text=True)
        commits = log.stdout.split()
        for new, old in itertools.pairwise(commits):
            shown = [
                subprocess.run([*git, "show", f"{c}:{f}"], check=False, capture_output=True, text=True)
                for c in (old, new)
            ]
            if all(s.returncode == 0 and s.stdout.strip() for s in shown):
                out.append((shown[0].stdout, shown[1].stdout))
    import docx

    drafts = ["\n".join(p.text for p in docx.Document(io.BytesIO(demo._contract(i))).paragraphs) for i in (1, 2, 3)]
    return [*out, (drafts[0], drafts[1]), (drafts[1], drafts[2]), (drafts[0], drafts[2])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pairs", type=int, default=1500)
    args = parser.parse_args()
    unrelated = [resemblance(a, b) for a, b in unrelated_pairs(args.pairs)]
    revisions = [resemblance(a, b) for a, b in revision_pairs()]
    print(f"{len(unrelated)} unrelated same-name pairs, {len(revisions)} revision pairs")
    rows = [
        ("semfs rule (jaccard >= 0.4 or containment >= 0.9 with >= 50 shingles)", lambda r: r.is_revision),
        ("baseline: jaccard >= 0.4", lambda r: r.jaccard >= 0.4),
        ("baseline: containment >= 0.5", lambda r: r.containment >= 0.5),
        ("old rule: same name", lambda r: True),
    ]
    for name, linked in rows:
        fp = sum(linked(r) for r in unrelated)
        fn = sum(not linked(r) for r in revisions)
        print(f"{name:72s} unrelated linked {fp:4d}/{len(unrelated)}  revisions missed {fn:3d}/{len(revisions)}")


if __name__ == "__main__":
    main()
