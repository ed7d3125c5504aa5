"""What a command loads before it does anything (issue 49: `semfs --version` cost a second of CPU because
every command imported the whole pipeline). Each case runs the real CLI in a fresh interpreter and lists
the heavy packages it imported; what it costs in seconds is measured by ``bench/cli_startup.py``."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

import semfs

pytestmark = pytest.mark.unit

# packages and modules that cost tens of milliseconds each, and what needs them
HEAVY = (
    "pydantic",  # the records and settings: a command that opens the store
    "pydantic_settings",
    "rich",  # tables and colour: a command that prints them
    "semfs.config",
    "semfs.bootstrap",
    "semfs.pipeline",
    "numpy",  # vectors: a search or a write
    "onnxruntime",
    "tokenizers",
    "usearch",
    "tantivy",
    "phonenumbers",  # the entity scanner: a file read
    "babel",
    "semfs.extractors.dispatch",  # the parsers: a file read
    "pypdfium2",
    "docx",
)
CHILD = """
import json, sys
sys.argv = ["semfs", *{args!r}]
import semfs.cli
try:
    semfs.cli.main()
except SystemExit:
    pass
heavy = {heavy!r}
print(json.dumps(sorted(h for h in heavy if h in sys.modules)))
"""


def loaded(args: list[str], data_dir: Path) -> list[str]:
    code = CHILD.format(args=args, heavy=HEAVY)
    env = {"SEMFS_DATA_DIR": str(data_dir), "PATH": "/usr/bin:/bin"}  # the default (local) model, as installed
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_version_and_help_load_nothing_heavy(tmp_path: Path) -> None:
    assert loaded(["--version"], tmp_path) == []
    assert loaded(["--help"], tmp_path) == []


def test_listing_and_showing_load_no_model_parser_index_or_scanner(tmp_path: Path) -> None:
    data = tmp_path / "data"
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Invoices are due in 30 days.\n")
    env = {"SEMFS_DATA_DIR": str(data), "SEMFS_EMBEDDER": "hash", "PATH": "/usr/bin:/bin"}
    semfs_cli = [sys.executable, "-c", "import semfs.cli; semfs.cli.main()"]
    subprocess.run([*semfs_cli, "ingest", str(docs)], env=env, check=True, capture_output=True)
    listing = subprocess.run([*semfs_cli, "ls", "--json"], env=env, check=True, capture_output=True, text=True)
    file_id = json.loads(listing.stdout)[0]["file_id"]
    # a record store and its settings, and rich to print: never a model, a parser, an index or the scanner
    needed = ["pydantic", "pydantic_settings", "rich", "semfs.bootstrap", "semfs.config", "semfs.pipeline"]
    assert loaded(["ls"], data) == needed
    assert loaded(["show", file_id], data) == needed


def test_the_version_printed_is_the_installed_packages() -> None:
    assert semfs.__version__ == version("semfs")
