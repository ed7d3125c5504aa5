"""How the text functions grow with their input: seconds at each size and the ratio per doubling.

A linear function doubles its time when its input doubles (ratio ~2); a quadratic one quadruples it (~4).
Each function reads each hostile shape of ``tests/unit/test_linear_text.py`` (one long word, alternating
classes, "ab:ab:…", "a@a@…", …) at 64 KB → 1 MB; the median of 3 runs per point, CPU time of this process.
The same run measures the pattern the enrichment module used before issue 27 (``\\S*(://|www\\.)\\S*``) on
sizes it can still finish, as the baseline the linear functions beat.

    .venv/bin/python bench/text_linearity.py [--max-kb 1024] [--json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.unit.test_linear_text import SHAPES, _functions  # noqa: E402

_OLD_STRIP = re.compile(r"\S*(://|www\.)\S*")


def _seconds(fn: object, text: str, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        fn(text)  # type: ignore[operator]
        times.append(time.process_time() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-kb", type=int, default=1024)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--only", help="one function by its name (e.g. entities)")
    args = parser.parse_args()
    sizes = []
    kb = 64
    while kb <= args.max_kb:
        sizes.append(kb * 1024)
        kb *= 2
    rows = []
    for fname, fn in _functions().items():
        if args.only and fname != args.only:
            continue
        worst: float | None = None
        slowest = 0.0
        for sname, shape in SHAPES.items():
            secs = [_seconds(fn, shape(n)) for n in sizes]
            ratios = [b / a for a, b in itertools.pairwise(secs) if a > 1e-3]  # below 1 ms the clock is noise
            if ratios:
                worst = max(worst or 0.0, statistics.median(ratios))
            slowest = max(slowest, secs[-1])
            rows.append({"function": fname, "shape": sname, "seconds": secs, "ratios": ratios})
        if not args.json:
            growth = f"{worst:4.2f}" if worst is not None else " n/a (under 1 ms at every size)"
            print(
                f"{fname:22s} slowest shape at {sizes[-1] // 1024} KB {slowest:6.3f} s; "
                f"worst median ratio per doubling {growth}  (linear 2, quadratic 4)"
            )
    old_sizes = [2500, 5000, 10000]
    old = [_seconds(lambda t: _OLD_STRIP.sub(" ", t), "a" * n, runs=1) for n in old_sizes]
    new_fn = _functions()["strip_links"]
    new = [_seconds(new_fn, "a" * n) for n in old_sizes]
    baseline = {"sizes": old_sizes, "old_seconds": old, "new_seconds": new}
    if args.json:
        print(json.dumps({"sizes": sizes, "rows": rows, "baseline": baseline}, indent=2))
        return
    points = zip(old_sizes, old, new, strict=True)
    print("baseline, one long word: " + ", ".join(f"{n:,} chars {o:.3f} s → {w:.5f} s" for n, o, w in points))


if __name__ == "__main__":
    main()
