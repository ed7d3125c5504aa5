"""The web page signing in through an identity provider (issue 28.5): the authorization code flow with PKCE,
as the page does it against the user pool's hosted UI in AWS, in headless Chromium.

The provider here is a small OAuth 2.0 server of this test's own, on another origin, that enforces what
Cognito's hosted UI enforces for a public client: the registered client id and redirect address, the S256
challenge (RFC 7636 §4.6: the verifier's SHA-256, base64url without padding, must equal the challenge the
authorization request carried), a code used once, CORS on the token endpoint for the page's origin, and a
logout that only returns to a registered address. What it cannot see: the ID token's signature and claims,
which API Gateway's JWT authorizer checks in AWS. Its "ID token" is a local API key, so that the local host,
which takes keys, answers the page's calls with it."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import pytest

from semfs.bootstrap import build_container
from semfs.server import ApiKeys, start_http
from tests.conftest import make_settings
from tests.integration.test_browser import WEB, _axe, _free_port, _ready, _shot, browser  # noqa: F401  (the fixture)
from tests.waits import CEILING_S

pytestmark = [pytest.mark.integration, pytest.mark.browser]
CLIENT = "web-client-1"
VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")  # RFC 7636 §4.1


@dataclass
class Provider:
    """What the fake provider saw and decided, for the test to check."""

    redirect: str
    id_token: str
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    authorize_queries: list[dict[str, str]] = field(default_factory=list)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    url: str = ""


def _handler(p: Provider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def _send(self, status: int, body: bytes, ctype: str, **headers: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            for k, v in headers.items():
                self.send_header(k.replace("_", "-"), v)
            self.end_headers()
            self.wfile.write(body)

        def _refuse(self, why: str, **headers: str) -> None:
            p.refused.append(why)
            self._send(400, json.dumps({"error": why}).encode(), "application/json", **headers)

        def do_GET(self) -> None:
            url = urlparse(self.path)
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            if url.path == "/oauth2/authorize":
                p.authorize_queries.append(q)
                wanted = {"response_type": "code", "client_id": CLIENT, "redirect_uri": p.redirect}
                if any(q.get(k) != v for k, v in wanted.items()) or q.get("code_challenge_method") != "S256":
                    return self._refuse("invalid_request")
                if not re.fullmatch(r"[A-Za-z0-9_-]{43}", q.get("code_challenge", "")):  # a SHA-256, base64url
                    return self._refuse("invalid_request")
                # the sign-in page a person fills in; its form carries the request on
                hidden = "".join(
                    f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">' for k, v in q.items()
                )
                page = (
                    "<!doctype html><title>Sign in</title><form method=post action=/login>"
                    f"{hidden}<input id=username name=username><input id=password name=password type=password>"
                    "<button id=signin type=submit>Sign in</button></form>"
                )
                return self._send(200, page.encode(), "text/html")
            if url.path == "/logout":
                if q.get("client_id") != CLIENT or q.get("logout_uri") != p.redirect:
                    return self._refuse("invalid_logout")
                return self._send(302, b"", "text/plain", Location=p.redirect)
            self._send(404, b"", "text/plain")
            return None

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
            form = {k: v[0] for k, v in parse_qs(body).items()}
            if self.path == "/login":
                if (form.get("username"), form.get("password")) != ("ana@acme.example", "Correct-Horse-9"):
                    return self._refuse("wrong_password")
                code = secrets.token_urlsafe(16)
                p.codes[code] = {
                    "challenge": form["code_challenge"],
                    "redirect": form["redirect_uri"],
                    "client": form["client_id"],
                }
                back = form["redirect_uri"] + "?" + urlencode({"code": code, "state": form.get("state", "")})
                return self._send(302, b"", "text/plain", Location=back)
            if self.path == "/oauth2/token":
                cors = {"Access_Control_Allow_Origin": p.redirect.rstrip("/")}
                p.token_requests.append(form)
                grant = p.codes.pop(form.get("code", ""), None)  # a code is used once
                if form.get("grant_type") != "authorization_code" or grant is None:
                    return self._refuse("invalid_grant", **cors)
                if form.get("client_id") != grant["client"] or form.get("redirect_uri") != grant["redirect"]:
                    return self._refuse("invalid_grant", **cors)
                verifier = form.get("code_verifier", "")
                digest = hashlib.sha256(verifier.encode("ascii")).digest()
                if (
                    not VERIFIER.fullmatch(verifier)
                    or base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant["challenge"]
                ):
                    return self._refuse("invalid_grant", **cors)
                tokens = {"id_token": p.id_token, "access_token": "a", "token_type": "Bearer", "expires_in": 3600}
                return self._send(200, json.dumps(tokens).encode(), "application/json", **cors)
            self._send(404, b"", "text/plain")
            return None

    return Handler


@pytest.fixture
def provider_site(tmp_path: Path, shared_extractor: object) -> Iterator[tuple[str, Provider]]:
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    config = tmp_path / "web-config.json"
    settings = make_settings(tmp_path, http_port=port, web_config=config)
    c = build_container(settings, extractor=shared_extractor)  # type: ignore[arg-type]
    keys = ApiKeys(settings.api_keys_file)
    provider = Provider(redirect=base + "/", id_token=keys.create("default"))
    idp = ThreadingHTTPServer(("127.0.0.1", 0), _handler(provider))
    provider.url = f"http://127.0.0.1:{idp.server_address[1]}"
    threading.Thread(target=idp.serve_forever, daemon=True).start()
    config.write_text(
        json.dumps(
            {
                "api": base,
                "auth": {
                    "client_id": CLIENT,
                    "scope": "openid email",
                    "authorize_url": provider.url + "/oauth2/authorize",
                    "token_url": provider.url + "/oauth2/token",
                    "logout_url": provider.url + "/logout",
                },
            }
        )
    )
    server = start_http(c, keys, "127.0.0.1", port, WEB)
    yield base, provider
    server.shutdown()
    idp.shutdown()


def test_the_page_signs_in_with_the_code_flow_and_pkce_and_out_again(
    provider_site: tuple[str, Provider],
    browser: Any,  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    base, provider = provider_site
    wait = WebDriverWait(browser, CEILING_S)
    browser.get(base + "/#/search")
    wait.until(ec.text_to_be_present_in_element((By.ID, "signin"), "organisation's account"))
    assert not browser.find_element(By.ID, "api-key").is_displayed()  # no key field on such a page
    for width, name in ((1366, "desktop"), (390, "phone")):
        browser.set_window_size(width, 900)
        assert _axe(browser) == [], name
        _shot(browser, f"sign-in-provider-{name}")
    browser.set_window_size(1280, 900)
    _ready(browser, By.ID, "sign-in-here").click()  # the panel's button (the header's does the same)
    # the provider's page: the person signs in there, never on semfs's page
    _ready(browser, By.ID, "username").send_keys("ana@acme.example")
    _ready(browser, By.ID, "password").send_keys("Correct-Horse-9")
    _ready(browser, By.ID, "signin").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "key-state"), "Signed in · tenant default"))
    # back where the person was, with the single-use code gone from the address
    assert browser.current_url == base + "/#/search"
    (asked,) = provider.authorize_queries
    (exchanged,) = provider.token_requests
    assert provider.refused == [] and provider.codes == {}
    assert exchanged["code_verifier"] not in json.dumps(asked)  # only its hash travelled through the browser
    assert "id_token" not in browser.execute_script("return JSON.stringify(localStorage)")  # this tab only
    # out: the provider's session ends too, and the page asks again
    _ready(browser, By.ID, "sign-out").click()
    wait.until(ec.visibility_of_element_located((By.ID, "sign-in")))
    assert browser.current_url.startswith(base + "/") and provider.refused == []
    assert browser.execute_script("return sessionStorage.getItem('semfs-token')") is None
    # the old answer again (a stale link, a back button): no request in this tab waits for it, so it is
    # not exchanged (the provider would refuse the used code anyway)
    browser.get(base + "/?" + urlencode({"code": exchanged["code"], "state": asked["state"]}))
    wait.until(ec.text_to_be_present_in_element((By.ID, "signin-error"), "Sign-in did not finish"))
    assert len(provider.token_requests) == 1 and "code=" not in browser.current_url
    # an answer that does not carry this tab's state is not exchanged either
    _ready(browser, By.ID, "sign-in").click()
    _ready(browser, By.ID, "username").send_keys("ana@acme.example")
    _ready(browser, By.ID, "password").send_keys("Correct-Horse-9")
    browser.execute_script("document.querySelector('input[name=state]').value = 'forged'")
    _ready(browser, By.ID, "signin").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "signin-error"), "Sign-in did not finish"))
    assert len(provider.token_requests) == 1
    # and a proper one works again
    _ready(browser, By.ID, "sign-in").click()
    _ready(browser, By.ID, "username").send_keys("ana@acme.example")
    _ready(browser, By.ID, "password").send_keys("Correct-Horse-9")
    _ready(browser, By.ID, "signin").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "key-state"), "Signed in · tenant default"))
    assert len(provider.token_requests) == 2 and provider.refused == []
