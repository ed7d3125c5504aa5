"""The API against its own OpenAPI document, driven by a fuzzer nobody here wrote (schemathesis): every
operation, valid and invalid requests generated from the document, each answered without a 5xx, with a
status the document lists and a body that matches it. Seeded and bounded, so a CI run is repeatable."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from schemathesis import GenerationMode
from schemathesis.specs.openapi.checks import negative_data_rejection, positive_data_acceptance

from semfs.api.app import openapi_document
from semfs.bootstrap import build_container
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.server import ApiKeys, start_http
from tests.conftest import make_settings

pytestmark = pytest.mark.integration

# /mcp's body is the Model Context Protocol's JSON-RPC, read by the official SDK: test_mcp.py drives it with
# the SDK's own client, hostile bodies included; its document entry says where it is, not each message
schema = schemathesis.openapi.from_dict(openapi_document()).exclude(path="/mcp")
schema.config.generation.update(
    modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
    max_examples=60,
    deterministic=True,  # the same requests every run
    with_security_parameters=False,  # every case sends the key (the 401s have tests of their own)
)


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory, shared_extractor: Any) -> Iterator[tuple[Any, str]]:
    """The local host over a store with a few files, and a key for their tenant."""
    data = tmp_path_factory.mktemp("fuzz")
    c = build_container(make_settings(Path(data)), extractor=shared_extractor)
    for n in range(3):
        ingest_bytes(c, "acme", f"# Note {n}\n\nPayment terms are {30 + n} days.".encode(), f"note-{n}.md")
    keys = ApiKeys(c.settings.api_keys_file)
    key = keys.create("acme")
    server = start_http(c, keys, "127.0.0.1", 0)  # over real HTTP, as a client meets it
    yield f"http://127.0.0.1:{server.port}", key
    server.shutdown()
    c.close()


# What a document cannot say, and the checks it costs, for these operations only (every other check runs on
# them, and every check on the rest): a rule beyond the schema refuses some schema-valid requests (400), and
# a multipart form carries every field as text, so "5" cannot be told from 5 on the wire.
BEYOND_THE_SCHEMA: dict[str, list[Any]] = {
    "POST /tags/merge": [positive_data_acceptance],  # merging a tag into itself
    # a tag over 48 characters once made a slug; the fields' JSON types
    "POST /files": [positive_data_acceptance, negative_data_rejection],
    # a mail account's rules between fields (the document says one: after=move needs move_to): the folder moved
    # to is none of those read, and plain IMAP (security none) only to a loopback host
    "PUT /mail/accounts/{name}": [positive_data_acceptance],
}


@schema.parametrize()
def test_every_operation_answers_as_its_document_says(case: Any, host: tuple[Any, str]) -> None:
    base, key = host
    excluded = BEYOND_THE_SCHEMA.get(case.operation.label, [])
    case.call_and_validate(base_url=base, headers={"Authorization": f"Bearer {key}"}, excluded_checks=excluded)
