"""IAM, enforced in the offline AWS tests: every AWS call a function makes is checked against *that
function's role* as the SAM translator renders it from ``template.yaml``.

moto accepts any call from anyone, so a function whose role lacks a permission passes every moto test
and fails on its first real invocation (the API's presigned uploads and the deletions did). Here each
handler runs with its function's name in a context variable; a hook on botocore's ``_make_api_call``
and on opensearch-py's HTTP connection turns every call it makes into the IAM actions and resource
ARNs the real service authorises (``required``), and evaluates them against the function's
statements: Allow statements with IAM wildcards on actions and resources. A call its role does not
allow raises ``AccessDenied`` as AWS would, and is recorded, so a handler that swallows the error
still fails the test.

A call to the search domain must also pass the domain's access policy, a resource policy: its Allow
statements' actions and resources, and their ``ArnLike aws:PrincipalArn`` condition evaluated against the
function's role ARN as IAM forms it (``arn:aws:iam::<account>:role<Path><name>``, the path from the role the
translator renders).

What it cannot see, said plainly: IAM conditions in identity policies (none of semfs's statements use one),
the other resource policies (the bucket's TLS-only policy), SCPs and permission boundaries, and calls made by
the services themselves (S3 → SQS notifications, Step Functions → Lambda).
"""

from __future__ import annotations

import contextvars
import fnmatch
import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

ROOT = Path(__file__).resolve().parents[2]
REGION = "eu-west-1"
ACCOUNT = "123456789012"
DOMAIN = "semfs-search"  # the managed domain's physical name in these tests

CURRENT_FUNCTION: contextvars.ContextVar[str | None] = contextvars.ContextVar("semfs_function", default=None)


def translated_template() -> dict[str, Any]:
    """template.yaml through the SAM translator, offline (no managed-policy lookups)."""
    from samtranslator.translator.transform import transform
    from samtranslator.yaml_helper import yaml_parse

    template = yaml_parse((ROOT / "template.yaml").read_text())
    for name, resource in template["Resources"].items():
        props = resource.get("Properties", {})
        for key in ("CodeUri", "ContentUri", "DefinitionUri"):
            if isinstance(props.get(key), str):  # the translator needs packaged (s3://) locations
                props[key] = f"s3://semfs-artifacts/{name}/{key}"

    class NoManagedPolicies:
        def load(self) -> dict[str, str]:
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", REGION)
    out: dict[str, Any] = transform(template, {"AWS::Region": REGION}, NoManagedPolicies())
    return out


@dataclass
class Names:
    """The physical names the offline stack uses for the template's resources."""

    physical: dict[str, str] = field(default_factory=dict)

    def ref(self, logical: str) -> str:
        """What ``!Ref`` gives: a name for tables, buckets and buses; an ARN for a state machine."""
        pseudo = {"AWS::Partition": "aws", "AWS::Region": REGION, "AWS::AccountId": ACCOUNT, "AWS::StackName": "semfs"}
        if logical == "ProcessFileStateMachine":
            return self.attr(logical, "Arn")
        return pseudo.get(logical) or self.physical.get(logical) or f"<{logical}>"

    def attr(self, logical: str, attr: str) -> str:
        name = self.physical.get(logical) or f"<{logical}>"
        arns = {
            "SearchDomain": f"arn:aws:es:{REGION}:{ACCOUNT}:domain/{DOMAIN}",
            "ProcessFileStateMachine": f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:{name}",
        }
        if attr == "Name":
            return name
        if logical in arns:
            return arns[logical]
        if logical.endswith("Table"):
            return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"
        if logical.endswith(("Queue", "DLQ")):
            return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}"
        if logical == "EventBus":
            return f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{name}"
        return f"<{logical}.{attr}>"


