"""CPU time of a CLI command from start to exit, in fresh processes: what every command pays before it does
anything, and what `ls` and `show` cost on a small store.

Each command runs N times (median and p90 of the user + system CPU seconds the child used, from
``getrusage(RUSAGE_CHILDREN)``, so another process busy on the machine does not count). The same run measures
two baselines: the interpreter alone and ``import typer`` (the floor any Typer CLI pays). Goals (issue 49):
``--version`` and ``--help`` at most 0.2 s of CPU, ``ls`` and ``show`` at most 0.5 s.

    .venv/bin/python bench/cli_startup.py [--runs 9] [--data-dir DIR] [--no-cache] [--json]

``ls`` and ``show`` read ``--data-dir`` (default: a store of three small files made once under
``.semfs/bench/cli``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import ROOT, pct

PY = sys.executable
SEMFS = str(Path(PY).with_name("semfs"))
GOALS = {"--version": 0.2, "--help": 0.2, "ls": 0.5, "show": 0.5}


def cpu(argv: list[str], env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def small_store(data_dir: Path, env: dict[str, str]) -> str:
    """A store of three files (made once); the id of one of them, for ``show``."""
    if not (data_dir / "semfs.db").exists():
        docs = data_dir.parent / "cli-docs"
        docs.mkdir(parents=True, exist_ok=True)
        for n, text in enumerate(("Invoices are due in 30 days.", "Passwords rotate yearly.", "Minutes of May.")):
            (docs / f"doc{n}.txt").write_text(text + "\n")
        subprocess.run([SEMFS, "ingest", str(docs)], env=env, check=True, stdout=subprocess.DEVNULL)
    listing = subprocess.run([SEMFS, "ls", "--json"], env=env, check=True, capture_output=True, text=True)
    return str(json.loads(listing.stdout)[0]["file_id"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".semfs" / "bench" / "cli" / "data")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-cache", action="store_true", help="no bytecode cache (PYTHONDONTWRITEBYTECODE=1)")
    args = parser.parse_args()
    env = {**os.environ, "SEMFS_DATA_DIR": str(args.data_dir)}
    # an installed package has its bytecode cached; this machine's shell may say not to write it
    # (PYTHONDONTWRITEBYTECODE), which makes every process compile every module it imports: --no-cache measures that
    if args.no_cache:  # an empty cache folder, never written: every process compiles what it imports
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="semfs-no-pyc-")
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    file_id = small_store(args.data_dir, env)
    commands = {
        "python (baseline)": [PY, "-c", "pass"],
        "import typer (baseline)": [PY, "-c", "import typer"],
        "--version": [SEMFS, "--version"],
        "--help": [SEMFS, "--help"],
        "ls": [SEMFS, "ls"],
        "show": [SEMFS, "show", file_id],
    }
    results = {}
    for name, argv in commands.items():
        cpu(argv, env)  # once to warm the page cache
        runs = [cpu(argv, env) for _ in range(args.runs)]
        results[name] = {"median_s": statistics.median(runs), "p90_s": pct(runs, 90), "runs": len(runs)}
    if args.json:
        print(json.dumps(results, indent=2))
        return
    cache = "without a bytecode cache" if args.no_cache else "bytecode cached, as installed"
    print(f"CPU seconds per command, {args.runs} fresh processes each (user + system; {cache})")
    for name, r in results.items():
        goal = GOALS.get(name)
        verdict = "" if goal is None else f"  goal <= {goal:.1f} s: {'met' if r['median_s'] <= goal else 'NOT met'}"
        print(f"  {name:<24} median {r['median_s']:.3f}  p90 {r['p90_s']:.3f}{verdict}")


if __name__ == "__main__":
    main()
