"""StepFunctionsStarter and EventBridgePublisher on moto."""

from __future__ import annotations

import json

import pytest

from semfs.config import Settings

pytestmark = pytest.mark.contract


def test_starting_the_same_execution_name_twice_is_a_no_op(aws_settings: Settings) -> None:
    import boto3

    from semfs.adapters.aws.stepfunctions import StepFunctionsStarter

    sfn = boto3.client("stepfunctions", region_name="eu-west-1")
    iam = boto3.client("iam", region_name="eu-west-1")
    role = iam.create_role(RoleName="sfn", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    definition = {"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}}
    arn = sfn.create_state_machine(name="pf", definition=json.dumps(definition), roleArn=role)["stateMachineArn"]
    starter = StepFunctionsStarter(aws_settings.model_copy(update={"state_machine_arn": arn}))
    starter.start("pf-abc", {"tenant_id": "acme", "file_id": "f_1"})
    starter.start("pf-abc", {"tenant_id": "acme", "file_id": "f_1"})  # at-least-once redelivery
    executions = sfn.list_executions(stateMachineArn=arn)["executions"]
    assert [e["name"] for e in executions] == ["pf-abc"]
    assert json.loads(sfn.describe_execution(executionArn=executions[0]["executionArn"])["input"]) == {
        "tenant_id": "acme",
        "file_id": "f_1",
    }


def test_events_carry_ids_only_and_failures_do_not_raise(aws_settings: Settings) -> None:
    import boto3

    from semfs.adapters.aws.eventbridge import EventBridgePublisher

    events = boto3.client("events", region_name="eu-west-1")
    events.create_event_bus(Name="semfs-test")
    EventBridgePublisher(aws_settings.model_copy(update={"event_bus": "semfs-test"})).publish(
        "FileIndexed", {"tenant_id": "acme", "file_id": "f_1", "outcome": "OK"}
    )
    # a bus that does not exist: logged, never raised into the pipeline
    EventBridgePublisher(aws_settings.model_copy(update={"event_bus": "missing"})).publish("FileIndexed", {})