def render(value: Any, names: Names) -> list[str]:
    """A policy Resource (intrinsics included) as ARN patterns; ``Fn::If`` takes the managed-domain branch."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [r for v in value for r in render(v, names)]
    if not isinstance(value, dict):
        return []
    if "Ref" in value:
        return [] if value["Ref"] == "AWS::NoValue" else [names.ref(value["Ref"])]
    if "Fn::GetAtt" in value:
        logical, attr = value["Fn::GetAtt"] if isinstance(value["Fn::GetAtt"], list) else value["Fn::GetAtt"].split(".")
        return [names.attr(logical, attr)]
    if "Fn::If" in value:
        return render(value["Fn::If"][1], names)
    if "Fn::Join" in value:
        sep, parts = value["Fn::Join"]
        return [sep.join(p for part in parts for p in render(part, names))]
    if "Fn::Sub" in value:
        sub = value["Fn::Sub"]
        text, variables = (sub, {}) if isinstance(sub, str) else (sub[0], sub[1])
        out = text
        for key, var in variables.items():
            out = out.replace("${" + key + "}", render(var, names)[0])
        while "${" in out:
            start = out.index("${")
            end = out.index("}", start)
            token = out[start + 2 : end]
            logical, _, attr = token.partition(".")
            out = out[:start] + (names.attr(logical, attr) if attr else names.ref(logical)) + out[end + 1 :]
        return [out]
    return []


def statements(doc: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(doc, dict):
        if "Effect" in doc and "Action" in doc:
            found.append(doc)
        else:
            for value in doc.values():
                found += statements(value)
    elif isinstance(doc, list):
        for value in doc:
            found += statements(value)
    return found


def _as_list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else [v]


@cache
def _code_folders() -> dict[str, str]:
    """Each function's handler folder, from its ``CodeUri`` in template.yaml (``functions/<name>/``); a plain
    function whose code is in the template (``ZipFile``) by its logical name (``TokenClaimsFunction``:
    ``token_claims``)."""
    import re

    from samtranslator.yaml_helper import yaml_parse

    resources = yaml_parse((ROOT / "template.yaml").read_text())["Resources"]
    inline = {
        logical: re.sub(r"(?<!^)(?=[A-Z])", "_", logical.removesuffix("Function")).lower()
        for logical, r in resources.items()
        if r["Type"] == "AWS::Lambda::Function" and "ZipFile" in r["Properties"].get("Code", {})
    }
    return inline | {
        logical: str(r["Properties"]["CodeUri"]).rstrip("/").rsplit("/", 1)[-1]
        for logical, r in resources.items()
        if r["Type"] == "AWS::Serverless::Function"
    }


@cache
def function_grants(names_json: str) -> dict[str, list[tuple[list[str], list[str]]]]:
    """Per handler folder (``functions/<name>``): its role's Allow statements as (actions, resource patterns)."""
    names = Names(json.loads(names_json))
    template = translated_template()
    sam = {
        logical: r
        for logical, r in template["Resources"].items()
        if r["Type"] == "AWS::Lambda::Function" and "Role" in r["Properties"]
    }
    grants: dict[str, list[tuple[list[str], list[str]]]] = {}
    for logical, fn in sam.items():
        folder = _code_folders()[logical]
        role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
        policies = template["Resources"][role]["Properties"].get("Policies", [])
        grants[folder] = [
            ([a.lower() for a in _as_list(st["Action"])], render(st.get("Resource", "*"), names))
            for st in statements(policies)
            if st["Effect"] == "Allow"
        ]
    return grants


@cache
def role_arns(names_json: str) -> dict[str, str]:
    """Per handler folder: its role's ARN as IAM forms it, path included (the name is CloudFormation's)."""
    names = Names(json.loads(names_json))
    template = translated_template()
    arns: dict[str, str] = {}
    for logical, fn in template["Resources"].items():
        if fn["Type"] != "AWS::Lambda::Function" or "Role" not in fn["Properties"]:
            continue
        role = fn["Properties"]["Role"]["Fn::GetAtt"][0]
        path = (render(template["Resources"][role]["Properties"].get("Path", "/"), names) or ["/"])[0]
        arns[_code_folders()[logical]] = f"arn:aws:iam::{ACCOUNT}:role{path}semfs-{role}-0TESTSUFFIX"
    return arns


@cache
def domain_statements(names_json: str) -> list[tuple[list[str], list[str], list[str] | None]]:
    """The search domain's access policy: its Allow statements as (actions, resources, the principal ARN
    patterns its ``ArnLike aws:PrincipalArn`` condition admits, or None for no such condition)."""
    names = Names(json.loads(names_json))
    policy = translated_template()["Resources"]["SearchDomain"]["Properties"]["AccessPolicies"]
    found: list[tuple[list[str], list[str], list[str] | None]] = []
    for st in statements(policy):
        if st["Effect"] != "Allow":
            continue
        condition = st.get("Condition", {})
        unknown = set(condition) - {"ArnLike"} or set(condition.get("ArnLike", {})) - {"aws:PrincipalArn"}
        assert not unknown, f"the domain policy's condition {unknown} is not evaluated here: teach iam_check.py"
        patterns = render(condition["ArnLike"]["aws:PrincipalArn"], names) if condition else None
        found.append(([a.lower() for a in _as_list(st["Action"])], render(st.get("Resource", "*"), names), patterns))
    return found


