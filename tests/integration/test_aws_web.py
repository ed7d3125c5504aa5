"""The web page's upload in AWS (issue 28.5): the bytes go to the bucket through a presigned POST, and the
page follows the file by the id the API names for them (``?sha256=``), under the API's role. The presigned
POST itself is checked by moto's S3 (its policy conditions: the key, the size range) the way S3 checks it;
what moto cannot see is the browser's CORS preflight, which the template test checks instead."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from tests.integration.aws_harness import FakeContext, Stack
from tests.integration.test_aws_pipeline import TERMS, api_event

pytestmark = pytest.mark.integration


def _api(stack: Stack, method: str, path: str, query: dict[str, str] | None = None) -> dict[str, Any]:
    stack.cold("search_api")
    return stack.handlers["search_api"].lambda_handler(api_event(method, path, query), FakeContext())  # type: ignore[no-any-return]


def test_a_browser_upload_goes_to_the_bucket_and_is_found_by_the_id_the_api_named(aws_stack: Stack) -> None:
    import requests

    sha = hashlib.sha256(TERMS).hexdigest()
    answer = _api(aws_stack, "POST", "/files", {"filename": "Payment terms.md", "sha256": sha})
    assert answer["statusCode"] == 200, answer
    target = json.loads(answer["body"])
    assert target["key"].startswith("uploads/acme/") and target["status_url"] == f"/files/{target['file_id']}"
    # not there yet: the page waits on 404
    assert _api(aws_stack, "GET", target["status_url"])["statusCode"] == 404
    # the browser's POST: the form's fields, then the file last
    sent = requests.post(target["url"], data=target["fields"], files={"file": ("Payment terms.md", TERMS)}, timeout=30)
    assert sent.status_code in (200, 204), sent.text
    # the bucket's notice → ingest_upload → the pipeline
    out = aws_stack.handlers["ingest_upload"].lambda_handler(aws_stack.sqs_event(), FakeContext())
    assert out == {"batchItemFailures": []}
    (execution,) = aws_stack.executions()
    assert aws_stack.wait(execution["executionArn"])["status"] == "SUCCEEDED"
    found = _api(aws_stack, "GET", target["status_url"])
    assert found["statusCode"] == 200, found
    record = json.loads(found["body"])
    assert (record["file_id"], record["status"], record["filename"]) == (
        target["file_id"],
        "indexed",
        "Payment terms.md",
    )


def test_a_sha256_that_is_not_one_is_refused(aws_stack: Stack) -> None:
    answer = _api(aws_stack, "POST", "/files", {"filename": "x.md", "sha256": "not-a-digest"})
    assert answer["statusCode"] == 400 and "64 lowercase hex" in answer["body"]
