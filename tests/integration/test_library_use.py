"""semfs called from a user's own Python script, as a library (issue 47.10): it leaves the caller's process as
it found it, and a script without a ``__main__`` guard is told why its files failed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from semfs.priority import each_lowered
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration
DOC = "# Parking\n\nParking permits are renewed every January at the front desk."


def _run(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "doc.md").write_text(DOC)
    (tmp_path / "doc.html").write_text(f"<html><body><p>{DOC}</p></body></html>")
    path = tmp_path / "script.py"
    path.write_text(script)
    env = {**os.environ, "SEMFS_DATA_DIR": str(tmp_path / "data"), "SEMFS_EMBEDDER": "hash"}
    command = [sys.executable, str(path)]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=CEILING_S, check=False
    )


def test_ingest_as_a_library_leaves_the_callers_priority_as_it_was(tmp_path: Path) -> None:
    """``semfs ingest`` lowered its whole process to nice 10 and an unprivileged process cannot raise it again: the
    caller's own work ran at nice 10 afterwards. Now only the ingesting thread steps back."""
    done = _run(
        "import json, os\n"
        "from semfs.cli import app\n"
        "if __name__ == '__main__':\n"
        "    before = os.getpriority(os.PRIO_PROCESS, 0)\n"
        "    try:\n"
        "        app(['ingest', 'doc.md', '--json'], standalone_mode=False)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "    print(json.dumps({'before': before, 'after': os.getpriority(os.PRIO_PROCESS, 0)}))\n",
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["after"] == report["before"], report
    assert '"OK": 1' in done.stdout


def test_the_ingest_threads_run_at_the_niceness_asked_and_the_caller_keeps_its_own() -> None:
    caller = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    asked = min(19, max(caller, 0) + 5)

    def priority(n: int) -> tuple[int, int]:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id()), threading.get_native_id()

    done = dict(each_lowered(asked, priority, range(6), at_once=2))
    assert sorted(done) == list(range(6))  # each item once, whatever order they finished in
    assert {p for p, _ in done.values()} == {asked}
    assert threading.get_native_id() not in {t for _, t in done.values()}
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == caller

    started: list[int] = []

    def fails(n: int) -> int:
        started.append(n)
        if n == 1:
            raise ValueError("handed back")
        return n

    with pytest.raises(ValueError, match="handed back"):
        list(each_lowered(5, fails, range(100), at_once=2))
    assert len(started) < 100  # the error ended it: the rest never started


def test_a_script_without_a_main_guard_is_told_why_its_files_failed(tmp_path: Path) -> None:
    """The extraction worker imports the script that started semfs (Python's forkserver and spawn do), and a
    script calling semfs at import ran it again there: every file FAILED_INTERNAL with no hint, and the worker's
    copy wrote beside the real run. Now the worker's copy is refused before it stores anything, and the file's
    reason says what to change. A small plain-text or Markdown file needs no worker (it is read in the calling
    process) and is ingested all the same."""
    done = _run(
        "from semfs.bootstrap import build_container\n"
        "from semfs.config import Settings\n"
        "from semfs.pipeline.intake.ingest import ingest_bytes\n"
        "c = build_container(Settings())\n"
        "for name in ('doc.md', 'doc.html'):\n"
        "    r = ingest_bytes(c, 'default', open(name, 'rb').read(), name)\n"
        "    got = c.repo.get('default', r.record.file_id)\n"
        "    print('REASON', name, got.status.value, got.error)\n"
        "c.close()\n",
        tmp_path,
    )
    reasons = [line for line in done.stdout.splitlines() if line.startswith("REASON")]
    assert len(reasons) == 2, done.stdout  # the script's body ran once, in its own process
    assert reasons[0] == "REASON doc.md indexed None", reasons
    assert 'if __name__ == "__main__":' in reasons[1]
