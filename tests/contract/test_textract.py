"""TextractOcr on botocore's Stubber with real response shapes (moto's Textract returns no blocks)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.stub import ANY, Stubber

from semfs.adapters.aws.textract import TextractOcr, pages_from_blocks
from semfs.config import Settings
from semfs.domain.errors import PermanentError, RetryableError
from semfs.domain.outcomes import Outcome
from tests import ocr_corpus as oc

pytestmark = pytest.mark.contract


def line(text: str, page: int = 1) -> dict[str, Any]:
    return {"BlockType": "LINE", "Text": text, "Confidence": 99.1, "Page": page, "Id": f"l{page}{len(text)}"}


def word(text: str, conf: float, page: int = 1) -> dict[str, Any]:
    return {"BlockType": "WORD", "Text": text, "Confidence": conf, "Page": page, "Id": f"w{page}{text}"}


@pytest.fixture
def textract() -> Iterator[tuple[TextractOcr, Stubber]]:
    import boto3

    client = boto3.client("textract", region_name="eu-west-1", aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(client) as stub:
        yield TextractOcr(Settings(bucket="semfs-test", aws_region="eu-west-1"), textract_client=client), stub
        stub.assert_no_pending_responses()


def test_blocks_to_pages() -> None:
    pages = pages_from_blocks(
        [
            {"BlockType": "PAGE", "Page": 1},
            line("Hello world"),
            word("Hello", 90),
            word("world", 80),
            line("Second page", 2),
            word("Second", 100, 2),
        ]
    )
    assert [(p.page, p.text) for p in pages] == [(1, "Hello world"), (2, "Second page")]
    assert pages[0].confidence == pytest.approx(0.85)


def test_a_single_image_uses_detect_document_text(textract: tuple[TextractOcr, Stubber]) -> None:
    ocr, stub = textract
    blocks = [{"BlockType": "PAGE", "Id": "p"}, line("Invoice 2026-117"), word("Invoice", 98.0), word("2026-117", 96.0)]
    stub.add_response(
        "detect_document_text", {"Blocks": blocks, "DocumentMetadata": {"Pages": 1}}, {"Document": {"Bytes": ANY}}
    )
    page = ocr.recognise(oc.encode(oc.page_image(), "PNG"), 3)
    assert (page.page, page.text) == (3, "Invoice 2026-117") and page.confidence == pytest.approx(0.97)


class FakeS3:
    """head_object only: the size Textract's limits are checked against."""

    def __init__(self, size: int) -> None:
        self.size = size

    def head_object(self, **kwargs: Any) -> dict[str, Any]:
        return {"ContentLength": self.size}


def test_async_job_in_progress_then_succeeded_with_pagination(textract: tuple[TextractOcr, Stubber]) -> None:
    _, stub = textract
    ocr = TextractOcr(Settings(bucket="semfs-test", aws_region="eu-west-1"), stub.client, FakeS3(1000))
    stub.add_response(
        "start_document_text_detection",
        {"JobId": "job-1"},
        {
            "DocumentLocation": {"S3Object": {"Bucket": "semfs-test", "Name": "content/acme/ab/abc"}},
            "ClientRequestToken": "f_abc-a0",  # a retry with the same token gets job-1 again, unbilled
        },
    )
    assert ocr.start_document("content/acme/ab/abc", "application/pdf", 2, request_token="f_abc-a0") == "job-1"
    stub.add_response(
        "get_document_text_detection", {"JobStatus": "IN_PROGRESS"}, {"JobId": "job-1", "MaxResults": 1000}
    )
    assert ocr.poll_document("job-1") is None
    stub.add_response(
        "get_document_text_detection",
        {"JobStatus": "SUCCEEDED", "NextToken": "t2", "Blocks": [line("Page one text"), word("Page", 90)]},
        {"JobId": "job-1", "MaxResults": 1000},
    )
    stub.add_response(
        "get_document_text_detection",
        {"JobStatus": "SUCCEEDED", "Blocks": [line("Page two text", 2), word("two", 70, 2)]},
        {"JobId": "job-1", "MaxResults": 1000, "NextToken": "t2"},
    )
    pages = ocr.poll_document("job-1")
    assert pages is not None and [(p.page, p.text) for p in pages] == [(1, "Page one text"), (2, "Page two text")]


