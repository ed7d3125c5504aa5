from __future__ import annotations

import pytest

from semfs.domain.errors import InvalidRequest, NotFound
from semfs.ports import BlobStore

pytestmark = pytest.mark.contract


def test_put_get_overwrite_delete(blob_store: BlobStore) -> None:
    blob_store.put("content/acme/ab/abc", b"one")
    assert blob_store.get("content/acme/ab/abc") == b"one"
    blob_store.put("content/acme/ab/abc", b"two")
    assert blob_store.get("content/acme/ab/abc") == b"two"
    assert blob_store.exists("content/acme/ab/abc")
    blob_store.delete("content/acme/ab/abc")
    blob_store.delete("content/acme/ab/abc")  # idempotent
    assert not blob_store.exists("content/acme/ab/abc")
    with pytest.raises(NotFound):
        blob_store.get("content/acme/ab/abc")


def test_list_by_prefix_in_lexical_order(blob_store: BlobStore) -> None:
    for key in ("derived/t/b/chunks.json", "derived/t/a/document.json", "content/t/x", "derived/u/a/x"):
        blob_store.put(key, b"x")
    assert [k for k, _ in blob_store.list("derived/t/")] == ["derived/t/a/document.json", "derived/t/b/chunks.json"]
    assert list(blob_store.list("nothing/")) == []


def test_a_listing_resumes_after_a_key_and_says_each_size(blob_store: BlobStore) -> None:
    for n, key in enumerate(["uploads/a/1", "uploads/a/2", "uploads/b/1", "uploads/b/22"]):
        blob_store.put(key, b"x" * (n + 1))
    assert list(blob_store.list("uploads/", after="uploads/a/2")) == [("uploads/b/1", 3), ("uploads/b/22", 4)]
    assert list(blob_store.list("uploads/", after="uploads/b/22")) == []


def test_deleting_a_prefix_removes_every_key_under_it_and_nothing_beside_it(blob_store: BlobStore) -> None:
    for key in ("derived/acme/f1/a", "derived/acme/f2/b", "derived/acme2/f1/a", "derived/acm"):
        blob_store.put(key, b"x")
    blob_store.put("derived/acme/f1/a", b"replaced")  # a second version where the store keeps versions
    blob_store.delete("derived/acme/f2/b")  # deleted earlier: in S3 its version and marker remain
    assert blob_store.delete_prefix("derived/acme/") >= 1  # (in S3: every version and marker, 4)
    assert list(blob_store.list("derived/acme/")) == []
    assert [k for k, _ in blob_store.list("derived/")] == ["derived/acm", "derived/acme2/f1/a"]
    assert blob_store.delete_prefix("derived/acme/") == 0  # idempotent: no version of any of it is left
    with pytest.raises(InvalidRequest):
        blob_store.delete_prefix("derived/acme")  # a prefix that is not a folder would reach acme2's keys


@pytest.mark.parametrize("prefix", ["derived/acme//", "derived/acme/./", "derived/acme/../", "derived//", "/"])
def test_a_prefix_to_delete_names_one_folder_exactly(blob_store: BlobStore, prefix: str) -> None:
    """Issue 47.2: ``uploads/default//`` (a purge of tenant ``default/``) was read as ``uploads/default/``: a
    prefix with an empty, ``.`` or ``..`` segment is refused, and nothing under the folder it resembles goes."""
    blob_store.put("derived/acme/f1/a", b"kept")
    with pytest.raises(InvalidRequest):
        blob_store.delete_prefix(prefix)
    assert blob_store.get("derived/acme/f1/a") == b"kept"


@pytest.mark.parametrize("key", ["", "/abs", "a/../b", "a//b", "./a"])
def test_unsafe_keys_are_refused(blob_store: BlobStore, key: str) -> None:
    with pytest.raises(InvalidRequest):
        blob_store.put(key, b"x")


def test_binary_round_trip(blob_store: BlobStore) -> None:
    data = bytes(range(256)) * 100
    blob_store.put("k/bin", data)
    assert blob_store.get("k/bin") == data


def test_download_urls_are_short_lived_links(blob_store: BlobStore) -> None:
    blob_store.put("content/acme/ab/abc", b"bytes")
    url = blob_store.download_url("content/acme/ab/abc", "report (final).pdf", 300)
    assert url.startswith(("http://", "https://"))
    assert "abc" in url or "/download/" in url


def test_an_s3_preview_link_is_signed_to_show_inline_and_anything_else_downloads(aws_settings: object) -> None:
    """The web page made a preview link by adding ``inline=1`` to the download link: in S3 that parameter is
    outside the SigV4 signature, so every preview was refused (and a plain presigned GET says "attachment"
    anyway). The link is now signed with the response headers a preview needs, for the types a browser shows
    without running anything; any other type is an attachment whatever is asked."""
    import requests

    from semfs.adapters.aws.s3 import S3BlobStore

    store = S3BlobStore(aws_settings)  # type: ignore[arg-type]
    store.put("content/acme/ab/pdf", b"%PDF-1.4 preview")
    shown = requests.get(
        store.download_url("content/acme/ab/pdf", "Q3 report.pdf", 300, inline_type="application/pdf"), timeout=30
    )
    assert shown.status_code == 200 and shown.content == b"%PDF-1.4 preview"
    assert shown.headers["Content-Type"] == "application/pdf"
    assert (
        shown.headers["Content-Disposition"].startswith("inline;")
        and "Q3%20report.pdf" in shown.headers["Content-Disposition"]
    )
    saved = requests.get(
        store.download_url("content/acme/ab/pdf", "page.html", 300, inline_type="text/html"), timeout=30
    )
    assert saved.headers["Content-Disposition"].startswith("attachment;")
    assert saved.headers["Content-Type"] == "application/octet-stream"


def test_s3_presigned_post_is_scoped_to_the_tenant_and_size(aws_settings: object) -> None:
    from semfs.adapters.aws.s3 import S3BlobStore

    post = S3BlobStore(aws_settings).presign_upload("acme", "../../evil name.pdf", 50 * 1024 * 1024, 3600)  # type: ignore[arg-type]
    assert post["key"].startswith("uploads/acme/") and post["key"].endswith("evil name.pdf") and ".." not in post["key"]
    assert post["expires_in"] == 900
    import base64
    import json

    policy = json.loads(base64.b64decode(post["fields"]["policy"]))
    assert ["content-length-range", 1, 50 * 1024 * 1024] in policy["conditions"]