def domain_allows(names_json: str, principal: str, action: str, resource: str) -> bool:
    """Whether the domain's access policy admits ``principal`` sending ``action`` to ``resource``."""
    return any(
        any(fnmatch.fnmatchcase(action.lower(), a) for a in actions)
        and any(fnmatch.fnmatchcase(resource, r) for r in resources)
        and (patterns is None or any(fnmatch.fnmatchcase(principal, p) for p in patterns))
        for actions, resources, patterns in domain_statements(names_json)
    )


def allowed(grants: list[tuple[list[str], list[str]]], action: str, resource: str) -> bool:
    action = action.lower()
    return any(
        any(fnmatch.fnmatchcase(action, a) for a in actions)
        and any(fnmatch.fnmatchcase(resource, r) for r in resources)
        for actions, resources in grants
    )


# ---------------------------------------------------------------------------------------------
# What IAM authorises for a call: (action, resource ARN) pairs


def _s3(op: str, p: dict[str, Any]) -> list[tuple[str, str]]:
    bucket = p.get("Bucket", "")
    obj = f"arn:aws:s3:::{bucket}/{p.get('Key', '')}"
    whole = f"arn:aws:s3:::{bucket}"
    match op:
        case "HeadObject" | "GetObject":
            return [("s3:GetObject", obj)]
        case "ListObjectsV2" | "ListObjects":
            return [("s3:ListBucket", whole)]
        case "ListObjectVersions":
            return [("s3:ListBucketVersions", whole)]
        case "DeleteObjects":  # a version given: s3:DeleteObjectVersion, as for DeleteObject
            return [
                ("s3:DeleteObjectVersion" if o.get("VersionId") else "s3:DeleteObject", f"{whole}/{o['Key']}")
                for o in p["Delete"]["Objects"]
            ]
        case "DeleteObject":
            action = "s3:DeleteObjectVersion" if p.get("VersionId") else "s3:DeleteObject"
            return [(action, obj)]
        case "CopyObject":
            src = p["CopySource"]
            src_path = f"{src['Bucket']}/{src['Key']}" if isinstance(src, dict) else unquote(src.lstrip("/"))
            return [("s3:PutObject", obj), ("s3:GetObject", f"arn:aws:s3:::{src_path}")]
        case "CreateMultipartUpload" | "UploadPart" | "CompleteMultipartUpload":
            return [("s3:PutObject", obj)]
        case "AbortMultipartUpload":
            return [("s3:AbortMultipartUpload", obj)]
        case "HeadBucket":
            return [("s3:ListBucket", whole)]
    return [(f"s3:{op}", obj if "Key" in p else whole)]


def _ddb_table(name: str) -> str:
    return f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


