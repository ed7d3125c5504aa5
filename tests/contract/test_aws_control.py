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

    # given: a bus whose rule delivers every semfs event to a queue we can read
    events = boto3.client("events", region_name="eu-west-1")
    sqs = boto3.client("sqs", region_name="eu-west-1")
    events.create_event_bus(Name="semfs-test")
    queue = sqs.create_queue(QueueName="seen")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="all", EventBusName="semfs-test", EventPattern=json.dumps({"source": [{"prefix": ""}]}))
    events.put_targets(Rule="all", EventBusName="semfs-test", Targets=[{"Id": "q", "Arn": queue_arn}])
    # when
    detail = {"tenant_id": "acme", "file_id": "f_1", "outcome": "OK"}
    EventBridgePublisher(aws_settings.model_copy(update={"event_bus": "semfs-test"})).publish("FileIndexed", detail)
    # then: the event arrived with exactly the ids it was given, under its detail type
    (message,) = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    event = json.loads(message["Body"])
    assert (event["detail-type"], event["detail"]) == ("FileIndexed", detail)
    assert event["source"].startswith("semfs")
    # and a bus that does not exist is logged, never raised into the pipeline
    EventBridgePublisher(aws_settings.model_copy(update={"event_bus": "missing"})).publish("FileIndexed", detail)
