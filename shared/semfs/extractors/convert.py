"""Legacy binary Office and OpenDocument files, converted by LibreOffice (headless) to the OOXML format
whose extractor then reads them, so their text keeps slide, sheet and row locations.

LibreOffice runs as a child of the bounded extraction worker: it inherits the worker's address-space
limit, gets a wall clock of its own, a throw-away profile, an empty environment and no network proxy.
Where LibreOffice is not installed (the Lambda layer does not ship it), the file ends
``SKIPPED_UNSUPPORTED_TYPE`` with a reason that says which format it is and what is missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from semfs.domain.errors import FileSkipped, ParseFailed, PermanentError
from semfs.domain.outcomes import Outcome

# kind -> (what it is, the OOXML format it becomes, the input extension LibreOffice expects)
CONVERTIBLE = {
    "doc": ("a legacy Word document (.doc)", "docx", ".doc"),
    "xls": ("a legacy Excel workbook (.xls)", "xlsx", ".xls"),
    "ppt": ("a legacy PowerPoint presentation (.ppt)", "pptx", ".ppt"),
    "odt": ("an OpenDocument text (.odt)", "docx", ".odt"),
    "ods": ("an OpenDocument spreadsheet (.ods)", "xlsx", ".ods"),
    "odp": ("an OpenDocument presentation (.odp)", "pptx", ".odp"),
    "docx": ("a Word document", "docx", ".docx"),  # Strict OOXML: rewritten as Transitional
    "xlsx": ("an Excel workbook", "xlsx", ".xlsx"),
    "pptx": ("a PowerPoint presentation", "pptx", ".pptx"),
}
_FILTERS = {
    "docx": "docx:MS Word 2007 XML",
    "xlsx": "xlsx:Calc MS Excel 2007 XML",
    "pptx": "pptx:Impress MS PowerPoint 2007 XML",
}


def soffice() -> str | None:
    """The LibreOffice binary, or None (``SEMFS_SOFFICE`` names one explicitly)."""
    explicit = os.environ.get("SEMFS_SOFFICE")
    if explicit:
        return explicit if shutil.which(explicit) else None
    return shutil.which("soffice") or shutil.which("libreoffice")


def to_ooxml(data: bytes, kind: str, timeout_s: float) -> tuple[str, bytes]:
    """(target kind, converted bytes). Raises FileSkipped when LibreOffice is absent, PermanentError
    (FAILED_TIMEOUT) when it runs out of time, ParseFailed when it cannot read the file."""
    what, target, ext = CONVERTIBLE[kind]
    binary = soffice()
    if binary is None:
        raise FileSkipped(
            f"{what} needs LibreOffice to be read, and this deployment has none",
            outcome=Outcome.SKIPPED_UNSUPPORTED_TYPE,
        )
    with tempfile.TemporaryDirectory(prefix="semfs-lo-") as tmp:
        src = Path(tmp) / f"input{ext}"
        src.write_bytes(data)
        out = Path(tmp) / "out"
        cmd = [
            binary,
            "--headless",
            "--norestore",
            "--nolockcheck",
            "--nodefault",
            f"-env:UserInstallation=file://{tmp}/profile",
            "--convert-to",
            _FILTERS[target],
            "--outdir",
            str(out),
            str(src),
        ]
        _run(cmd, tmp, timeout_s, f"converting {what}")
        result = out / f"input.{target}"
        if not result.is_file() or result.stat().st_size == 0:
            raise ParseFailed(f"{what} cannot be read (LibreOffice could not convert it)")
        return target, result.read_bytes()


def _run(cmd: list[str], tmp: str, timeout_s: float, doing: str) -> None:
    """Run a converter in ``tmp`` with a bare environment, in a session of its own so that past ``timeout_s``
    the launcher and every child it started (LibreOffice's soffice.bin) go together: ``PermanentError``
    (FAILED_TIMEOUT) saying what was ``doing``."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "LANG": "C.UTF-8", "no_proxy": "*"}
    proc = subprocess.Popen(
        cmd, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired as e:
        _kill_group(proc)
        raise PermanentError(f"{doing} took longer than {timeout_s:.0f}s", outcome=Outcome.FAILED_TIMEOUT) from e


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the launcher's whole session and wait (bounded) until every member is gone, so nothing of a
    timed-out conversion outlives the answer (soffice.bin is the launcher's child, not reaped by our wait)."""
    import contextlib
    import time

    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)


def ghostscript() -> str | None:
    """Ghostscript's binary (``SEMFS_GS``, else ``gs`` on PATH), or ``None``."""
    explicit = os.environ.get("SEMFS_GS")
    if explicit:
        return explicit if shutil.which(explicit) else None
    return shutil.which("gs")


def postscript_to_pdf(data: bytes, timeout_s: float) -> bytes:
    """A PostScript file as PDF, by Ghostscript's ``pdfwrite`` under ``-dSAFER`` (no file access beyond
    its input and output): its text then reads as a PDF's does, words spaced (``txtwrite`` ran them
    together). ``FileSkipped`` without Ghostscript, ``PermanentError`` past ``timeout_s``."""
    binary = ghostscript()
    if binary is None:
        raise FileSkipped(
            "a PostScript file (.ps) needs Ghostscript to be read, and this deployment has none",
            outcome=Outcome.SKIPPED_UNSUPPORTED_TYPE,
        )
    with tempfile.TemporaryDirectory(prefix="semfs-gs-") as tmp:
        src, out = Path(tmp) / "input.ps", Path(tmp) / "out.pdf"
        src.write_bytes(data)
        cmd = [binary, "-q", "-dSAFER", "-dBATCH", "-dNOPAUSE", "-sDEVICE=pdfwrite", f"-sOutputFile={out}", str(src)]
        _run(cmd, tmp, timeout_s, "reading the PostScript")
        if not out.is_file() or out.stat().st_size == 0:
            raise ParseFailed("the PostScript cannot be read (Ghostscript could not render it)")
        return out.read_bytes()
