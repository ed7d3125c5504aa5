"""The web page calling its API on another origin, through an HTTP API built from the rendered template
(``api_gateway.py``): Chromium's own CORS preflight meets the routes and authorizer as deployed (issue 47.3)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from semfs.bootstrap import build_container
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.server import ApiKeys, start_http
from tests.conftest import make_settings
from tests.integration.test_browser import DOC, WEB, _free_port, _ready, _shot, browser  # noqa: F401  (the fixture)
from tests.waits import CEILING_S

pytestmark = [pytest.mark.integration, pytest.mark.browser]


@pytest.fixture
def page_and_api(tmp_path: Path, shared_extractor: object) -> Iterator[tuple[str, str, Any]]:
    from tests.integration import api_gateway
    from tests.integration.iam_check import translated_template

    port = _free_port()
    page = f"http://127.0.0.1:{port}"
    config = tmp_path / "web-config.json"
    settings = make_settings(tmp_path, http_port=port, web_config=config)
    c = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    ingest_bytes(c, "default", DOC, "travel-policy.md")
    keys = ApiKeys(settings.api_keys_file)
    key = keys.create("default")
    host = start_http(c, keys, "127.0.0.1", port, WEB)
    api = api_gateway.from_template(translated_template(), page)
    gateway, url = api_gateway.serve(api, page)
    config.write_text(json.dumps({"api": url}))  # the page's API is on another origin, as in AWS
    yield page, key, api
    gateway.shutdown()
    host.shutdown()
    c.close()


def test_the_page_on_its_own_origin_passes_the_apis_preflight(
    page_and_api: tuple[str, str, Any],
    browser: Any,  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    page, key, api = page_and_api
    wait = WebDriverWait(browser, CEILING_S)
    browser.get(page + "/")
    _ready(browser, By.ID, "api-key").send_keys(key)
    _ready(browser, By.CSS_SELECTOR, "#key-form button").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "key-state"), "Signed in · tenant default"))
    _ready(browser, By.CSS_SELECTOR, "nav button[data-view=search]").click()
    _ready(browser, By.ID, "q").send_keys("train or plane for short trips")
    _ready(browser, By.CSS_SELECTOR, "#search-form button[type=submit]").click()
    first = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#results li .result-title")))
    assert first.text == "Travel expenses"
    _shot(browser, "api-on-another-origin")
    preflights = [(path, status) for method, path, status in api.seen if method == "OPTIONS"]
    assert preflights and all(status == 204 for _, status in preflights), preflights  # Chromium's own
    assert ("POST", "/search", 200) in api.seen
