"""The quality card's sets (issue 51), built from text nobody on the team wrote, each split in two.

- **Packages** installed on this Debian machine that ship section-1 manual pages. Their pages are the
  corpus; the package's one-line description in ``/var/lib/dpkg/status`` (written by its Debian
  maintainer, not by the page's author) is a search query the pages answer, so query and answer are
  worded by different people, as a person's query and a file are.
- **Options** of those pages: ``What does the --keep option of gzip do?`` is answered by the page, and the
  page's own description of the option (rendered by groff, ``man -P cat``) is what a right answer says.
  The same question about an option the page does not have (``--holiday-mode``) has no answer.
- **Off-topic queries**: SciFact's claims (``../shared/bench/scifact``, written by its annotators about
  biomedical abstracts): nothing among manual pages answers them.
- **Debian's documentation files** of the same packages (``/usr/share/doc/<package>``: README, NEWS,
  changelog, copyright), for titles, tags and types.

Every item is **dev** or **test** by a hash of its package (or query id): ``split()``. Rules and
thresholds are fitted on dev; the card reports test, and says so.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Split = Literal["dev", "test"]
ROOT = Path(__file__).resolve().parents[2]
SCIFACT = ROOT.parent / "shared" / "bench" / "scifact"
STATUS = Path("/var/lib/dpkg/status")
INFO = Path("/var/lib/dpkg/info")
MAN1 = "/usr/share/man/man1/"
# options no manual page here has: questions about them have no answer (each checked against the page)
FAKE_OPTIONS = ["--holiday-mode", "--quantum-flux", "--paint-purple", "--feed-the-cat", "--sing-along"]
CONTENT = re.compile(r"[^\W\d_]{3,}")
STOP = frozenset(
    "the and for with that this from are not its into any all can but has have was were will then than when"
    " which what who does each such only also use used using more most some one two their them they there"
    " these those may must should would could been being other same given file files option options".split()
)


def split(key: str) -> Split:
    """dev or test, by a stable hash of ``key`` (a package name, a query id)."""
    return "dev" if int(hashlib.sha256(key.encode()).hexdigest(), 16) % 2 == 0 else "test"


def content_words(text: str) -> set[str]:
    return {w.lower() for w in CONTENT.findall(text)} - STOP


@dataclass
class Package:
    name: str
    description: str
    pages: list[Path] = field(default_factory=list)  # section-1 manual pages, real files (no .so stubs)
    docs: list[Path] = field(default_factory=list)  # /usr/share/doc/<name> files

    @property
    def split(self) -> Split:
        return split(self.name)


def _status() -> Iterator[tuple[str, str]]:
    """(package, short description) of every installed package."""
    for block in STATUS.read_text(encoding="utf-8", errors="replace").split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+): ?(.*)$", block, re.M))
        if fields.get("Status", "").endswith(" installed") and fields.get("Description"):
            yield fields["Package"], fields["Description"].strip()


def _listed(name: str) -> list[str]:
    for candidate in (INFO / f"{name}.list", *INFO.glob(f"{name}:*.list")):
        if candidate.exists():
            return candidate.read_text(encoding="utf-8", errors="replace").splitlines()
    return []


def _real_page(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    head = source(path)[:300]
    return not (head.startswith(".so ") and len(head) < 300)


def source(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8", "replace")


def packages(limit: int, pages_each: int = 2, docs_each: int = 2) -> list[Package]:
    """Up to ``limit`` packages with section-1 pages, a deterministic sample (by hash of the name)."""
    found: list[Package] = []
    for name, description in sorted(_status(), key=lambda x: hashlib.sha256(x[0].encode()).hexdigest()):
        listed = _listed(name)
        pages = [Path(p) for p in listed if p.startswith(MAN1) and p.endswith(".1.gz")]
        pages = sorted((p for p in pages if _real_page(p)), key=lambda p: (p.name.split(".")[0] != name, p.name))
        if not pages or len(content_words(description)) < 2:
            continue
        doc_dir = f"/usr/share/doc/{name}/"
        docs = [
            Path(p)
            for p in listed
            if p.startswith(doc_dir) and p.count("/") == 5 and Path(p).is_file() and not Path(p).is_symlink()
        ]
        docs = sorted(docs, key=lambda p: (not re.match(r"(README|NEWS|changelog\.Debian|copyright)", p.name), p.name))
        found.append(Package(name, description, pages[:pages_each], docs[:docs_each]))
        if len(found) == limit:
            break
    return found


def rendered(path: Path) -> str:
    """What a person reads: the page as groff renders it (``man -P cat``), without its header and footer."""
    env = {**os.environ, "MANWIDTH": "1000", "LC_ALL": "C.UTF-8"}
    man = subprocess.run(
        ["man", "-E", "UTF-8", "-P", "cat", "-l", str(path)], capture_output=True, env=env, timeout=60, check=False
    )
    col = subprocess.run(["col", "-bx"], input=man.stdout, capture_output=True, timeout=60, check=False)
    return "\n".join(col.stdout.decode("utf-8", "replace").splitlines()[1:-1])


OPTION_LINE = re.compile(r"^( {3,10})(-[^\s].*)$")
LONG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]{2,})")


@dataclass
class OptionQuestion:
    page: Path  # the page that answers it
    command: str
    option: str
    expected: str  # the page's description of the option (its first sentence); "" when there is none
    split: Split

    @property
    def text(self) -> str:
        return f"What does the {self.option} option of {self.command} do?"


def option_of(page: Path) -> tuple[str, str] | None:
    """The first long option of ``page`` whose description has at least four content words."""
    lines = rendered(page).splitlines()
    for i, line in enumerate(lines[:-1]):
        m = OPTION_LINE.match(line)
        longs = LONG.findall(m.group(2)) if m else []
        if not m or not longs:
            continue
        indent = len(m.group(1))
        body = lines[i + 1]
        if len(body) - len(body.lstrip()) <= indent or not body.strip():
            continue
        first = re.split(r"(?<=[.;:])\s", body.strip())[0]
        if len(content_words(first)) >= 4 and longs[0] not in {"--help", "--version", "--usage"}:
            return longs[0], first
    return None


def option_questions(pkgs: list[Package]) -> list[OptionQuestion]:
    """One answerable question per package (its first page with a described long option) and one about an
    option that page does not have."""
    out: list[OptionQuestion] = []
    for n, pkg in enumerate(pkgs):
        for page in pkg.pages:
            found = option_of(page)
            if found is None:
                continue
            command = page.name.split(".")[0]
            out.append(OptionQuestion(page, command, found[0], found[1], pkg.split))
            text = source(page)
            fake = next((f for f in FAKE_OPTIONS[n % len(FAKE_OPTIONS) :] + FAKE_OPTIONS if f not in text), None)
            if fake is not None:
                out.append(OptionQuestion(page, command, fake, "", pkg.split))
            break
    return out


def off_topic(per_split: int) -> list[tuple[str, Split]]:
    """SciFact claims, ``per_split`` of each split (by query id)."""
    taken: dict[Split, int] = {"dev": 0, "test": 0}
    out: list[tuple[str, Split]] = []
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            s = split(str(q["_id"]))
            if taken[s] < per_split:
                out.append((q["text"], s))
                taken[s] += 1
    return out


_TRAILER = re.compile(r"^ -- (?P<name>[^<\n]{3,60}?) +<[^>\n]+@", re.M)
_DEP5 = re.compile(
    r"^(?:Upstream-Contact|Copyright|Maintainer|Uploaders)?:?[ \t]+(?:[\d, -]+[ \t]+)?"
    r"(?P<name>[^<\n:]{3,60}?) +<[^>\n]+@",
    re.M,
)
_ORGISH = re.compile(
    r"\b(?:Inc|Ltd|LLC|GmbH|Foundation|Project|Team|Maintainers|Developers|Software|Corporation|University"
    r"|Consortium|Group|Association|Institute|Authors|Contributors|Debian|Ubuntu|GNU)\b",
    re.I,
)
_PERSONISH = re.compile(r"[A-ZÀ-Þ][\w'’.-]+(?: [A-ZÀ-Þa-z][\w'’.-]+){1,3}")


def people_named(path: Path) -> set[str]:
    """The persons a Debian changelog's sign-off lines (`` -- Name <address>``) or a machine-readable copyright
    file's contact and copyright lines (``Name <address>``) name: written by Debian maintainers, not by us.
    A name of two to four words, none of them an organisation's (Inc, Team, Project …)."""
    text = source(path)
    names = {m["name"].strip() for m in _TRAILER.finditer(text)}
    if path.name == "copyright" and text.startswith("Format:"):
        names |= {m["name"].strip() for m in _DEP5.finditer(text)}
    return {n for n in names if _PERSONISH.fullmatch(n) and not _ORGISH.search(n)}


@dataclass
class PurposeQuestion:
    page: Path
    command: str
    expected: str  # the page's NAME line after its dash: "compress or expand files"
    split: Split

    @property
    def text(self) -> str:
        return f"What is {self.command} used for?"


_NAME_LINE = re.compile(r"^NAME\n\s+(?P<names>[^\n]+?)\s+[-\u2013\u2014]\s+(?P<what>[^\n]+)", re.M)


def purpose_questions(pkgs: list[Package]) -> list[PurposeQuestion]:
    """One question per package: what its first page's command is for, answered by the page's NAME line."""
    out: list[PurposeQuestion] = []
    for pkg in pkgs:
        page = pkg.pages[0]
        m = _NAME_LINE.search(rendered(page))
        if m and len(content_words(m["what"])) >= 2:
            out.append(PurposeQuestion(page, page.name.split(".")[0], m["what"].strip(), pkg.split))
    return out
