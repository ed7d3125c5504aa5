"""Every command the README's "Using it" block shows works on the demo corpus, as a newcomer would type it
(issue 49: its own `semfs search "password rules" --mode keyword --tag policy --since 2026-01-01` found
nothing on the demo).

The block is read from README.md, so a new example is checked the day it is written. A placeholder the
reader fills in (``f_…``, ``~/contracts``, ``mail.eml``) is filled with a demo file; a finding command
must find something. Four lines are not run here, each for a reason it names (``NOT_RUN_HERE``)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semfs.cli import app
from tests import mail_corpus

pytestmark = [pytest.mark.integration, pytest.mark.model]

README = Path(__file__).resolve().parents[2] / "README.md"
# commands whose answer must name something found, and what they print when nothing is
FINDING = {
    "search": "no results",
    "ask": "no answer",
    "ls": "no files",
    "contacts": "no contacts",
    "entities": "no entities",
    "context": "nothing",
}
# the demo has no file that fails for a passing reason: `retry` runs the broken PDF again, which ends as before
EXIT = {"retry": (1, "FAILED_PARSE")}
NOT_RUN_HERE = {
    "serve": "a server that runs until stopped: tests/integration/test_server.py and test_http_host.py start it",
    "eval": "reads ../shared/bench/scifact (minutes): tests/integration/test_evaluation.py runs it on a small set",
    "reembed": "needs another model named in SEMFS_EMBEDDER=…: tests/integration/test_reembed.py",
    "purge-tenant": "erases a tenant: tests/integration/test_erasure.py runs it on two tenants side by side",
}


def readme_commands() -> list[str]:
    """The lines of the fenced block after "## Using it", comments dropped, as typed."""
    text = README.read_text(encoding="utf-8")
    block = re.search(r"## Using it.*?```sh\n(.*?)```", text, re.DOTALL)
    assert block, "README.md has no ```sh block under ## Using it"
    return [line for line in block.group(1).splitlines() if line.strip()]


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRunner, Path]:
    """The demo, as `make run` leaves it (the real local model), in a folder of its own."""
    home = tmp_path_factory.mktemp("newcomer")
    runner = CliRunner(env={"SEMFS_DATA_DIR": str(home / "data"), "SEMFS_EMBEDDER": "onnx"})
    result = runner.invoke(app, ["demo", "--dir", str(home / "demo")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return runner, home


def _ids(runner: CliRunner, home: Path) -> dict[str, str]:
    """The demo files the placeholders stand for, read once (a later `rm` must not change which file
    `restore` names), and a file that failed, for `retry`."""
    import json

    (home / "broken.pdf").write_bytes(b"%PDF-1.7\n not really a pdf")
    runner.invoke(app, ["ingest", str(home / "broken.pdf")])
    listed = json.loads(runner.invoke(app, ["ls", "--json", "--limit", "100"], catch_exceptions=False).stdout)
    by_name = {r["filename"]: r["file_id"] for r in listed if r["outcome"] == "OK"}
    failed = next(r["file_id"] for r in listed if r["filename"] == "broken.pdf")
    return {"f_…": by_name["supply-agreement.docx"], "f_prev": by_name["employee-handbook.md"], "failed": failed}


def _filled(args: list[str], ids: dict[str, str], home: Path) -> list[str]:
    """The placeholders a reader fills in, filled with the demo's files; `[--option]` left out;
    `a|b|c` as its first choice that only reads (`keys list`)."""
    filled: list[str] = []
    for typed in args:
        if typed.startswith("[") or typed.endswith("]"):
            continue
        arg = typed
        if "|" in arg and not arg.startswith("-"):
            arg = "list" if "list" in arg.split("|") else arg.split("|")[0]
        if arg == "f_…" and args[0] == "retry":
            arg = ids["failed"]
        arg = {
            **ids,
            "~/contracts": str(home / "demo" / "contracts"),
            "~/Documents": str(home / "demo" / "notes"),
            "new-draft.docx": str(home / "demo" / "contracts" / "v3" / "supply-agreement.docx"),
            "mail.eml": str(home / "mail.eml"),
            "archive.mbox": str(home / "archive.mbox"),
            "copy.pdf": str(home / "copy.docx"),
        }.get(arg, arg)
        filled.append(arg)
    return filled


def _mail(home: Path) -> None:
    message = mail_corpus.plain()
    (home / "mail.eml").write_bytes(message.as_bytes())
    (home / "archive.mbox").write_bytes(b"From sender@example.com Mon Dec  7 09:00:00 2026\n" + message.as_bytes())


def test_every_example_in_the_readme_works_on_the_demo(newcomer: tuple[CliRunner, Path]) -> None:
    runner, home = newcomer
    _mail(home)
    shutil.rmtree(home / "copy.docx", ignore_errors=True)
    ids = _ids(runner, home)
    failures: list[str] = []
    ran = 0
    for line in readme_commands():
        words = shlex.split(line, comments=True)
        while words and "=" in words[0]:  # SEMFS_…=… semfs …: a variable for this one command
            words = words[1:]
        assert words[0] == "semfs", line
        command = words[1]
        if command in NOT_RUN_HERE:
            continue
        args = _filled(words[1:], ids, home)
        stdin = "Invoice for the frames is due; see the supply agreement with Acme Corp.\n"
        result = runner.invoke(app, args, input=stdin)
        ran += 1
        said = result.output.casefold()
        code, says = EXIT.get(command, (0, ""))
        if result.exit_code != code or says not in result.output:
            failures.append(f"{line}\n  exit {result.exit_code}: {result.output.strip()[-300:]}")
        elif command in FINDING and (not said.strip() or said.lstrip().startswith(FINDING[command])):
            failures.append(f"{line}\n  found nothing: {result.output.strip()[:300]}")
    assert ran >= 30, ran
    assert not failures, "README examples that do not work on the demo:\n" + "\n".join(failures)
