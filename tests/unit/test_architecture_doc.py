"""docs/architecture.md stays true: every path it names exists and every port is in its table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import semfs.ports

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text()


def test_every_folder_and_module_in_the_layout_tree_exists() -> None:
    """The layout tree (the ```text block) names folders by indentation and modules inside them."""
    tree = DOC.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    base = ROOT / tree[0].strip().rstrip("/")
    parents = {1: base}
    folder = base
    missing = []
    for line in tree[1:]:
        depth = (len(line) - len(line.lstrip())) // 2
        head = re.match(r"^\s*([\w]+)/\s", line + " ")
        if head and depth in parents:
            folder = parents[depth] / head.group(1)
            parents[depth + 1] = folder
            if not folder.is_dir():
                missing.append(str(folder.relative_to(ROOT)))
        for name in re.findall(r"\b(\w+\.py)\b", line):
            if not any((d / name).exists() for d in (folder, folder.parent, base)):
                missing.append(name)
    assert len(tree) > 10 and missing == []


def test_every_module_path_in_the_doc_exists() -> None:
    outside_tree = DOC.split("```text\n", 1)[0] + DOC.split("```text\n", 1)[1].split("```", 1)[1]
    named = set(re.findall(r"((?:\w+/)*[\w.]+\.(?:py|json))", outside_tree))
    missing = []
    for path in named:
        candidates = [ROOT / path, ROOT / "shared" / "semfs" / path, ROOT / "shared" / path]
        if not any(c.exists() for c in candidates):
            missing.append(path)
    assert missing == []


def test_every_port_is_described() -> None:
    data = {
        "Container",
        "EnrichInput",
        "RecordQuery",
        "Thread",
        "Person",
        "Contact",
        "Job",
        "FileMention",
    }
    protocols = [n for n in semfs.ports.__all__ if n not in data]
    assert protocols, "the ports package exports its protocols"
    undocumented = [n for n in protocols if f"`{n}`" not in DOC]
    assert undocumented == []


def test_the_outcome_table_names_every_code() -> None:
    from semfs.domain.outcomes import Outcome, RequestOutcome

    table = (ROOT / "docs" / "outcomes.md").read_text()
    missing = [o.value for o in [*Outcome, *RequestOutcome] if f"| `{o.value}` |" not in table]
    assert missing == []


def test_no_docstring_cites_a_document_the_repository_does_not_have() -> None:
    """Issue 48: ten docstrings cited "DESIGN §7" and "STYLE 6", documents that live outside the repository
    (the team's reference folder): a reader of the code cannot follow them. A citation names docs/ instead."""
    code = [ROOT / "shared" / "semfs", ROOT / "functions"]
    citing = sorted(
        str(p.relative_to(ROOT))
        for folder in code
        for p in folder.rglob("*.py")
        if re.search(r"\b(?:DESIGN|STYLE)(?:\.md|\s§|\s\d)", p.read_text(encoding="utf-8"))
    )
    assert citing == []


def test_the_committed_openapi_document_is_the_one_the_routes_make() -> None:
    """docs/openapi.json is committed (issue 48), so a change to a route, a model or a parameter shows up in
    review as a diff of the document. It must be what the code serves: `make openapi` writes it."""
    import json

    from semfs.api.app import openapi_document

    committed = json.loads((ROOT / "docs" / "openapi.json").read_text(encoding="utf-8"))
    served = json.loads(json.dumps(openapi_document()))
    changed = sorted(
        f"{method.upper()} {path}"
        for path in set(committed["paths"]) | set(served["paths"])
        for method in set(committed["paths"].get(path, {})) | set(served["paths"].get(path, {}))
        if committed["paths"].get(path, {}).get(method) != served["paths"].get(path, {}).get(method)
    )
    assert changed == [], "docs/openapi.json is out of date for these operations: run `make openapi` and commit it"
    assert committed == served, "docs/openapi.json differs from the served document: run `make openapi`"
    assert "/mcp" in served["paths"]
