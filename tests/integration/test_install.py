"""A wheel built with ``pip wheel .`` runs the local pipeline and the server from a fresh venv.

What a user gets from ``pip install semfs`` is the wheel, not this checkout: the ASL definition, the
web page and the tokenizer must be package data, and ``semfs serve`` must work without the ``[aws]``
extra. The fresh venv gets the wheel alone (``--no-deps``); its dependencies come from the test
environment's site-packages through a plain path entry, which does not run that environment's
editable-install hook — so ``semfs`` is imported from the wheel, never from ``shared/``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
from pathlib import Path

import pytest

from tests.waits import CEILING_S

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("install")
    # build from a copy: setuptools' build/ in the checkout could carry modules deleted since
    source = work / "src"
    for part in ("pyproject.toml", "README.md"):
        source.mkdir(exist_ok=True)
        shutil.copy(ROOT / part, source / part)
    shutil.copytree(
        ROOT / "shared" / "semfs", source / "shared" / "semfs", ignore=shutil.ignore_patterns("__pycache__")
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = (work / "dist").glob("semfs-*.whl")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        capture_output=True,
    )
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    (Path(site) / "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return venv


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEMFS_")}
    env.update(SEMFS_DATA_DIR=str(tmp_path / "data"), SEMFS_EMBEDDER="hash", PYTHONPATH="")
    return env


def test_the_wheel_imports_semfs_from_itself(fresh_venv: Path, tmp_path: Path) -> None:
    out = subprocess.run(
        [str(fresh_venv / "bin" / "python"), "-c", "import semfs, aws_lambda_powertools; print(semfs.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(tmp_path),
    ).stdout.strip()
    assert out.startswith(str(fresh_venv)), out
    assert (
        "boto3"
        not in subprocess.run(  # serve needs no [aws] extra: nothing imports boto3 on the way
            [
                str(fresh_venv / "bin" / "python"),
                "-c",
                "import sys, semfs.server, semfs.api.app, semfs.cli; print(sorted(sys.modules))",
            ],
            check=True,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=_env(tmp_path),
        ).stdout
    )


def test_semfs_demo_and_serve_run_from_the_wheel(fresh_venv: Path, tmp_path: Path) -> None:
    semfs = str(fresh_venv / "bin" / "semfs")
    env = _env(tmp_path)
    demo = subprocess.run(
        [semfs, "demo", "--dir", str(tmp_path / "demo")],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert demo.returncode == 0, demo.stderr[-2000:]
    assert "outcomes:" in demo.stdout and "FAILED" not in demo.stdout
    port, smtp = _free_port(), _free_port()
    server = subprocess.Popen(
        [semfs, "serve", "--port", str(port), "--smtp-port", str(smtp)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    try:
        deadline = time.time() + CEILING_S
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    assert json.loads(r.read()) == {"status": "ok"}
                    break
            except OSError:
                assert server.poll() is None, server.stdout.read() if server.stdout else ""
                assert time.time() < deadline, "semfs serve did not come up"
                time.sleep(0.2)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=CEILING_S) as r:
            assert b"semfs" in r.read()  # the web page ships in the wheel
    finally:
        server.terminate()
        server.wait(timeout=CEILING_S)
