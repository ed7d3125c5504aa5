"""Opt-in end-to-end test against a deployed stack: upload → pipeline → found through the API.

Runs only when SEMFS_E2E_STACK names a deployed CloudFormation stack (real AWS, real costs) and
SEMFS_E2E_TOKEN holds a JWT whose tenant claim is SEMFS_E2E_TENANT (default ``e2e``).
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
import uuid

import pytest

STACK = os.environ.get("SEMFS_E2E_STACK")
pytestmark = [pytest.mark.e2e, pytest.mark.skipif(not STACK, reason="opt-in: set SEMFS_E2E_STACK and SEMFS_E2E_TOKEN")]


def test_upload_is_found_through_the_api() -> None:
    import boto3

    outputs = {
        o["OutputKey"]: o["OutputValue"]
        for o in boto3.client("cloudformation").describe_stacks(StackName=STACK)["Stacks"][0]["Outputs"]
    }
    tenant = os.environ.get("SEMFS_E2E_TENANT", "e2e")
    marker = f"zebra{uuid.uuid4().hex[:10]}"
    body = f"# E2E check\n\nThe {marker} invoice is payable within thirty days.".encode()
    boto3.client("s3").put_object(Bucket=outputs["BucketName"], Key=f"uploads/{tenant}/{marker}.md", Body=body)
    request = urllib.request.Request(
        outputs["ApiUrl"] + "/search",
        method="POST",
        data=json.dumps({"query": marker, "mode": "keyword"}).encode(),
        headers={"Authorization": f"Bearer {os.environ['SEMFS_E2E_TOKEN']}", "Content-Type": "application/json"},
    )
    deadline = time.time() + 300
    while time.time() < deadline:
        with urllib.request.urlopen(request, timeout=30) as response:
            results = json.loads(response.read())["results"]
        if any(r["filename"] == f"{marker}.md" for r in results):
            return
        time.sleep(10)
    pytest.fail("the uploaded file was not searchable within 5 minutes")
