"""An MCP client signs its user in (issue 52.4): the MCP authorization specification has the client, refused at
/mcp, read the endpoint's protected-resource metadata (RFC 9728) to find the authorization server. In AWS that is
the stack's user pool, whose tokens API Gateway's JWT authorizer checks; locally there is none (API keys), and
the metadata is not there. The oracles are the official MCP SDK's own rules: where its client looks for the
metadata (``build_protected_resource_metadata_discovery_urls``, SEP-985's fallback when a 401 names no URL, as API
Gateway's authorizer's does not) and the metadata's model (``ProtectedResourceMetadata``)."""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from semfs.bootstrap import Container, build_container
from semfs.server import ApiKeys, start_http, to_event
from tests.conftest import make_settings
from tests.waits import CEILING_S

pytestmark = pytest.mark.integration
ISSUER = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Abc123xyz"


def _get(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=CEILING_S) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def _host(c: Container) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = start_http(c, ApiKeys(c.settings.api_keys_file), "127.0.0.1", port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.shutdown()
        c.close()


@pytest.fixture
def with_issuer(tmp_path: Any) -> Iterator[str]:
    yield from _host(build_container(make_settings(tmp_path, oauth_issuer=ISSUER)))


@pytest.fixture
def with_keys(tmp_path: Any) -> Iterator[str]:
    yield from _host(build_container(make_settings(tmp_path)))


def test_an_mcp_client_finds_where_to_sign_in_where_the_sdk_looks(with_issuer: str) -> None:
    from mcp.client.auth.utils import build_protected_resource_metadata_discovery_urls
    from mcp.shared.auth import ProtectedResourceMetadata

    endpoint = f"{with_issuer}/mcp"
    urls = build_protected_resource_metadata_discovery_urls(None, endpoint)  # no resource_metadata in the 401
    assert len(urls) == 2
    for url in urls:  # both: the path-based one first, then the host's root
        status, body = _get(url)  # no credentials
        assert status == 200, body
        metadata = ProtectedResourceMetadata.model_validate(body)
        assert str(metadata.resource) == endpoint  # the client refuses metadata for another resource
        assert [str(a) for a in metadata.authorization_servers] == [ISSUER]
        assert metadata.bearer_methods_supported == ["header"] and metadata.scopes_supported == ["openid", "email"]
    status, refused = _get(f"{with_issuer}/files")
    assert status == 401, refused  # only the metadata is open


def test_a_server_that_takes_api_keys_has_no_sign_in_to_point_to(with_keys: str) -> None:
    status, body = _get(f"{with_keys}/.well-known/oauth-protected-resource/mcp")
    assert status == 404 and "API key" in body["error"]["message"]  # said, not a 401 asking for a key


def test_in_aws_the_resource_is_the_https_address_the_client_dialed(tmp_path: Any) -> None:
    """API Gateway's event names the domain the client called (its own or a custom one) and TLS ends there."""
    from semfs.api.app import app

    c = build_container(make_settings(tmp_path, oauth_issuer=ISSUER))
    try:
        event = to_event("GET", "/.well-known/oauth-protected-resource/mcp", {"Host": "files.example.org"}, b"", None)
        event["requestContext"]["domainName"] = "files.example.org"
        app.append_context(container=c)
        answer = app.resolve(event, None)
        assert answer["statusCode"] == 200, answer
        assert json.loads(answer["body"])["resource"] == "https://files.example.org/mcp"
    finally:
        c.close()


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    from samtranslator.yaml_helper import yaml_parse

    from tests.integration.iam_check import ROOT

    return yaml_parse((ROOT / "template.yaml").read_text())  # type: ignore[no-any-return]


def test_in_aws_mcp_clients_sign_in_through_the_hosted_ui_as_the_page_does(template: dict[str, Any]) -> None:
    """A public client (an MCP client holds no secret) with the code flow alone (the MCP SDK's client always adds
    PKCE), back only to the redirect URIs the operator names, and an audience of the API's authorizer. It exists
    when MCP is on and those URIs are given; the hosted UI then exists even without the web page."""
    resources, conditions = template["Resources"], template["Conditions"]
    client = resources["McpClient"]
    props = client["Properties"]
    assert client["Condition"] == "McpSignIn"
    assert props["GenerateSecret"] is False and props["AllowedOAuthFlows"] == ["code"]
    assert props["AllowedOAuthScopes"] == ["openid", "email"] and props["CallbackURLs"] == {"Ref": "McpCallbackUrls"}
    assert (
        props["ExplicitAuthFlows"] == ["ALLOW_REFRESH_TOKEN_AUTH"] and "custom:tenant" not in props["WriteAttributes"]
    )
    needs = conditions["McpSignIn"]["Fn::And"]
    assert {"Condition": "CreateUserPool"} in needs and {"Fn::Equals": [{"Ref": "EnableMcp"}, "true"]} in needs
    assert resources["UserPoolDomain"]["Condition"] == "HostedUi"
    assert template["Parameters"]["McpCallbackUrls"]["Default"] == ""  # off unless asked for
    audience = resources["HttpApi"]["Properties"]["Auth"]["Authorizers"]["JwtAuth"]["JwtConfiguration"]["audience"]
    with_mcp = audience["Fn::If"][1]["Fn::If"]
    assert with_mcp[0] == "McpSignIn" and all({"Ref": "McpClient"} in branch for branch in with_mcp[1]["Fn::If"][1:])
    assert template["Outputs"]["McpClientId"] == {
        "Condition": "McpSignIn",
        "Description": template["Outputs"]["McpClientId"]["Description"],
        "Value": {"Ref": "McpClient"},
    }
    env = resources["SearchApiFunction"]["Properties"]["Environment"]["Variables"]["SEMFS_OAUTH_ISSUER"]
    assert env["Fn::If"][0] == "McpSignIn" and "cognito-idp.${AWS::Region}.amazonaws.com/${UserPool}" in str(env)


def test_the_access_token_carries_the_tenant_the_api_reads(template: dict[str, Any]) -> None:
    """The trigger's code as deployed (the template's own ``ZipFile``), run on the version 2 event Cognito documents:
    the tenant and mail address go into the access token; nothing is made up for a user without a tenant, and what
    the response already held stays. The pool calls it (version 2: access tokens; the Essentials plan at least)
    and may: the permission names the pool."""
    resources = template["Resources"]
    pool = resources["UserPool"]["Properties"]
    config = pool["LambdaConfig"]["Fn::If"]
    assert config[0] == "McpSignIn" and config[1]["PreTokenGenerationConfig"] == {
        "LambdaArn": {"Fn::GetAtt": ["TokenClaimsFunction", "Arn"]},
        "LambdaVersion": "V2_0",
    }
    assert pool["UserPoolTier"]["Fn::If"][1] == {"Fn::If": ["McpSignIn", "ESSENTIALS", {"Ref": "AWS::NoValue"}]}
    permission = resources["TokenClaimsPermission"]["Properties"]
    assert permission["Principal"] == "cognito-idp.amazonaws.com"
    assert permission["SourceArn"] == {"Fn::GetAtt": ["UserPool", "Arn"]}
    fn = resources["TokenClaimsFunction"]["Properties"]
    assert fn["Timeout"] <= 5  # Cognito waits 5 s for a trigger
    namespace: dict[str, Any] = {}
    exec(compile(fn["Code"]["ZipFile"], "token_claims", "exec"), namespace)

    def event(attributes: dict[str, str]) -> dict[str, Any]:
        return {
            "version": "2",
            "triggerSource": "TokenGeneration_HostedAuth",
            "region": "eu-west-1",
            "userPoolId": "eu-west-1_Abc123xyz",
            "userName": "ana",
            "callerContext": {"awsSdkVersion": "aws-sdk-unknown-unknown", "clientId": "mcpclient123"},
            "request": {
                "userAttributes": attributes,
                "groupConfiguration": {"groupsToOverride": ["admin"], "iamRolesToOverride": [], "preferredRole": None},
                "scopes": ["openid", "email"],
            },
            "response": {"claimsAndScopeOverrideDetails": None},
        }

    answered = namespace["lambda_handler"](
        event({"sub": "1f2e", "email": "ana@acme.example", "custom:tenant": "acme", "email_verified": "true"}), None
    )
    details = answered["response"]["claimsAndScopeOverrideDetails"]
    assert details == {
        "accessTokenGeneration": {"claimsToAddOrOverride": {"custom:tenant": "acme", "email": "ana@acme.example"}}
    }
    nobody = namespace["lambda_handler"](event({"sub": "9a8b"}), None)
    assert nobody["response"]["claimsAndScopeOverrideDetails"]["accessTokenGeneration"]["claimsToAddOrOverride"] == {}
    kept = event({"custom:tenant": "acme"})
    kept["response"]["claimsAndScopeOverrideDetails"] = {"idTokenGeneration": {"claimsToSuppress": ["x"]}}
    after = namespace["lambda_handler"](kept, None)["response"]["claimsAndScopeOverrideDetails"]
    assert after["idTokenGeneration"] == {"claimsToSuppress": ["x"]}


def test_on_the_rendered_api_a_client_without_a_token_reaches_the_metadata() -> None:
    """API Gateway's authorizer answers a request without a token itself, with no WWW-Authenticate header naming
    the metadata; the SDK's client then tries the well-known addresses, and those reach the function."""
    from mcp.client.auth.utils import build_protected_resource_metadata_discovery_urls

    from tests.integration.api_gateway import from_template
    from tests.integration.iam_check import translated_template

    api = from_template(translated_template(), "https://page.example")
    endpoint = "https://abc123.execute-api.eu-west-1.amazonaws.com/mcp"
    assert api.route("POST", "/mcp") is not None and api.route("POST", "/mcp").authorized  # type: ignore[union-attr]
    for url in build_protected_resource_metadata_discovery_urls(None, endpoint):
        route = api.route("GET", url.removeprefix("https://abc123.execute-api.eu-west-1.amazonaws.com"))
        assert route is not None and not route.authorized, url
