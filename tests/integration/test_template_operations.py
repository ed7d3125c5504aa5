"""template.yaml as a team operates it (issue 28): two stacks in one account, least privilege per verb,
data that survives a mistake and is gone when erased, alarms for what breaks, sign-in a person can use,
and the post-deploy checks. Each test names the rule it holds the template to."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.iam_check import statements as policy_statements

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    from samtranslator.yaml_helper import yaml_parse

    parsed: dict[str, Any] = yaml_parse((ROOT / "template.yaml").read_text())
    return parsed


@pytest.fixture(scope="module")
def translated() -> dict[str, Any]:
    from tests.integration.iam_check import translated_template

    return translated_template()


def _actions(translated: dict[str, Any], function: str) -> set[str]:
    role = translated["Resources"][function]["Properties"]["Role"]["Fn::GetAtt"][0]
    found: set[str] = set()
    for st in policy_statements(translated["Resources"][role]["Properties"].get("Policies", [])):
        actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
        found |= {a for a in actions if isinstance(a, str)}
    return found


def _functions(translated: dict[str, Any]) -> list[str]:
    return [n for n, r in translated["Resources"].items() if r["Type"] == "AWS::Lambda::Function"]


def test_schedules_are_named_by_cloudformation_so_two_stacks_can_share_a_region(translated: dict[str, Any]) -> None:
    """EventBridge Scheduler names are unique per account, region and group: a fixed name (SAM's default is
    the event's logical id) makes the second stack's deploy fail with 'already exists'."""
    schedules = [r for r in translated["Resources"].values() if r["Type"] == "AWS::Scheduler::Schedule"]
    assert len(schedules) == 3  # re-embed, reconcile, mail accounts
    for schedule in schedules:
        name = schedule["Properties"].get("Name")
        assert name is None or "AWS::StackName" in json.dumps(name), name


def test_only_writers_put_and_only_reembed_deletes_in_opensearch(translated: dict[str, Any]) -> None:
    """es:ESHttpPut makes an index or adds a mapping field, es:ESHttpDelete drops an index: Index and
    re-embed write documents; only the re-embed switch (and a full reindex) drops an index."""
    put = {f for f in _functions(translated) if "es:ESHttpPut" in _actions(translated, f)}
    delete = {f for f in _functions(translated) if "es:ESHttpDelete" in _actions(translated, f)}
    assert put == {"IndexFunction", "ReembedFunction"}
    assert delete == {"ReembedFunction"}


@pytest.mark.parametrize(
    ("function", "why"),
    [
        ("EnrichFunction", "the LLM"),
        ("EmbedFunction", "embeddings"),
        ("SearchApiFunction", "query embeddings, /ask"),
        ("ReembedFunction", "re-embed"),
        ("IndexFunction", "settling the latest version re-embeds one stored under an older model"),
        ("IngestUploadFunction", "a removed upload's predecessor becomes latest and may be re-embedded"),
    ],
)
def test_every_function_that_may_call_the_model_can_read_its_key(
    translated: dict[str, Any], function: str, why: str
) -> None:
    assert "secretsmanager:GetSecretValue" in _actions(translated, function), why


def test_raw_inbound_mail_is_read_by_the_mail_function_alone(translated: dict[str, Any]) -> None:
    """Raw messages hold every recipient's mail before a tenant is known: no other function may read them."""
    from tests.integration.iam_check import allowed, function_grants

    grants = function_grants(json.dumps({"Bucket": "b"}))  # the bucket's physical name: b
    readers = {fn for fn, g in grants.items() if allowed(g, "s3:GetObject", "arn:aws:s3:::b/inbound/raw/m1")}
    assert readers == {"ingest_email"}
    assert allowed(grants["extract"], "s3:GetObject", "arn:aws:s3:::b/content/acme/ab/abc")


def test_the_tables_that_hold_data_are_kept_and_recoverable(template: dict[str, Any]) -> None:
    """Files and entities (threads, contacts, the tag vocabulary) survive a stack deletion or a replacement
    (Retain) and a bad write (point-in-time recovery). The gate and idempotency tables hold only what a
    running pipeline needs for an hour or a day, and go with the stack."""
    resources = template["Resources"]
    for name in ("FilesTable", "EntityTable"):
        table = resources[name]
        assert (table.get("DeletionPolicy"), table.get("UpdateReplacePolicy")) == ("Retain", "Retain"), name
        assert table["Properties"]["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}


def test_deleted_versions_and_abandoned_uploads_expire(template: dict[str, Any]) -> None:
    """A versioned bucket keeps a deleted object as a noncurrent version forever unless a rule expires it:
    an erasure request could not be honoured. Abandoned multipart uploads are billed until aborted."""
    bucket = template["Resources"]["Bucket"]["Properties"]
    rules = bucket["LifecycleConfiguration"]["Rules"]
    expire = next(r for r in rules if "NoncurrentVersionExpiration" in r)
    assert expire["Status"] == "Enabled" and expire["NoncurrentVersionExpiration"]["NoncurrentDays"] == {
        "Ref": "NoncurrentVersionDays"
    }
    assert expire.get("ExpiredObjectDeleteMarker") is True
    assert any(r.get("AbortIncompleteMultipartUpload", {}).get("DaysAfterInitiation") for r in rules)
    assert template["Parameters"]["NoncurrentVersionDays"]["Default"] == 30
    # raw inbound mail is read once at arrival, and one message may hold several tenants' mail, so no tenant's
    # erasure deletes it: a rule of its own expires it (before this rule it stayed for ever)
    raw = next(r for r in rules if r.get("Prefix") == "inbound/raw/")
    assert raw["Status"] == "Enabled" and raw["ExpirationInDays"] == {"Ref": "InboundMailDays"}


def test_every_dead_letter_queue_and_failure_has_an_alarm(template: dict[str, Any]) -> None:
    resources = template["Resources"]
    alarms = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"]
    watched_queues = {
        d["Value"]["Fn::GetAtt"][0] for a in alarms for d in a.get("Dimensions", []) if d["Name"] == "QueueName"
    }
    dlqs = {n for n, r in resources.items() if r["Type"] == "AWS::SQS::Queue" and n.endswith("DLQ")}
    assert dlqs == watched_queues
    metrics = {a.get("MetricName") for a in alarms}
    assert {"5xx", "ModelKeyRefused", "ClusterStatus.red", "FreeStorageSpace", "ClusterIndexWritesBlocked"} <= metrics
    summed: dict[str, set[str]] = {}  # Lambda metric → the functions an alarm sums it over
    for a in alarms:
        for m in (m for m in a.get("Metrics", []) if "MetricStat" in m):
            metric = m["MetricStat"]["Metric"]
            summed.setdefault(metric["MetricName"], set()).update(d["Value"]["Ref"] for d in metric["Dimensions"])
    entry_points = ("IngestUpload", "IngestEmail", "SearchApi", "Admit", "OcrWait")
    for entry in entry_points:
        assert f"{entry}Function" in summed["Errors"], entry  # no state machine retries and records these
    assert len(summed["Throttles"]) <= 10  # CloudWatch's limit of metrics in one alarm
    assert all(a["AlarmActions"] == [{"Ref": "AlarmTopic"}] for a in alarms)


def test_every_event_target_has_somewhere_to_put_what_it_could_not_deliver(template: dict[str, Any]) -> None:
    for name, fn in template["Resources"].items():
        if fn["Type"] != "AWS::Serverless::Function":
            continue
        for event, source in (fn["Properties"].get("Events") or {}).items():
            if source["Type"] == "EventBridgeRule":
                assert "DeadLetterConfig" in source["Properties"], (name, event)


def test_a_domain_without_recipients_deploys(template: dict[str, Any]) -> None:
    """SES refuses a receipt rule whose Recipients is [""] (InboundDomain set, InboundRecipients empty):
    no recipients means every address of the verified domain."""
    rule = template["Resources"]["ReceiptRule"]["Properties"]["Rule"]
    # none given: the inbound domain's addresses, not every domain the account has verified (issue 54.6)
    assert rule["Recipients"] == {"Fn::If": ["HasRecipients", {"Ref": "InboundRecipients"}, [{"Ref": "InboundDomain"}]]}
    assert template["Conditions"]["HasRecipients"] == {
        "Fn::Not": [{"Fn::Equals": [{"Fn::Join": ["", {"Ref": "InboundRecipients"}]}, ""]}]
    }


def test_sign_in_is_by_invitation_and_the_cli_can_get_a_token(template: dict[str, Any]) -> None:
    """Self sign-up gives a token without custom:tenant, which the API refuses anyway: it is off. The AWS
    CLI cannot do SRP, so USER_PASSWORD_AUTH is allowed for the runbook's token recipe, by a client of its own
    (issue 54.6): the web page's client takes SRP and refresh only. Both are audiences of the API's
    authorizer; MFA and threat protection are parameters."""
    resources = template["Resources"]
    pool = resources["UserPool"]["Properties"]
    web, cli = resources["UserPoolClient"]["Properties"], resources["CliClient"]["Properties"]
    assert pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
    assert web["ExplicitAuthFlows"] == ["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]
    assert cli["ExplicitAuthFlows"] == ["ALLOW_USER_PASSWORD_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"]
    assert resources["CliClient"]["Condition"] == "CliSignIn" and "AllowedOAuthFlows" not in cli
    for client in (web, cli):
        assert client["PreventUserExistenceErrors"] == "ENABLED"
        assert "custom:tenant" not in client["WriteAttributes"]
    audience = resources["HttpApi"]["Properties"]["Auth"]["Authorizers"]["JwtAuth"]["JwtConfiguration"]["audience"]
    without_mcp = audience["Fn::If"][1]["Fn::If"][2]
    assert without_mcp["Fn::If"][1] == [{"Ref": "UserPoolClient"}, {"Ref": "CliClient"}]
    assert pool["MfaConfiguration"] == {"Ref": "Mfa"} and template["Parameters"]["Mfa"]["Default"] == "OPTIONAL"
    assert pool["UserPoolAddOns"]["Fn::If"][0] == "ThreatProtectionOff"


def test_services_use_the_key_only_for_this_account(template: dict[str, Any]) -> None:
    """A service principal in a key policy without a source condition lets that service use the key on
    behalf of any account (the confused deputy)."""
    for st in template["Resources"]["AlarmKey"]["Properties"]["KeyPolicy"]["Statement"]:
        if "Service" in st["Principal"]:
            assert st["Condition"]["StringEquals"]["aws:SourceAccount"] == {"Ref": "AWS::AccountId"}, st["Sid"]


# ------------------------------------------------------------------------------- post-deploy.sh

FAKE_AWS = r"""#!/usr/bin/env bash
# a stand-in for the AWS CLI: answers the calls post-deploy.sh makes from FAKE_* variables, logs the rest
echo "$*" >> "$FAKE_LOG"
case "$1 $2" in
  "configure get") echo eu-west-1 ;;
  "cloudformation describe-stacks")
    case "$*" in
      *ReceiptRuleSetName*) echo "${FAKE_RULE_SET:-None}" ;;
      *OpenAIKeySecret*) echo arn:secret ;;
      *UserPoolId*) echo "${FAKE_POOL:-None}" ;;
      *CliClientId*) echo cli-client-1 ;;
      *UserPoolClientId*) echo client-1 ;;
      *WebBucketName*) echo "${FAKE_WEB_BUCKET:-None}" ;;
      *SignInUrl*) echo "${FAKE_SIGN_IN:-None}" ;;
      *WebDistributionId*) echo E2DIST ;;
      *WebUrl*) echo https://d111.cloudfront.net/ ;;
      *ApiUrl*) echo https://api1.execute-api.eu-west-1.amazonaws.com ;;
    esac ;;
  "s3 cp") case "$4" in */static/config.json) cp "$3" "$FAKE_LOG.config" ;; esac ;;
  "cloudfront create-invalidation") echo I1 ;;
  "cognito-idp admin-create-user" | "cognito-idp admin-set-user-password") ;;
  "ses describe-active-receipt-rule-set") echo "${FAKE_ACTIVE:-None}" ;;
  "ses set-active-receipt-rule-set") ;;
  "secretsmanager get-secret-value") [ -n "${FAKE_KEY:-}" ] && echo "$FAKE_KEY" || exit 255 ;;
  *) echo "unexpected: $*" >&2; exit 2 ;;
esac
"""


def _script(tmp_path: Path, args: list[str], **fake: str) -> tuple[int, str, list[str]]:
    """A script under scripts/ against the fake AWS CLI: its exit code, its output and the calls it made."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "aws").write_text(FAKE_AWS)
    (bin_dir / "aws").chmod(0o755)
    log = tmp_path / "calls.log"
    log.write_text("")
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_LOG": str(log)}
    env |= {f"FAKE_{k.upper()}": v for k, v in fake.items() if k not in ("replace", "password")}
    if fake.get("replace"):
        env["SEMFS_REPLACE_RULE_SET"] = "1"
    if fake.get("password"):
        env["SEMFS_USER_PASSWORD"] = fake["password"]
    run = subprocess.run(
        ["bash", str(ROOT / "scripts" / args[0]), *args[1:]],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    return run.returncode, run.stdout + run.stderr, log.read_text().splitlines()


def _post_deploy(tmp_path: Path, **fake: str) -> tuple[int, str, list[str]]:
    return _script(tmp_path, ["post-deploy.sh", "semfs-dev", "eu-west-1"], **fake)


def test_post_deploy_refuses_the_placeholder_key(tmp_path: Path) -> None:
    code, out, _ = _post_deploy(tmp_path, key="replace-me")
    assert code == 1 and "LLM key: NOT set" in out and "put-secret-value" in out
    code, out, _ = _post_deploy(tmp_path)  # the secret cannot be read, or is empty
    assert code == 1 and "NOT set" in out
    code, out, _ = _post_deploy(tmp_path, key="sk-live-123")
    assert code == 0 and "LLM key: set" in out and "sk-live-123" not in out


def test_post_deploy_uploads_the_web_page_with_the_configuration_it_signs_in_with(tmp_path: Path) -> None:
    """The page the stack hosts is the one semfs serve serves, with a configuration naming the API and the
    hosted UI's endpoints; CloudFront's cached copies are dropped. No page is uploaded without a sign-in."""
    hosted = "https://semfs-1234.auth.eu-west-1.amazoncognito.com"
    code, out, calls = _post_deploy(tmp_path, key="sk-1", web_bucket="semfs-web-1", sign_in=hosted)
    assert code == 0, out
    copied = {c.split()[3].removeprefix("s3://semfs-web-1/"): c for c in calls if c.startswith("s3 cp")}
    web = Path(__file__).resolve().parents[2] / "shared" / "semfs" / "web"
    modules = {f"static/js/{m.name}" for m in (web / "js").glob("*.js")}
    assert "static/js/main.js" in modules and len(modules) > 10  # the page's ES modules, each one uploaded
    assert set(copied) == {
        "index.html",
        *modules,
        "static/style.css",
        "static/favicon.svg",
        "favicon.ico",
        "static/config.json",
    }
    assert copied["index.html"].split()[2].endswith("shared/semfs/web/index.html")
    assert all("--content-type text/javascript; charset=utf-8" in copied[m] for m in modules)
    assert "--cache-control no-store" in copied["static/config.json"]
    config = json.loads((tmp_path / "calls.log.config").read_text())
    assert config == {
        "api": "https://api1.execute-api.eu-west-1.amazonaws.com",
        "uploads": "presigned",
        "auth": {
            "client_id": "client-1",
            "scope": "openid email",
            "authorize_url": f"{hosted}/oauth2/authorize",
            "token_url": f"{hosted}/oauth2/token",
            "logout_url": f"{hosted}/logout",
        },
    }
    assert any(c.startswith("cloudfront create-invalidation --distribution-id E2DIST") for c in calls)
    assert "web page: https://d111.cloudfront.net/" in out
    # a stack with its own OIDC issuer: nothing uploaded until the page's sign-in is named
    code, out, calls = _post_deploy(tmp_path, key="sk-1", web_bucket="semfs-web-1")
    assert code == 1 and "web page: NOT uploaded" in out and not any(c.startswith("s3 cp") for c in calls)


def test_post_deploy_never_replaces_another_applications_rule_set_unasked(tmp_path: Path) -> None:
    code, out, calls = _post_deploy(tmp_path, rule_set="semfs-dev", active="helpdesk", key="sk-1")
    assert code == 1 and "NOT activated" in out and "helpdesk" in out
    assert not any("set-active-receipt-rule-set" in c for c in calls)
    code, out, calls = _post_deploy(tmp_path, rule_set="semfs-dev", active="helpdesk", key="sk-1", replace="1")
    assert code == 0 and any("set-active-receipt-rule-set --rule-set-name semfs-dev" in c for c in calls)
    code, out, calls = _post_deploy(tmp_path, rule_set="semfs-dev", active="None", key="sk-1")  # none active
    assert code == 0 and any("set-active-receipt-rule-set" in c for c in calls)
    code, out, calls = _post_deploy(tmp_path, rule_set="semfs-dev", active="semfs-dev", key="sk-1")
    assert code == 0 and not any("set-active-receipt-rule-set" in c for c in calls)


def test_the_refused_key_metric_is_the_one_the_alarm_watches(
    template: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The adapters count a refused key in embedded metric format; CloudWatch makes the metric from the
    function's output only if namespace, name and dimensions are what the alarm names."""
    from semfs.observability import count

    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "semfs-embed")
    count("ModelKeyRefused")
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    directive = line["_aws"]["CloudWatchMetrics"][0]
    alarm = template["Resources"]["ModelKeyRefusedAlarm"]["Properties"]
    assert directive["Namespace"] == alarm["Namespace"]
    assert [m["Name"] for m in directive["Metrics"]] == [alarm["MetricName"]]
    assert directive["Dimensions"] == [[d["Name"] for d in alarm["Dimensions"]]]
    assert {d["Name"]: line[d["Name"]] for d in alarm["Dimensions"]} == {
        d["Name"]: d["Value"] for d in alarm["Dimensions"]
    }
    assert line["ModelKeyRefused"] == 1


def test_add_user_sets_the_tenant_and_a_permanent_password_and_says_how_to_get_a_token(tmp_path: Path) -> None:
    """The runbook's token recipe, checked against the calls it makes: an admin-made user with
    custom:tenant, a permanent password (no forced change at first sign-in), and the CLI's
    USER_PASSWORD_AUTH flow the pool client allows."""
    args = ["add-user.sh", "semfs-dev", "ana@acme.example", "acme", "eu-west-1"]
    code, out, calls = _script(tmp_path, args, pool="eu-west-1_abc", password="Correct-Horse-9")
    assert code == 0, out
    create = next(c for c in calls if c.startswith("cognito-idp admin-create-user"))
    assert "--user-pool-id eu-west-1_abc" in create and "Name=custom:tenant,Value=acme" in create
    assert "--message-action SUPPRESS" in create
    assert any(c.startswith("cognito-idp admin-set-user-password") and "--permanent" in c for c in calls)
    assert "--auth-flow USER_PASSWORD_AUTH" in out and "--client-id cli-client-1" in out
    assert "Correct-Horse-9" not in out  # the password is never echoed

    code, out, calls = _script(tmp_path, ["add-user.sh", "semfs-dev", "x@acme.example", "../acme", "eu-west-1"])
    assert code == 2 and "tenant '../acme'" in out and not any("cognito-idp" in c for c in calls)
    code, out, _ = _script(tmp_path, args, password="Correct-Horse-9")  # a stack with JwtIssuer set
    assert code == 1 and "no Cognito user pool" in out


def test_the_api_is_throttled_and_the_llm_routes_more(template: dict[str, Any], translated: dict[str, Any]) -> None:
    """Without throttling one caller can spend the account's Lambda concurrency and the LLM budget: the
    whole API has a rate, and the routes that call the LLM a lower one, on routes that exist."""
    api = template["Resources"]["HttpApi"]["Properties"]
    assert api["DefaultRouteSettings"]["ThrottlingRateLimit"] == {"Ref": "ApiRateLimit"}
    assert set(api["RouteSettings"]) == {"POST /ask", "POST /context"}
    paths = translated["Resources"]["HttpApi"]["Properties"]["Body"]["paths"]  # the API's OpenAPI body
    routes = {f"{method.upper()} {path}" for path, methods in paths.items() for method in methods}
    assert set(api["RouteSettings"]) <= routes
    assert template["Parameters"]["AskRateLimit"]["Default"] < template["Parameters"]["ApiRateLimit"]["Default"]


def test_dynamodb_grants_follow_the_calls_each_function_makes(translated: dict[str, Any]) -> None:
    """The CRUD policy templates granted Scan, DeleteItem and BatchWriteItem to functions that never call
    them. From the adapters' calls: a deleted file is a tombstone (no DeleteItem on the files table), only
    maintenance walks every tenant (Scan), only mail writes a thread's items in batches, and Enrich a file's
    changed entity items (issue 54.5: batched, where each was a transaction of its own), only a tag
    merge (the API, maintenance), a purged file (the API, maintenance) or a file enriched again that no
    longer names an entity (Enrich) deletes an entity-table item, and only a tenant's erasure (maintenance)
    finds and deletes a tenant's records and entity items in batches. Every call the AWS tests make is also checked
    against these roles (iam_check.py)."""

    def grants(function: str, table: str) -> set[str]:
        role = translated["Resources"][function]["Properties"]["Role"]["Fn::GetAtt"][0]
        found: set[str] = set()
        for st in policy_statements(translated["Resources"][role]["Properties"].get("Policies", [])):
            if table in json.dumps(st.get("Resource")):
                actions = st["Action"] if isinstance(st["Action"], list) else [st["Action"]]
                found |= {a for a in actions if a.startswith("dynamodb:")}
        return found

    functions = _functions(translated)
    assert {f for f in functions if "dynamodb:Scan" in grants(f, "FilesTable")} == {"ReembedFunction"}
    assert not any("dynamodb:DeleteItem" in grants(f, "FilesTable") for f in functions)
    # only a tenant's erasure (the maintenance function, on an administrator's invocation) deletes records
    assert {f for f in functions if "dynamodb:BatchWriteItem" in grants(f, "FilesTable")} == {"ReembedFunction"}
    assert {f for f in functions if "dynamodb:BatchWriteItem" in grants(f, "EntityTable")} == {
        "IngestEmailFunction",
        "EnrichFunction",
        "ReembedFunction",
    }
    assert {f for f in functions if "dynamodb:DeleteItem" in grants(f, "EntityTable")} == {
        "EnrichFunction",
        "SearchApiFunction",
        "ReembedFunction",
    }
    assert {f for f in functions if "dynamodb:Scan" in grants(f, "EntityTable")} == {"ReembedFunction"}


def test_cors_lets_in_the_web_pages_origin_alone(template: dict[str, Any]) -> None:
    """No CORS meant a web page on its own origin could call neither the API nor the bucket's presigned
    upload; '*' would let any site's script use a signed-in person's token. One origin: the page the stack
    hosts, or the one WebOrigin names instead; none when there is no page."""
    api = template["Resources"]["HttpApi"]["Properties"]["CorsConfiguration"]
    bucket = template["Resources"]["Bucket"]["Properties"]["CorsConfiguration"]
    page = {"Fn::If": ["HasWebOrigin", {"Ref": "WebOrigin"}, {"Fn::Sub": "https://${WebDistribution.DomainName}"}]}
    for cors in (api, bucket):
        assert cors["Fn::If"][0] == "AllowBrowsers" and cors["Fn::If"][2] == {"Ref": "AWS::NoValue"}
    assert template["Conditions"]["AllowBrowsers"] == {
        "Fn::Or": [{"Condition": "HostWeb"}, {"Condition": "HasWebOrigin"}]
    }
    assert api["Fn::If"][1]["AllowOrigins"] == [page]
    assert bucket["Fn::If"][1]["CorsRules"][0]["AllowedOrigins"] == [page]
    assert bucket["Fn::If"][1]["CorsRules"][0]["AllowedMethods"] == ["POST"]  # presigned POST uploads only
    assert template["Parameters"]["WebOrigin"]["Default"] == ""
    assert template["Parameters"]["WebOrigin"]["AllowedPattern"].startswith("^(https://")  # never "*"


def test_the_web_page_is_served_privately_through_cloudfront(template: dict[str, Any]) -> None:
    """Issue 28.5: nothing hosted web/. The page is now in a bucket nobody may read but the stack's own
    distribution (origin access control signs its requests; the bucket policy names the distribution), over
    HTTPS only, with the managed security-headers policy; no website endpoint, no public access."""
    resources = template["Resources"]
    bucket = resources["WebBucket"]
    assert bucket["Condition"] == "HostWeb" and "WebsiteConfiguration" not in bucket["Properties"]
    assert set(bucket["Properties"]["PublicAccessBlockConfiguration"].values()) == {True}
    oac = resources["WebOriginAccessControl"]["Properties"]["OriginAccessControlConfig"]
    assert (oac["OriginAccessControlOriginType"], oac["SigningBehavior"], oac["SigningProtocol"]) == (
        "s3",
        "always",
        "sigv4",
    )
    dist = resources["WebDistribution"]["Properties"]["DistributionConfig"]
    (origin,) = dist["Origins"]
    assert origin["DomainName"] == {"Fn::GetAtt": ["WebBucket", "RegionalDomainName"]}
    assert origin["OriginAccessControlId"] == {"Fn::GetAtt": ["WebOriginAccessControl", "Id"]}
    assert origin["S3OriginConfig"] == {"OriginAccessIdentity": ""}  # OAC, not the legacy identity
    behaviour = dist["DefaultCacheBehavior"]
    assert behaviour["ViewerProtocolPolicy"] == "redirect-to-https" and behaviour["AllowedMethods"] == ["GET", "HEAD"]
    assert behaviour["ResponseHeadersPolicyId"] == {"Ref": "WebHeadersPolicy"}
    statements = resources["WebBucketPolicy"]["Properties"]["PolicyDocument"]["Statement"]
    (allow,) = [st for st in statements if st["Effect"] == "Allow"]
    assert allow["Principal"] == {"Service": "cloudfront.amazonaws.com"} and allow["Action"] == "s3:GetObject"
    assert "${WebDistribution}" in allow["Condition"]["StringEquals"]["AWS:SourceArn"]["Fn::Sub"]
    assert any(st["Effect"] == "Deny" and "aws:SecureTransport" in json.dumps(st) for st in statements)


def test_cloudfront_sends_the_pages_content_security_policy_as_the_local_host_does(template: dict[str, Any]) -> None:
    """Issue 54.6: the same policy as ``semfs serve`` sends (``server.page_policy``), with AWS's origins: the API,
    the bucket presigned uploads go to and PDFs are previewed from, the hosted UI's token endpoint; the
    managed policy's other headers kept. The browser test runs the page under the local one and finds no
    violation, so the page is known to live within it."""
    import re

    from semfs.server import page_policy

    config = template["Resources"]["WebHeadersPolicy"]["Properties"]["ResponseHeadersPolicyConfig"]
    headers = config["SecurityHeadersConfig"]
    text, names = headers["ContentSecurityPolicy"]["ContentSecurityPolicy"]["Fn::Sub"]
    assert headers["ContentSecurityPolicy"]["Override"] is True
    values = {"AWS::Region": "eu-west-1", "SignIn": " https://signin.example"}
    assert names["SignIn"]["Fn::If"][0] == "WebSignIn"  # without a hosted UI, no sign-in origin
    rendered = re.sub(r"\$\{([^}]+)\}", lambda m: values[m.group(1)], text)
    api, bucket = "https://*.execute-api.eu-west-1.amazonaws.com", "https://*.s3.eu-west-1.amazonaws.com"
    assert rendered == page_policy(connect=[api, bucket, "https://signin.example"], frames=[bucket])
    assert headers["FrameOptions"]["FrameOption"] == "DENY" and headers["ContentTypeOptions"]["Override"] is True
    assert headers["StrictTransportSecurity"]["AccessControlMaxAgeSec"] >= 31536000


def test_the_page_signs_in_through_the_hosted_ui_with_the_code_flow_only(template: dict[str, Any]) -> None:
    """A public client (no secret in a page) that may use the authorization code flow alone (the page adds
    PKCE), never the implicit flow, and is sent back to the page's own address only."""
    client = template["Resources"]["UserPoolClient"]["Properties"]
    assert client["GenerateSecret"] is False
    assert client["AllowedOAuthFlows"] == {"Fn::If": ["WebSignIn", ["code"], {"Ref": "AWS::NoValue"}]}
    assert client["AllowedOAuthScopes"]["Fn::If"][1] == ["openid", "email"]
    page = {
        "Fn::If": ["HasWebOrigin", {"Fn::Sub": "${WebOrigin}/"}, {"Fn::Sub": "https://${WebDistribution.DomainName}/"}]
    }
    assert client["CallbackURLs"]["Fn::If"][1] == [page] and client["LogoutURLs"]["Fn::If"][1] == [page]
    domain = template["Resources"]["UserPoolDomain"]
    assert domain["Condition"] == "HostedUi" and "StackId" in json.dumps(domain["Properties"]["Domain"])
    assert template["Conditions"]["HostedUi"] == {"Fn::Or": [{"Condition": "WebSignIn"}, {"Condition": "McpSignIn"}]}
    assert template["Conditions"]["WebSignIn"]["Fn::And"][0] == {"Condition": "CreateUserPool"}
    assert {"WebUrl", "WebBucketName", "WebDistributionId", "SignInUrl"} <= set(template["Outputs"])


def test_every_feature_switch_is_a_parameter_that_reaches_every_function(
    template: dict[str, Any], translated: dict[str, Any]
) -> None:
    """Each ``SEMFS_ENABLE_*`` a deploying team may turn off is an ``Enable*`` parameter (true by default)
    in every function's environment, which stays under Lambda's 4 KB for all its variables together."""
    from semfs.config import Settings
    from semfs.domain.features import FEATURES

    env = template["Globals"]["Function"]["Environment"]["Variables"]
    for feature in FEATURES:
        variable = "SEMFS_OCR_ENABLED" if feature == "ocr" else f"SEMFS_ENABLE_{feature.upper()}"
        parameter = template["Parameters"][f"Enable{feature.capitalize()}"]
        assert env[variable] == {"Ref": f"Enable{feature.capitalize()}"}
        assert parameter["Default"] == "true" and parameter["AllowedValues"] == ["true", "false"]

    def size(variables: dict[str, Any]) -> int:  # a switch's value is "false" at most; another reference,
        # a name, URL or ARN the stack makes, is taken as 120 characters (a queue URL is ~110)
        switches = [{"Ref": p} for p in template["Parameters"] if p.startswith("Enable")]
        return sum(len(k) + (len(v) if isinstance(v, str) else 5 if v in switches else 120)
                   for k, v in variables.items())  # fmt: skip

    for res in translated["Resources"].values():
        if res["Type"] == "AWS::Lambda::Function":
            assert size(res["Properties"].get("Environment", {}).get("Variables", {})) < 4096
    Settings(**{"backend": "local", "enable_ingest": "false", "ocr_enabled": "false"})  # the strings parse
