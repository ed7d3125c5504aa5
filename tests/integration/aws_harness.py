"""Offline AWS: moto (S3, DynamoDB, Step Functions executing the real ASL, Lambda dispatching to the
real handlers in-process) plus osmem-server for OpenSearch. Used by the AWS integration tests.

Each function runs in an execution environment of its own, as in AWS: its handler is loaded with its own
copy of ``semfs.lambda_support``, so its container (and every adapter's state in it, such as whether the
OpenSearch index was seen to be ready) is built on that function's first invocation and shared with no
other function; each call runs under that function's role (``iam_check``). Before, one container served
every handler, so once Index had made the index ready the search function inherited that, and a
permission only Index had (``es:ESHttpPut``) hid that a fresh stack's search could not start (issue 28).

What these environments still share, said plainly: the process's environment variables (every function
gets the union the tests set, where the template gives each its own), module-level caches outside
``lambda_support`` (boto3 clients by settings), the process's one ``"semfs"`` logger with the one Powertools
handler and formatter every environment's ``Logger`` reuses (``_powertools_handler_first``), and memory (a
real environment has its own process).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.integration.iam_check import as_function, enforced
from tests.waits import CEILING_S

ROOT = Path(__file__).resolve().parents[2]
REGION = "eu-west-1"
ACCOUNT = "123456789012"
STAGE_FUNCTIONS = {
    "Extract": "extract",
    "Ocr": "ocr",
    "OcrWait": "ocr_wait",
    "Enrich": "enrich",
    "Embed": "embed",
    "Index": "index",
    "Finalize": "finalize",
    "MarkFailed": "mark_failed",
}


# the template's resources as the offline stack names them (what the roles' ARNs resolve to)
PHYSICAL = {
    "Bucket": "semfs-test",
    "FilesTable": "semfs-files",
    "EntityTable": "semfs-entities",
    "IdempotencyTable": "semfs-idempotency",
    "ProcessFileStateMachine": "semfs-process-file",
    "UploadQueue": "semfs-uploads",
    "EventBus": "semfs-bus",
    "GateTable": "semfs-gate",
    "AdmissionQueue": "semfs-admission",
    "MaintenanceQueue": "semfs-maintenance",
}
ADMISSION_QUEUE_URL = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/semfs-admission"
MAINTENANCE_QUEUE_URL = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/semfs-maintenance"


def load_handler(name: str) -> ModuleType:
    """Import functions/<name>/app.py under a unique module name (every handler is app.py)."""
    spec = importlib.util.spec_from_file_location(f"semfs_fn_{name}", ROOT / "functions" / name / "app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_environment(name: str) -> ModuleType:
    """``functions/<name>/app.py`` in a cold execution environment of its own: the handler binds a fresh
    copy of ``semfs.lambda_support`` (its ``environment`` attribute), whose container is built on the
    handler's first invocation from what that function may see."""
    import semfs.lambda_support as shared

    _powertools_handler_first()
    spec = importlib.util.spec_from_file_location(shared.__name__, shared.__file__)
    assert spec and spec.loader
    support = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(support)
    sys.modules[shared.__name__] = support  # what the handler's `from semfs.lambda_support import …` binds
    try:
        module = load_handler(name)
    finally:
        sys.modules[shared.__name__] = shared
    module.environment = support  # type: ignore[attr-defined]
    module.lambda_handler = as_function(name, module.lambda_handler)  # under its role (iam_check)
    return module


def _powertools_handler_first() -> None:
    """A second Powertools ``Logger(service="semfs")`` in one process takes the configured logger's *first*
    handler as its own (``Logger._get_handler`` returns ``handlers[0]``, not the handler Powertools added),
    and ``inject_lambda_context`` then calls ``append_keys`` on that handler's formatter. In a real cold
    environment the logger is bare, so the handler is Powertools'. In this test process the CLI's
    ``observability.configure()`` may have put its JSON handler there first (a CLI test earlier in the same
    worker), and every handler then failed with ``'_KeyValueFormatter' object has no attribute
    'append_keys'``. Putting Powertools' handler first gives the new environment what a bare logger would."""
    log = logging.getLogger("semfs")
    own = getattr(log, "powertools_handler", None)
    if own is not None and own in log.handlers and log.handlers[0] is not own:
        log.handlers.remove(own)
        log.handlers.insert(0, own)


FUNCTIONS = [*STAGE_FUNCTIONS.values(), "ingest_upload", "ingest_email", "search_api", "reembed", "admit"]