def test_a_job_names_the_topic_its_end_is_announced_on(textract: tuple[TextractOcr, Stubber]) -> None:
    """With the template's topic and role, Textract publishes the job's end (the execution waits for
    it); without them nothing is announced and the state machine polls."""
    _, stub = textract
    topic = "arn:aws:sns:eu-west-1:123456789012:semfs-textract"
    role = "arn:aws:iam::123456789012:role/semfs-textract-publish"
    settings = Settings(bucket="semfs-test", aws_region="eu-west-1", textract_topic_arn=topic, textract_role_arn=role)
    ocr = TextractOcr(settings, stub.client, FakeS3(1000))
    assert ocr.announces_jobs
    stub.add_response(
        "start_document_text_detection",
        {"JobId": "job-2"},
        {
            "DocumentLocation": {"S3Object": {"Bucket": "semfs-test", "Name": "content/acme/ab/abc"}},
            "ClientRequestToken": "f_abc-a1",
            "NotificationChannel": {"SNSTopicArn": topic, "RoleArn": role},
        },
    )
    assert ocr.start_document("content/acme/ab/abc", "application/pdf", 2, request_token="f_abc-a1") == "job-2"
    assert not TextractOcr(Settings(bucket="semfs-test", textract_topic_arn=topic), stub.client).announces_jobs


def test_images_are_not_sent_to_the_async_api(textract: tuple[TextractOcr, Stubber]) -> None:
    ocr, _ = textract
    assert ocr.start_document("content/acme/ab/abc", "image/png", 1) is None


def test_a_failed_job_is_failed_ocr(textract: tuple[TextractOcr, Stubber]) -> None:
    ocr, stub = textract
    stub.add_response(
        "get_document_text_detection",
        {"JobStatus": "FAILED", "StatusMessage": "Unsupported document"},
        {"JobId": "job-2", "MaxResults": 1000},
    )
    with pytest.raises(PermanentError) as info:
        ocr.poll_document("job-2")
    assert info.value.outcome is Outcome.FAILED_OCR and "Unsupported document" in info.value.reason


def test_throttling_is_retryable_and_bad_input_is_not(textract: tuple[TextractOcr, Stubber]) -> None:
    ocr, stub = textract
    stub.add_client_error("get_document_text_detection", service_error_code="ProvisionedThroughputExceededException")
    with pytest.raises(RetryableError):
        ocr.poll_document("job-3")
    stub.add_client_error("detect_document_text", service_error_code="UnsupportedDocumentException")
    with pytest.raises(PermanentError) as info:
        ocr.recognise(oc.encode(oc.page_image(), "PNG"), 1)
    assert info.value.outcome is Outcome.FAILED_OCR
    stub.add_client_error("detect_document_text", service_error_code="ThrottlingException")
    with pytest.raises(RetryableError):
        ocr.recognise(oc.encode(oc.page_image(), "PNG"), 1)


def test_limits_are_checked_before_calling(textract: tuple[TextractOcr, Stubber]) -> None:
    _, stub = textract
    ocr = TextractOcr(Settings(bucket="semfs-test", aws_region="eu-west-1"), stub.client, FakeS3(600 * 1024 * 1024))
    with pytest.raises(PermanentError, match="larger than Textract accepts"):
        ocr.start_document("content/acme/ab/big", "application/pdf", 10)
    with pytest.raises(PermanentError, match="more than Textract accepts"):
        ocr.start_document("content/acme/ab/long", "application/pdf", 3001)


def test_a_long_jobs_blocks_are_let_go_page_by_page() -> None:
    """A 3,000-page job's blocks (each with its geometry) are read one response at a time and dropped: only
    the text is kept. Each block here counts itself alive; when a response is fetched, the blocks of the
    responses before it must be gone."""
    import sys

    alive = {"n": 0}
    most_alive_at_fetch: list[int] = []

    class Block(dict):  # type: ignore[type-arg]
        def __init__(self, **kw: Any) -> None:
            super().__init__(**kw)
            alive["n"] += 1

        def __del__(self) -> None:
            alive["n"] -= 1

    class Textract:
        def __init__(self) -> None:
            self.calls = 0

        def get_document_text_detection(self, **kw: Any) -> dict[str, Any]:
            most_alive_at_fetch.append(alive["n"])
            self.calls += 1
            blocks = [Block(BlockType="LINE", Text=f"line {self.calls}.{i}", Page=self.calls) for i in range(100)]
            blocks += [Block(BlockType="WORD", Text="w", Confidence=90.0, Page=self.calls) for _ in range(100)]
            response: dict[str, Any] = {"JobStatus": "SUCCEEDED", "Blocks": blocks}
            if self.calls < 5:
                response["NextToken"] = f"t{self.calls}"
            return response

    ocr = TextractOcr(Settings(bucket="semfs-test", aws_region="eu-west-1"), Textract(), FakeS3(1000))
    pages = ocr.poll_document("job-1")
    assert pages is not None and [p.page for p in pages] == [1, 2, 3, 4, 5]
    assert pages[4].text.splitlines()[0] == "line 5.0" and abs(pages[0].confidence - 0.9) < 1e-9
    assert sys.implementation.name == "cpython"  # reference counting frees a dropped response at once
    assert most_alive_at_fetch == [0, 0, 0, 0, 0]
