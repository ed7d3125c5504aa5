"""The web page in headless Chromium: upload a file, find it, open it, edit a tag, ask a question."""

from __future__ import annotations

import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from semfs.bootstrap import build_container
from semfs.pipeline.ingest import ingest_bytes
from semfs.server import ApiKeys, start_http
from tests.conftest import make_settings

pytestmark = [pytest.mark.integration, pytest.mark.browser]
WEB = Path(__file__).resolve().parents[2] / "shared" / "semfs" / "web"
DOC = (
    b"# Travel expenses\n\nTrain travel is preferred over flights for trips under 600 km.\n\n"
    b"Submit receipts within 30 days of the trip through the expenses portal."
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def site(tmp_path: Path, shared_extractor: object) -> Iterator[tuple[str, str]]:
    port = _free_port()
    settings = make_settings(tmp_path, http_port=port)
    c = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    ingest_bytes(c, "default", b"# <img src=x onerror=alert(1)> & <b>markup</b>\n\nA hostile title.", "hostile.md")
    keys = ApiKeys(settings.api_keys_file)
    key = keys.create("default")
    server = start_http(c, keys, "127.0.0.1", port, WEB)
    yield f"http://127.0.0.1:{port}", key
    server.shutdown()


@pytest.fixture
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver")
    assert chrome and driver_bin, ".ci/run installs Debian's chromium and chromium-driver"
    options = webdriver.ChromeOptions()
    options.binary_location = chrome
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_bin), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _signed_in(browser: Any, c: Any, port: int) -> Any:
    """Serve ``c`` with the web page on ``port`` and open it with a valid key already entered."""
    keys = ApiKeys(c.settings.api_keys_file)
    key = keys.create("default")
    server = start_http(c, keys, "127.0.0.1", port, WEB)
    browser.get(f"http://127.0.0.1:{port}/")
    browser.execute_script("localStorage.setItem('semfs-key', arguments[0])", key)
    browser.get(f"http://127.0.0.1:{port}/")
    return server


def test_upload_find_open_tag_and_ask(site: tuple[str, str], browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    base, key = site
    wait = WebDriverWait(browser, 30)
    browser.get(base + "/")
    browser.find_element(By.ID, "api-key").send_keys(key)
    browser.find_element(By.CSS_SELECTOR, "#key-form button").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "key-state"), "key set"))

    # upload
    path = tmp_path / "travel-policy.md"
    path.write_bytes(DOC)
    browser.find_element(By.CSS_SELECTOR, "nav button[data-view=upload]").click()
    browser.find_element(By.ID, "upload-file").send_keys(str(path))
    browser.find_element(By.CSS_SELECTOR, "#upload-form button").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "upload-state"), "travel-policy.md: OK"))

    # find it
    browser.find_element(By.CSS_SELECTOR, "nav button[data-view=search]").click()
    browser.find_element(By.ID, "q").send_keys("train or plane for short trips")
    browser.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
    first = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#results li .result-title")))
    assert first.text == "Travel expenses"
    assert browser.find_elements(By.CSS_SELECTOR, "#results mark")  # highlighted snippet

    # open it and edit a tag
    first.click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "file-title"), "Travel expenses"))
    browser.find_element(By.ID, "new-tag").send_keys("policy")
    browser.find_element(By.CSS_SELECTOR, "#tag-form button").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "file-tags"), "policy"))

    # ask, and follow the citation back to the file
    browser.find_element(By.CSS_SELECTOR, "nav button[data-view=ask]").click()
    browser.find_element(By.ID, "question").send_keys("Within how many days must receipts be submitted?")
    browser.find_element(By.CSS_SELECTOR, "#ask-form button").click()
    citation = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#citations a.citation")))
    assert "30 days" in citation.text
    citation.click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "file-title"), "Travel expenses"))
    cited = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#file-text p.cited")))
    assert "30 days" in cited.text


def test_titles_from_documents_are_escaped(site: tuple[str, str], browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    base, key = site
    browser.get(base + "/")
    browser.execute_script("localStorage.setItem('semfs-key', arguments[0])", key)
    browser.get(base + "/")
    browser.find_element(By.ID, "q").send_keys("hostile title")
    browser.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
    title = WebDriverWait(browser, 30).until(
        ec.visibility_of_element_located((By.CSS_SELECTOR, "#results .result-title"))
    )
    assert title.text == "<img src=x onerror=alert(1)> & <b>markup</b>"
    assert browser.find_elements(By.CSS_SELECTOR, "#results img, #results b") == []


def test_a_wrongly_linked_version_is_detached_from_the_file_view(
    tmp_path: Path, shared_extractor: object, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from semfs.pipeline.register import Provenance

    port = _free_port()
    settings = make_settings(tmp_path, http_port=port)
    c = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    first = ingest_bytes(c, "default", b"# Sodium\n\nA library for encryption and signatures.", "README.md")
    ingest_bytes(
        c,
        "default",
        b"# Sourdough\n\nMix flour, water and starter; bake the loaf at 240 degrees.",
        "README.md",
        Provenance(previous_version_id=first.record.file_id),  # linked by mistake
    )
    server = _signed_in(browser, c, port)
    try:
        wait = WebDriverWait(browser, 30)
        browser.find_element(By.ID, "q").send_keys("sourdough loaf")
        browser.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
        wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#results li .result-title"))).click()
        detach = wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "#file-versions button[data-detach]")))
        detach.click()
        wait.until(
            lambda d: (
                d.find_elements(By.CSS_SELECTOR, "#file-versions li")
                and not d.find_elements(By.CSS_SELECTOR, "#file-versions button[data-detach]")
            )
        )
        assert [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#file-versions li")] == [
            "v1 · README.md · latest"
        ]
        assert c.repo.get("default", first.record.file_id).is_latest
        # and linked back, from the same page
        browser.find_element(By.ID, "link-to").send_keys(first.record.file_id)
        browser.find_element(By.CSS_SELECTOR, "#link-form button").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#file-versions li")) == 2)
        assert not c.repo.get("default", first.record.file_id).is_latest
    finally:
        server.shutdown()


def test_status_shows_the_queue_and_cancels_a_queued_file(
    tmp_path: Path, shared_extractor: object, browser: Any
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    from tests.integration.test_server import SlowExtractor

    port = _free_port()
    slow = SlowExtractor(shared_extractor, delay=30)
    settings = make_settings(tmp_path, http_port=port)
    c = build_container(settings, extractor=slow, background_workers=1)  # type: ignore[arg-type]
    running = ingest_bytes(c, "default", b"# Busy\n\nBeing extracted slowly.", "slow-first.md").record
    waiting = ingest_bytes(c, "default", b"# Waiting\n\nStill in the queue.", "second.md").record
    server = _signed_in(browser, c, port)
    try:
        wait = WebDriverWait(browser, 30)
        browser.find_element(By.CSS_SELECTOR, "nav button[data-view=status]").click()
        button = wait.until(
            ec.element_to_be_clickable((By.CSS_SELECTOR, f"#jobs button[data-cancel='{waiting.file_id}']"))
        )
        assert "slow-first.md" in browser.find_element(By.ID, "jobs").text
        button.click()
        wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "#jobs button[data-cancel]"))
        assert c.repo.get("default", waiting.file_id).outcome.value == "SKIPPED_CANCELLED"  # type: ignore[union-attr]
        assert running.file_id
    finally:
        slow.gate.set()
        server.shutdown()
        c.close()
