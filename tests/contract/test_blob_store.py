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
    assert list(blob_store.list("derived/t/")) == ["derived/t/a/document.json", "derived/t/b/chunks.json"]
    assert list(blob_store.list("nothing/")) == []


@pytest.mark.parametrize("key", ["", "/abs", "a/../b", "a//b", "./a"])
def test_unsafe_keys_are_refused(blob_store: BlobStore, key: str) -> None:
    with pytest.raises(InvalidRequest):
        blob_store.put(key, b"x")


def test_binary_round_trip(blob_store: BlobStore) -> None:
    data = bytes(range(256)) * 100
    blob_store.put("k/bin", data)
    assert blob_store.get("k/bin") == data
