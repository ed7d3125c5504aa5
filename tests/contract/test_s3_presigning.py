"""Issue 47.4: presigned links as S3 takes them. Buckets created since June 2020 refuse Signature Version 2,
and the stack deploys to eu-west-1 and wherever else a team puts it: every upload form and download link is
signed with SigV4 (``AWS4-HMAC-SHA256``) for the bucket's own region, on that region's endpoint. Signing needs
no network: botocore computes it; the rule checked is the one S3 documents for SigV4 query and POST auth."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from semfs.config import Settings

pytestmark = pytest.mark.contract
# the regions a team deploys the template to (it names none: samconfig.toml's is eu-west-1), old and new
REGIONS = ["eu-west-1", "us-east-1", "us-west-2", "eu-central-1", "ap-southeast-1", "ap-south-2", "sa-east-1"]


@pytest.fixture(autouse=True)
def _credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@pytest.mark.parametrize("region", REGIONS)
def test_upload_forms_and_download_links_are_sigv4_for_the_buckets_region(region: str) -> None:
    from semfs.adapters.aws.s3 import S3BlobStore

    store = S3BlobStore(Settings(bucket="semfs-files-123", aws_region=region))
    form = store.presign_upload("acme", "report.pdf", 1_000_000, 300)
    fields = {k.lower(): v for k, v in form["fields"].items()}
    assert fields["x-amz-algorithm"] == "AWS4-HMAC-SHA256"
    assert fields["x-amz-credential"].split("/")[2:] == [region, "s3", "aws4_request"]
    assert "signature" not in fields and "awsaccesskeyid" not in fields  # SigV2's fields
    assert urlparse(form["url"]).hostname == f"semfs-files-123.s3.{region}.amazonaws.com"

    link = urlparse(store.download_url("content/acme/ab/abc", "report.pdf", 300))
    query = {k.lower(): v for k, v in parse_qs(link.query).items()}
    assert query["x-amz-algorithm"] == ["AWS4-HMAC-SHA256"]
    assert query["x-amz-credential"][0].split("/")[2:] == [region, "s3", "aws4_request"]
    assert "signature" not in query and "awsaccesskeyid" not in query
    assert link.hostname == f"semfs-files-123.s3.{region}.amazonaws.com"
