"""The web page's modules against its one HTML document (issue 48). The modules look elements up by id
(``$("q")``) and TypeScript's checker takes such a lookup as any element, so what the checker cannot see is
checked here: every id a module names is an element of index.html, and every module main.js starts is
there. ESLint and ``tsc --checkJs`` (make lint) check the rest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
WEB = Path(__file__).resolve().parents[2] / "shared" / "semfs" / "web"
HTML = (WEB / "index.html").read_text(encoding="utf-8")
MODULES = {p.name: p.read_text(encoding="utf-8") for p in sorted((WEB / "js").glob("*.js"))}


def test_every_id_a_module_names_is_an_element_of_the_page() -> None:
    ids = set(re.findall(r'\bid="([^"]+)"', HTML))
    named = {(name, i) for name, js in MODULES.items() for i in re.findall(r'\$\("([\w-]+)"\)', js)}
    # an id a module makes itself (the notice) is not in the HTML
    made = {i for js in MODULES.values() for i in re.findall(r'\.id = "([\w-]+)"', js)}
    missing = sorted((name, i) for name, i in named if i not in ids | made)
    assert len(named) > 100 and missing == []


def test_the_page_loads_its_entry_module_and_every_module_is_reached() -> None:
    assert '<script type="module" src="/static/js/main.js"></script>' in HTML
    imported = {"main.js"}
    frontier = ["main.js"]
    while frontier:
        for target in re.findall(r'from "\./([\w-]+\.js)"|import "\./([\w-]+\.js)"', MODULES[frontier.pop()]):
            name = target[0] or target[1]
            if name not in imported:
                imported.add(name)
                frontier.append(name)
    assert imported == set(MODULES)  # no module left out of the page, none named that is not there


def test_core_imports_no_module() -> None:
    """Every module imports core.js, and the views and the router import each other. A module evaluated
    inside such a cycle runs before the modules it waits on: core.js, imported by all, must import none,
    or a view's first ``$("…")`` meets core's lookups uninitialised (it did: "Cannot access '$' before
    initialization", and the page stayed blank)."""
    assert not re.search(r"^import ", MODULES["core.js"], re.MULTILINE)