_TRANSACT = {"Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "ConditionCheck": "ConditionCheckItem"}


def _dynamodb(op: str, p: dict[str, Any]) -> list[tuple[str, str]]:
    if op in ("BatchWriteItem", "BatchGetItem"):
        return [(f"dynamodb:{op}", _ddb_table(t)) for t in p["RequestItems"]]
    if op == "TransactWriteItems":
        return [
            (f"dynamodb:{_TRANSACT[kind]}", _ddb_table(body["TableName"]))
            for item in p["TransactItems"]
            for kind, body in item.items()
        ]
    if op == "TransactGetItems":
        return [("dynamodb:GetItem", _ddb_table(i["Get"]["TableName"])) for i in p["TransactItems"]]
    table = _ddb_table(p.get("TableName", "*"))
    if p.get("IndexName"):
        table += f"/index/{p['IndexName']}"
    return [(f"dynamodb:{op}", table)]


def _queue_arn(url: str) -> str:
    return f"arn:aws:sqs:{REGION}:{ACCOUNT}:{url.rstrip('/').rsplit('/', 1)[-1]}"


def _secret_arn(secret: str) -> str:
    """What IAM evaluates a secret named by its name against: its ARN, the name and Secrets Manager's six
    random characters (ListSecrets names none: "*")."""
    if secret == "*" or secret.startswith("arn:"):
        return secret
    return f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{secret}-AbCdEf"


def required(service: str, op: str, p: dict[str, Any]) -> list[tuple[str, str]]:
    match service:
        case "s3":
            return _s3(op, p)
        case "dynamodb":
            return _dynamodb(op, p)
        case "states":
            arn = p.get("stateMachineArn") or p.get("executionArn") or "*"
            return [(f"states:{op}", arn)]
        case "sqs":
            return [(f"sqs:{op}", _queue_arn(p.get("QueueUrl", "")))]
        case "events":
            buses = {e.get("EventBusName", "default") for e in p.get("Entries", [])} or {"default"}
            return [(f"events:{op}", f"arn:aws:events:{REGION}:{ACCOUNT}:event-bus/{b}") for b in buses]
        case "secretsmanager":
            return [(f"secretsmanager:{op}", _secret_arn(str(p.get("SecretId") or p.get("Name") or "*")))]
    return [(f"{service}:{op}", "*")]  # textract and the like authorise on "*"


@dataclass
class Enforcer:
    names: Names
    denied: list[str] = field(default_factory=list)
    checked: int = 0
    calls: Counter[str] = field(default_factory=Counter)  # "function service:Operation" → how many

    def check(self, function: str, pairs: list[tuple[str, str]]) -> str | None:
        grants = function_grants(json.dumps(self.names.physical, sort_keys=True)).get(function)
        if grants is None:
            return f"{function}: no such function in template.yaml"
        names = json.dumps(self.names.physical, sort_keys=True)
        for action, resource in pairs:
            self.checked += 1
            if not allowed(grants, action, resource):
                message = f"{function} may not {action} on {resource}"
                self.denied.append(message)
                return message
            role = role_arns(names)[function]
            if action.startswith("es:") and not domain_allows(names, role, action, resource):
                message = f"the search domain's access policy refuses {function} ({role}) {action} on {resource}"
                self.denied.append(message)
                return message
        return None


@contextmanager
def enforced(names: dict[str, str]) -> Iterator[Enforcer]:
    """Check every botocore and OpenSearch call made while a handler runs (see the module docstring)."""
    from botocore.client import BaseClient
    from botocore.exceptions import ClientError
    from opensearchpy.connection import RequestsHttpConnection
    from opensearchpy.exceptions import AuthorizationException

    enforcer = Enforcer(Names(names))
    real_call = BaseClient._make_api_call
    real_http = RequestsHttpConnection.perform_request

    def make_api_call(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        function = CURRENT_FUNCTION.get()
        if function is not None:
            service = self.meta.service_model.signing_name or self.meta.service_model.endpoint_prefix
            enforcer.calls[f"{function} {service}:{operation_name}"] += 1
            denied = enforcer.check(function, required(service, operation_name, api_params))
            if denied:
                error = {"Error": {"Code": "AccessDenied", "Message": denied}}
                raise ClientError(error, operation_name)
        return real_call(self, operation_name, api_params)

    def perform_request(self: Any, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        function = CURRENT_FUNCTION.get()
        if function is not None:
            action = f"es:ESHttp{method.capitalize()}"
            enforcer.calls[f"{function} {action}"] += 1
            path = urlparse(url).path.lstrip("/")
            denied = enforcer.check(function, [(action, f"arn:aws:es:{REGION}:{ACCOUNT}:domain/{DOMAIN}/{path}")])
            if denied:
                raise AuthorizationException(403, "security_exception", denied)
        return real_http(self, method, url, *args, **kwargs)

    BaseClient._make_api_call = make_api_call  # type: ignore[method-assign]
    RequestsHttpConnection.perform_request = perform_request  # type: ignore[method-assign]
    try:
        yield enforcer
    finally:
        BaseClient._make_api_call = real_call  # type: ignore[method-assign]
        RequestsHttpConnection.perform_request = real_http  # type: ignore[method-assign]


def as_function(name: str, handler: Any) -> Any:
    """``handler`` running as the function deployed from ``functions/<name>``."""

    def run(event: Any, context: Any) -> Any:
        token = CURRENT_FUNCTION.set(name)
        try:
            return handler(event, context)
        finally:
            CURRENT_FUNCTION.reset(token)

    return run