@dataclass
class FakeContext:
    function_name: str = "semfs-test"
    memory_limit_in_mb: int = 1024
    invoked_function_arn: str = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:semfs-test"
    aws_request_id: str = "00000000-0000-0000-0000-000000000000"

    def get_remaining_time_in_millis(self) -> int:
        return 900_000  # a fresh invocation of the longest function (the maintenance passes read this)


@dataclass
class Stack:
    sfn: Any
    s3: Any
    state_machine_arn: str
    handlers: dict[str, ModuleType]
    sqs: Any = None
    ddb: Any = None
    queue_url: str = ""
    queue_arn: str = ""
    invocations: list[str] = field(default_factory=list)
    iam: Any = None  # the IAM enforcer (iam_check.Enforcer): what was checked and denied
    closed: set[str] = field(default_factory=set)  # executions whose status change was delivered

    def wait(self, execution_arn: str, timeout: float = CEILING_S) -> dict[str, Any]:
        deadline = time.time() + timeout
        while time.time() < deadline:
            desc = self.sfn.describe_execution(executionArn=execution_arn)
            if desc["status"] != "RUNNING":
                return desc  # type: ignore[no-any-return]
            time.sleep(0.05)
        raise TimeoutError(execution_arn)

    def sqs_event(self, queue_url: str | None = None) -> dict[str, Any]:
        """The queued messages (S3 notifications, unless another queue is named) as the Lambda SQS
        event source delivers them. moto honours each message's DelaySeconds."""
        queue_url = queue_url or self.queue_url
        messages = self.sqs.receive_message(QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"]).get(
            "Messages", []
        )
        return {
            "Records": [
                {
                    "messageId": m["MessageId"],
                    "receiptHandle": m["ReceiptHandle"],
                    "body": m["Body"],
                    "attributes": m.get("Attributes", {}),
                    "messageAttributes": {},
                    "md5OfBody": m["MD5OfBody"],
                    "eventSource": "aws:sqs",
                    "eventSourceARN": self.queue_arn.replace("semfs-uploads", queue_url.rsplit("/", 1)[-1]),
                    "awsRegion": REGION,
                }
                for m in messages
            ]
        }

    def admit_waiting(self) -> int:
        """One poll of the admission queue delivered to the admit function, as its event source would
        (what the function reports failed stays queued; the rest is deleted): how many it got."""
        event = self.sqs_event(ADMISSION_QUEUE_URL)
        if not event["Records"]:
            return 0
        out = self.handlers["admit"].lambda_handler(event, FakeContext(function_name="semfs-admit"))
        failed = {f["itemIdentifier"] for f in out["batchItemFailures"]}
        for r in event["Records"]:
            if r["messageId"] not in failed:
                self.sqs.delete_message(QueueUrl=ADMISSION_QUEUE_URL, ReceiptHandle=r["receiptHandle"])
        return len(event["Records"])

    def deliver_status_changes(self) -> int:
        """What Step Functions sends EventBridge when an execution closes, delivered to the admit function
        as the template's rule routes it (moto emits no such events; the shape is the documented one,
        ``events/execution_status_change.json``). Looked for among the executions holding a slot (at most
        the bound, however many files there are): how many were delivered."""
        gate = self.ddb.get_item(TableName="semfs-gate", Key={"id": {"S": "process-file"}}, ConsistentRead=True)
        delivered = 0
        for holder in gate.get("Item", {}).get("holders", {}).get("SS", []):
            name = holder.partition("@")[0]  # the gate names each holder with its tenant: name@tenant
            arn = self.state_machine_arn.replace(":stateMachine:", ":execution:") + f":{name}"
            try:
                desc = self.sfn.describe_execution(executionArn=arn)
            except self.sfn.exceptions.ExecutionDoesNotExist:
                continue  # admitted, not started yet
            if desc["status"] == "RUNNING" or arn in self.closed:
                continue
            event = json.loads((ROOT / "events" / "execution_status_change.json").read_text())
            event["resources"] = [arn]
            event["detail"].update(
                executionArn=arn,
                stateMachineArn=self.state_machine_arn,
                name=name,
                status=desc["status"],
                input=desc["input"],
                output=desc.get("output"),
            )
            self.handlers["admit"].lambda_handler(event, FakeContext(function_name="semfs-admit"))
            self.closed.add(arn)
            delivered += 1
        return delivered

    def cold(self, *names: str) -> None:
        """New execution environments for ``names`` (every function if none): what a deploy that changed
        their configuration, or an environment recycled by Lambda, gives."""
        for name in names or tuple(self.handlers):
            self.handlers[name] = load_environment(name)

    def container(self, name: str) -> Any:
        """The container of function ``name``'s environment (built now if it has not run yet)."""
        return self.handlers[name].environment.get_container()

    def inject(self, container: Any, *names: str) -> None:
        """Functions ``names`` use ``container`` (the composition root with a double in it) from now on."""
        for name in names:
            module = self.handlers[name]
            module.environment.get_container = lambda: container
            if hasattr(module, "get_container"):  # a handler that imported the name itself
                module.get_container = lambda: container

    def executions(self) -> list[dict[str, Any]]:
        pages = self.sfn.get_paginator("list_executions").paginate(stateMachineArn=self.state_machine_arn)
        return [e for page in pages for e in page["executions"]]


