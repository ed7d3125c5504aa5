"""EntityRepository contract, on SQLite and DynamoDB (moto): the three reads (files of an entity, entities
of a file, entities by kind), a file's entities replaced as a whole, each entity's file count moving once
however often a stage is retried or runs concurrently, and every tenant's entities its own."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from semfs.domain.mentions import FileEntity
from semfs.ports import EntityRepository

pytestmark = pytest.mark.contract


def _e(eid: str, label: str, mentions: int = 1, contact: str | None = None, detail: str | None = None) -> FileEntity:
    kind = eid.partition(":")[0]
    return FileEntity(entity_id=eid, kind=kind, label=label, mentions=mentions, location="page 1",  # type: ignore[arg-type]
                      detail=detail, contact_id=contact)  # fmt: skip


ACME = _e("organisation:acme", "Acme Corp", 3, contact="c1")
INV = _e("identifier:INV-7", "INV-7", detail="invoice")
JANE = _e("person:jane okafor", "Jane Okafor", 2, contact="c1")


def test_the_three_reads(entity_repository: EntityRepository) -> None:
    # given two files of one tenant naming overlapping entities
    entity_repository.replace_file("t1", "f1", [ACME, INV])
    entity_repository.replace_file("t1", "f2", [_e("organisation:acme", "ACME", 1), JANE])
    # then the files of an entity come most mentions first, each with its own label and location
    files = entity_repository.files("t1", "organisation:acme")
    assert [(m.file_id, m.label, m.mentions) for m in files] == [("f1", "Acme Corp", 3), ("f2", "ACME", 1)]
    # the entities of a file, most mentioned first
    assert [e.entity_id for e in entity_repository.of_file("t1", "f1")] == ["organisation:acme", "identifier:INV-7"]
    assert entity_repository.of_file("t1", "f1")[1].detail == "invoice"
    # the tenant's entities by kind, in the most files first
    first = entity_repository.entities("t1")[0]
    assert (first.entity_id, first.files) == ("organisation:acme", 2)
    assert [s.entity_id for s in entity_repository.entities("t1", "person")] == ["person:jane okafor"]
    got = entity_repository.get("t1", "organisation:acme")
    assert got is not None and got.files == 2 and got.contact_id == "c1" and got.kind == "organisation"
    assert entity_repository.get("t1", "organisation:nobody") is None


def test_replacing_a_files_entities_moves_each_count_once(entity_repository: EntityRepository) -> None:
    entity_repository.replace_file("t1", "f1", [ACME, INV])
    entity_repository.replace_file("t1", "f1", [ACME, INV])  # a retried stage
    entity_repository.replace_file("t1", "f2", [ACME])
    assert entity_repository.get("t1", "organisation:acme").files == 2  # type: ignore[union-attr]
    # when f1 is enriched again and no longer names the invoice, and then is purged
    entity_repository.replace_file("t1", "f1", [_e("organisation:acme", "Acme Corp", 5)])
    assert entity_repository.get("t1", "identifier:INV-7") is None
    assert entity_repository.files("t1", "identifier:INV-7") == []
    assert entity_repository.files("t1", "organisation:acme")[0].mentions == 5
    entity_repository.replace_file("t1", "f1", [])
    entity_repository.replace_file("t1", "f1", [])
    assert entity_repository.of_file("t1", "f1") == []
    assert entity_repository.get("t1", "organisation:acme").files == 1  # type: ignore[union-attr]
    assert [s.entity_id for s in entity_repository.entities("t1")] == ["organisation:acme"]


def test_every_tenant_has_its_own_entities(entity_repository: EntityRepository) -> None:
    entity_repository.replace_file("t1", "f1", [ACME])
    entity_repository.replace_file("t2", "f1", [INV])
    assert entity_repository.files("t2", "organisation:acme") == []
    assert entity_repository.get("t2", "organisation:acme") is None
    assert entity_repository.of_file("t2", "f1")[0].entity_id == "identifier:INV-7"
    assert [s.entity_id for s in entity_repository.entities("t2")] == ["identifier:INV-7"]
    # a tenant's erasure takes its entities alone
    assert entity_repository.forget_tenant("t1") >= 2
    assert entity_repository.entities("t1") == [] and entity_repository.of_file("t1", "f1") == []
    assert [s.entity_id for s in entity_repository.entities("t2")] == ["identifier:INV-7"]


@pytest.mark.usefixtures("atomic_requests")
def test_concurrent_enrichments_count_every_file(entity_repository: EntityRepository) -> None:
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: entity_repository.replace_file("t1", f"f{n % 20}", [ACME]), range(40)))
    assert entity_repository.get("t1", "organisation:acme").files == 20  # type: ignore[union-attr]
    assert len(entity_repository.files("t1", "organisation:acme")) == 20


def test_a_re_enriched_file_writes_only_what_changed_in_dynamodb(aws_settings: object) -> None:
    """Issue 54.5: a file naming 200 entities was 200 transactions of three items (two write units each, about
    1,200 in all), and the same again on every re-enrichment. Now: a transaction of two per new entity and
    its (file, entity) item batched; found again as it was, nothing; one changed, one batch and one update.
    Counted as the calls DynamoDB bills (moto reports no consumed capacity): items in transactions twice."""
    from semfs.adapters.aws.dynamo_entities import DynamoEntityRepository

    repo = DynamoEntityRepository(aws_settings)  # type: ignore[arg-type]
    units: list[int] = []
    real = repo._call

    def counting(op: str, **kwargs: object) -> object:
        if op == "transact_write_items":
            units.append(2 * len(kwargs["TransactItems"]))  # type: ignore[arg-type]
        elif op == "batch_write_item":
            units.append(sum(len(v) for v in kwargs["RequestItems"].values()))  # type: ignore[attr-defined]
        elif op in ("put_item", "update_item", "delete_item"):
            units.append(1)
        return real(op, **kwargs)

    repo._call = counting  # type: ignore[method-assign]
    entities = [_e(f"person:p{n}", f"Person {n}", 1 + n % 3) for n in range(200)]
    repo.replace_file("t1", "f1", entities)
    assert sum(units) == 200 * 4 + 200  # was 200 * 6
    units.clear()
    repo.replace_file("t1", "f1", entities)  # re-enriched, the same entities found
    assert sum(units) == 0
    moved = [*entities[:199], _e("person:p199", "Person 199", 9)]
    repo.replace_file("t1", "f1", moved)
    assert sum(units) == 2 + 1  # its two items in a batch, its count's attributes
    assert repo.get("t1", "person:p199").files == 1  # type: ignore[union-attr]  (counted once through it all)
    assert [e.mentions for e in repo.of_file("t1", "f1") if e.entity_id == "person:p199"] == [9]