def _announcing_delete_markers(real: Any) -> Any:
    """S3 announces a delete marker to the bucket's notification targets (``s3:ObjectRemoved:
    DeleteMarkerCreated``, part of ``s3:ObjectRemoved:*``); moto 5 sends nothing for one. In the versioned
    bucket the template declares, a plain DELETE only makes a marker, so without this no removal under
    uploads/ would reach ingest_upload here while it does in AWS."""
    from types import SimpleNamespace

    from moto.s3 import notifications

    def delete_object(
        self: Any, bucket_name: str, key_name: str, version_id: str | None = None, bypass: bool = False
    ) -> Any:
        done, meta = real(self, bucket_name, key_name, version_id, bypass)
        if done and version_id is None and meta.get("delete-marker") == "true":
            marker = SimpleNamespace(name=key_name, size=0, etag="", version_id=meta.get("version-id"))
            event = notifications.S3NotificationEvent.OBJECT_REMOVED_DELETE_MARKER_CREATED_EVENT
            notifications.send_event(self.account_id, event, self.get_bucket(bucket_name), marker)
        return done, meta

    return delete_object


@pytest.fixture
def aws_stack(monkeypatch: pytest.MonkeyPatch, osmem_url: str) -> Iterator[Stack]:
    import boto3
    from moto import mock_aws
    from moto.awslambda_simple.models import LambdaSimpleBackend
    from moto.s3.models import S3Backend

    from semfs.adapters.aws.admission import gate_table_definition
    from semfs.adapters.aws.clients import _session_client
    from semfs.adapters.aws.dynamodb import table_definition
    from semfs.adapters.aws.item_table import entity_table_definition
    from semfs.lambda_support import get_container

    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "SEMFS_BACKEND": "aws",
        "SEMFS_BUCKET": "semfs-test",
        "SEMFS_TABLE": "semfs-files",
        "SEMFS_ENTITY_TABLE": "semfs-entities",
        "SEMFS_OPENSEARCH_ENDPOINT": osmem_url,
        "SEMFS_EMBEDDER": "hash",
        "SEMFS_INDEX_NAME": "semfs-chunks",
        "SEMFS_MAILBOXES": "files@northwind.example=acme",
        "SEMFS_IDEMPOTENCY_TABLE": "semfs-idempotency",
        "SEMFS_OCR_POLL_SECONDS": "0",
        "SEMFS_EVENT_BUS": "semfs-bus",
        "POWERTOOLS_TRACE_DISABLED": "1",
        "POWERTOOLS_METRICS_NAMESPACE": "semfs",
        "SEMFS_STATE_MACHINE_ARN": f"arn:aws:states:{REGION}:{ACCOUNT}:stateMachine:semfs-process-file",
        "SEMFS_GATE_TABLE": "semfs-gate",
        "SEMFS_ADMISSION_QUEUE_URL": ADMISSION_QUEUE_URL,
        "SEMFS_ADMISSION_DELAY_S": "0",
        "SEMFS_MAINTENANCE_QUEUE_URL": MAINTENANCE_QUEUE_URL,
        "SEMFS_SECRET_PREFIX": "semfs/semfs/mail",  # the template's, for a stack called "semfs"
    }
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    _session_client.cache_clear()
    get_container.cache_clear()
    handlers = {name: load_environment(name) for name in FUNCTIONS}
    stack_ref: list[Stack] = []

    def invoke(self: Any, function_name: str, qualifier: Any, body: Any, headers: Any, response_headers: Any) -> bytes:
        name = function_name.rsplit(":", 1)[-1].removeprefix("semfs-")
        stack = stack_ref[0]
        stack.invocations.append(name)
        event = json.loads(body or "{}")
        try:
            result = stack.handlers[name].lambda_handler(event, FakeContext(function_name=f"semfs-{name}"))
            return json.dumps(result).encode()
        except Exception as e:  # what the Lambda service reports for an unhandled error
            response_headers["x-amz-function-error"] = "Unhandled"
            return json.dumps({"errorType": type(e).__name__, "errorMessage": str(e)}).encode()

    # moto's backends are not thread-safe (a TransactWriteItems deep-copies a table another thread is
    # writing: "dictionary changed size during iteration"), and its Step Functions runs each execution in a
    # thread. One lock around each call stands for the service's own consistency; Lambda.Invoke is left
    # out, so the handlers of different executions still run at the same time.
    from botocore.client import BaseClient

    moto_lock = threading.RLock()
    real_call = BaseClient._make_api_call

    def serialised_call(self: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        if operation_name == "Invoke":
            return real_call(self, operation_name, api_params)
        with moto_lock:
            return real_call(self, operation_name, api_params)

    monkeypatch.setattr(BaseClient, "_make_api_call", serialised_call)
    monkeypatch.setattr(LambdaSimpleBackend, "invoke", invoke)
    monkeypatch.setattr(S3Backend, "delete_object", _announcing_delete_markers(S3Backend.delete_object))
    with (
        mock_aws(config={"stepfunctions": {"execute_state_machine": True}, "lambda": {"use_docker": False}}),
        enforced(PHYSICAL) as enforcer,
    ):
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket="semfs-test", CreateBucketConfiguration={"LocationConstraint": REGION})
        # versioned, as template.yaml's bucket is: a plain delete there leaves every earlier version behind
        s3.put_bucket_versioning(Bucket="semfs-test", VersioningConfiguration={"Status": "Enabled"})
        ddb = boto3.client("dynamodb", region_name=REGION)
        ddb.create_table(**table_definition("semfs-files"))
        ddb.create_table(**entity_table_definition("semfs-entities"))
        ddb.create_table(**gate_table_definition("semfs-gate"))
        ddb.create_table(
            TableName="semfs-idempotency",
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        )
        iam = boto3.client("iam", region_name=REGION)
        role = iam.create_role(RoleName="semfs-fn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
        lam = boto3.client("lambda", region_name=REGION)
        arns = {}
        for state, fn in STAGE_FUNCTIONS.items():
            arns[state] = lam.create_function(
                FunctionName=f"semfs-{fn}",
                Runtime="python3.12",
                Role=role,
                Handler="app.lambda_handler",
                Code={"ZipFile": b"stub"},
            )["FunctionArn"]
        definition = (ROOT / "shared" / "semfs" / "statemachine" / "process_file.asl.json").read_text()
        for state, arn in arns.items():
            definition = definition.replace(f"${{{state}FunctionArn}}", arn)
        sfn = boto3.client("stepfunctions", region_name=REGION)
        sm = sfn.create_state_machine(name="semfs-process-file", definition=definition, roleArn=role)
        assert sm["stateMachineArn"] == env["SEMFS_STATE_MACHINE_ARN"]
        # uploads/ → SQS, as template.yaml wires it: the handler receives what S3 really sends
        sqs = boto3.client("sqs", region_name=REGION)
        queue_url = sqs.create_queue(QueueName="semfs-uploads")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        s3.put_bucket_notification_configuration(
            Bucket="semfs-test",
            NotificationConfiguration={
                "QueueConfigurations": [
                    {
                        "QueueArn": queue_arn,
                        "Events": ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"],
                        "Filter": {"Key": {"FilterRules": [{"Name": "prefix", "Value": "uploads/"}]}},
                    }
                ]
            },
        )
        assert sqs.create_queue(QueueName="semfs-admission")["QueueUrl"] == ADMISSION_QUEUE_URL
        assert sqs.create_queue(QueueName="semfs-maintenance")["QueueUrl"] == MAINTENANCE_QUEUE_URL
        sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=0)  # drain the s3:TestEvent
        sqs.purge_queue(QueueUrl=queue_url)
        stack = Stack(
            sfn=sfn,
            s3=s3,
            state_machine_arn=sm["stateMachineArn"],
            handlers=handlers,
            sqs=sqs,
            ddb=ddb,
            queue_url=queue_url,
            queue_arn=queue_arn,
            iam=enforcer,
        )
        stack_ref.append(stack)
        yield stack
        assert not enforcer.denied, "calls the functions' roles do not allow:\n" + "\n".join(enforcer.denied)
    get_container.cache_clear()
    _session_client.cache_clear()
