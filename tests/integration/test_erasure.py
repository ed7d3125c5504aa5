"""Erasure (issue 28.4): a whole tenant purged on demand, and a trashed file purged by the scheduled sweep,
leave nothing of what they stored, in either backend, and touch nothing of the tenant beside them.

Locally the check goes down to the bytes: a word only the purged tenant wrote is looked for in every file
under the data folder (SQLite pages and WAL, tantivy segments, vector graphs, blobs). In AWS the purge runs
as the maintenance function does, cold and under its own role (``iam_check``), and the bucket is versioned
as the template's is, so "gone" means no version and no delete marker left."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from semfs.bootstrap import Container
from semfs.domain.errors import InvalidRequest
from semfs.domain.models import SavedView, SearchRequest, utcnow
from semfs.pipeline.catalogue.files import delete_file
from semfs.pipeline.catalogue.notes import add_note
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.mail import ingest_mail
from semfs.pipeline.maintenance.purge import purge_tenant
from semfs.pipeline.query.search import search
from semfs.ports.repository import RecordQuery
from tests.integration.aws_harness import FakeContext, Stack

pytestmark = pytest.mark.integration
SECRET = "quokkazanzibar"  # a word only acme ever wrote: after the purge no byte of it may remain
ACME_DOC = f"# Merger plan\n\nThe {SECRET} acquisition closes in March; the board approved it.".encode()
GLOBEX_DOC = b"# Payment terms\n\nInvoices are payable within thirty days of receipt."


def _mail(to: str = "files@northwind.example") -> bytes:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = f"Jane Okafor <jane.{SECRET}@acme-corp.example>", to, f"Re: {SECRET}"
    msg["Date"] = "Mon, 30 Nov 2026 09:00:00 +0000"
    msg["Message-ID"] = f"<{SECRET}-1@acme-corp.example>"
    msg.set_content(f"The {SECRET} figures are attached; please keep them to the deal team until March.")
    msg.add_attachment(ACME_DOC, maintype="text", subtype="markdown", filename="plan.md")
    return msg.as_bytes()


def _hits(c: Container, tenant: str, query: str) -> list[str]:
    return [r.file_id for r in search(c, tenant, SearchRequest(query=query, mode="hybrid")).results]


def _files_holding(root: Path, word: bytes) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and word in p.read_bytes())


def test_a_purged_tenant_leaves_no_byte_of_its_text_and_the_tenant_beside_it_is_untouched(
    container: Container,
) -> None:
    acme = ingest_bytes(container, "acme", ACME_DOC, "plan.md").record
    ingest_mail(container, "acme", _mail())
    add_note(container, "acme", acme.file_id, f"ask legal about {SECRET}", author="ana")
    container.views.save("acme", SavedView(name=f"{SECRET} deal", params={"q": SECRET}))
    container.tags.set_alias("acme", "deal", "merger")
    ours = ingest_bytes(container, "globex", GLOBEX_DOC, "terms.md").record
    delete_file(container, "acme", acme.file_id)  # one of them in the trash: a purge takes it too
    root = container.settings.data_dir
    assert _files_holding(root, SECRET.encode())  # the check can see the word before the purge
    assert container.mail.threads("acme") and container.mail.contacts("acme")
    # when
    report = purge_tenant(container, "acme")
    # then: nothing of acme is left, anywhere on disk
    assert report["records"] >= 2 and report["objects"] >= 2 and report["mail_items"] and report["saved_views"] == 1
    assert container.repo.query(RecordQuery(tenant_id="acme", include_deleted=True)) == []
    assert container.repo.counts("acme") == {}
    assert container.mail.threads("acme") == [] and container.mail.contacts("acme") == []
    assert container.views.views("acme") == [] and container.tags.aliases("acme") == {}
    assert _hits(container, "acme", f"{SECRET} acquisition") == []
    assert _files_holding(root, SECRET.encode()) == []
    # globex's file is found as before, by keyword and by meaning
    assert _hits(container, "globex", "when are invoices payable") == [ours.file_id]
    assert container.repo.get("globex", ours.file_id).status.value == "indexed"
    # a second purge finds nothing left and fails on nothing
    again = purge_tenant(container, "acme")
    assert again["records"] == again["objects"] == again["index_documents"] == 0


ODD_TENANT_IDS = ["a/", "a/..", "a#", "A", " a", "a ", "a%2F", "", "a" * 300, "default/", "../a", ".", "a\n"]
INVOICE_DOC = b"# Invoice INV-2024-0042\n\nNorthwind Cycles Ltd bills Acme Corp EUR 44,000.00. Attn: Jane Okafor."


def _tenant_state(c: Container, tenant: str) -> dict[str, Any]:
    """Everything semfs holds of ``tenant``, as bytes' hashes and dumps: records, every stored object under the
    tenant's prefixes, what search finds (keyword and meaning), its entities and the files naming each."""
    import hashlib

    blobs = c.settings.blobs_dir
    objects = {
        str(p.relative_to(blobs)): hashlib.sha256(p.read_bytes()).hexdigest()
        for prefix in ("uploads", "content", "derived")
        for p in sorted((blobs / prefix / tenant).rglob("*"))
        if p.is_file()
    }
    records = [r.model_dump(mode="json") for r in c.repo.query(RecordQuery(tenant_id=tenant, include_deleted=True))]
    entities = {
        e.entity_id: [m.file_id for m in c.entities.files(tenant, e.entity_id)] for e in c.entities.entities(tenant)
    }
    hits = {
        mode: [
            (r.file_id, r.score) for r in search(c, tenant, SearchRequest(query="invoice Northwind", mode=mode)).results
        ]
        for mode in ("keyword", "semantic")
    }
    return {"objects": objects, "records": records, "entities": entities, "hits": hits}


def _found(c: Container, tenant: str, mode: str) -> list[Any]:
    return search(c, tenant, SearchRequest(query="invoice Northwind", mode=mode)).results  # type: ignore[arg-type]


def test_purging_an_odd_tenant_id_touches_no_other_tenant(cli: Any, tmp_path: Path) -> None:
    """Issue 47.2: ``semfs purge-tenant 'default/' --yes 'default/'`` erased tenant ``default``'s originals
    (``uploads/default//`` was read as ``uploads/default/``). Each odd id is refused, by the CLI and by the
    maintenance function's event, and every other tenant's records, stored objects, index entries and entities are
    as they were, byte for byte; then ``a`` is purged for real and ``a-b``, ``ab`` and ``default`` are untouched."""
    from semfs.bootstrap import build_container
    from semfs.cli import app
    from semfs.config import Settings
    from semfs.pipeline.maintenance.passes import maintenance_pass

    (tmp_path / "invoice.md").write_bytes(INVOICE_DOC)
    tenants = ["default", "a", "a-b", "ab"]
    for tenant in tenants:
        done = cli.invoke(app, ["ingest", str(tmp_path / "invoice.md"), "--tenant", tenant])
        assert done.exit_code == 0, done.output
    c = build_container(Settings(data_dir=tmp_path / "data", embedder="hash"))
    try:
        before = {t: _tenant_state(c, t) for t in tenants}
        assert all(before[t]["objects"] and before[t]["entities"] and before[t]["hits"]["keyword"] for t in tenants)
        for odd in ODD_TENANT_IDS:
            refused = cli.invoke(app, ["purge-tenant", odd, "--yes", odd])
            assert refused.exit_code == 2 and "is not a tenant id" in refused.output, (odd, refused.output)
            with pytest.raises(InvalidRequest, match="is not a tenant id"):
                purge_tenant(c, odd)
            answer = maintenance_pass(c, {"task": "purge_tenant", "tenant": odd, "confirm": odd}, deadline=1e12)
            assert set(answer.report) == {"error"}, (odd, answer.report)
            assert {t: _tenant_state(c, t) for t in tenants} == before, odd
        # a real purge of "a": the tenants whose ids begin like it are untouched
        assert cli.invoke(app, ["purge-tenant", "a", "--yes", "a"]).exit_code == 0
        after = {t: _tenant_state(c, t) for t in tenants}
        assert after["a"] == {"objects": {}, "records": [], "entities": {}, "hits": {"keyword": [], "semantic": []}}
        assert {t: after[t] for t in ("default", "a-b", "ab")} == {t: before[t] for t in ("default", "a-b", "ab")}
    finally:
        c.close()


def test_the_cli_purges_a_tenant_only_when_its_name_is_given_twice(cli: Any, tmp_path: Path) -> None:
    from semfs.cli import app

    (tmp_path / "plan.md").write_bytes(ACME_DOC)
    assert cli.invoke(app, ["ingest", str(tmp_path / "plan.md"), "--tenant", "acme"]).exit_code == 0
    refused = cli.invoke(app, ["purge-tenant", "acme"])
    assert refused.exit_code == 2 and "--yes acme" in refused.output
    wrong = cli.invoke(app, ["purge-tenant", "acme", "--yes", "globex"])
    assert wrong.exit_code == 2
    assert cli.invoke(app, ["ls", "--tenant", "acme", "--json"]).output.count('"file_id"') == 1
    done = cli.invoke(app, ["purge-tenant", "acme", "--yes", "acme", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["records"] == 1
    assert cli.invoke(app, ["ls", "--tenant", "acme", "--json"]).output.count('"file_id"') == 0


# ---------------------------------------------------------------------------------------------- AWS
def _versions(stack: Stack, prefix: str) -> list[str]:
    found = stack.s3.list_object_versions(Bucket="semfs-test", Prefix=prefix)
    return [v["Key"] for v in found.get("Versions", []) + found.get("DeleteMarkers", [])]


def _entity_keys(stack: Stack) -> list[str]:
    return [i["pk"]["S"] for i in stack.ddb.scan(TableName="semfs-entities")["Items"]]


def _settle(stack: Stack) -> None:
    for execution in stack.executions():
        assert stack.wait(execution["executionArn"])["status"] == "SUCCEEDED"


def _put(stack: Stack, key: str, data: bytes) -> None:
    """An object PUT under uploads/: its notification → ingest_upload → the pipeline, to the end."""
    stack.s3.put_object(Bucket="semfs-test", Key=key, Body=data)
    assert stack.handlers["ingest_upload"].lambda_handler(stack.sqs_event(), FakeContext()) == {"batchItemFailures": []}
    _settle(stack)


def test_a_tenant_purge_in_aws_runs_under_the_maintenance_role_and_spares_the_other_tenant(aws_stack: Stack) -> None:
    from tests.integration.test_aws_pipeline import KEY, TERMS, search

    event = json.loads((Path(__file__).parents[2] / "events" / "ses_inbound.json").read_text())
    message_id = event["Records"][0]["ses"]["mail"]["messageId"]
    aws_stack.s3.put_object(Bucket="semfs-test", Key=f"inbound/raw/{message_id}", Body=_mail())
    aws_stack.handlers["ingest_email"].lambda_handler(event, FakeContext())
    _settle(aws_stack)
    _put(aws_stack, KEY, TERMS)  # acme's upload
    _put(aws_stack, KEY, TERMS + b"\nA second version of it.\n")
    globex_key = "uploads/globex/terms.md"
    _put(aws_stack, globex_key, GLOBEX_DOC)
    assert search(aws_stack, "payable thirty days", tenant="globex")["results"]
    assert any(k.startswith(("T#acme#", "C#acme")) for k in _entity_keys(aws_stack))
    # when: an administrator invokes the maintenance function, cold
    aws_stack.cold("reembed")
    purge = aws_stack.handlers["reembed"].lambda_handler
    assert "error" in purge({"task": "purge_tenant", "tenant": "acme"}, FakeContext())  # not confirmed
    report = purge({"task": "purge_tenant", "tenant": "acme", "confirm": "acme"}, FakeContext())
    # then: no version of anything acme stored, no record, no entity, no index document
    assert report["records"] >= 2 and report["objects"] >= 4, report
    for prefix in ("uploads/acme/", "content/acme/", "derived/acme/"):
        assert _versions(aws_stack, prefix) == [], prefix
    items = aws_stack.ddb.scan(TableName="semfs-files")["Items"]
    assert [i for i in items if "acme" in json.dumps(i)] == []
    assert [k for k in _entity_keys(aws_stack) if "#acme" in k] == []
    assert search(aws_stack, "payable thirty days")["results"] == []
    # globex: found as before, its objects and record in place
    assert search(aws_stack, "payable thirty days", tenant="globex")["results"]
    assert _versions(aws_stack, globex_key) and [i for i in items if "globex" in json.dumps(i)]


def test_the_scheduled_sweep_purges_an_expired_trash_under_the_maintenance_role(aws_stack: Stack) -> None:
    """The trash's purge after ``SEMFS_TRASH_DAYS`` runs in the maintenance function, not the API: its
    role must let it delete the upload's and the original's versions too (it could delete only derived/)."""
    from semfs.lambda_support import get_container
    from tests.integration.test_aws_pipeline import KEY, TERMS, api_event, record_of, upload

    upload(aws_stack, KEY, TERMS)
    record = record_of(aws_stack)
    response = aws_stack.handlers["search_api"].lambda_handler(
        api_event("DELETE", f"/files/{record.file_id}"), FakeContext()
    )
    assert response["statusCode"] == 200, response
    repo = get_container().repo
    days = get_container().settings.trash_days
    repo.save(repo.get("acme", record.file_id).evolve(deleted_at=utcnow() - timedelta(days=days + 1)))
    # when
    aws_stack.cold("reembed")
    report = aws_stack.handlers["reembed"].lambda_handler({"task": "reconcile"}, FakeContext())
    # then
    assert report["trash_past_its_days"] == {"found": 1, "fixed": 1}
    assert record_of(aws_stack).status.value == "deleted"
    assert _versions(aws_stack, KEY) == _versions(aws_stack, record.blob_key) == []
    assert _versions(aws_stack, f"derived/acme/{record.file_id}/") == []


def test_a_large_tenants_purge_goes_on_pass_after_pass_and_reports_its_progress(
    aws_stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 54.4: a tenant's erasure scanned the item table in one invocation and started over on every
    re-run. Now each pass stops between two pages once its time is up (here: none left after a page) and
    queues the next, which starts in the step it stopped in; what went stays gone. 3,000 of acme's items beside
    600 of globex's, a page of 500: the scan takes several passes, globex keeps every item."""
    import time

    from tests.integration.aws_harness import MAINTENANCE_QUEUE_URL

    monkeypatch.setattr("semfs.adapters.aws.item_table.ERASE_PAGE", 500)
    items = [
        *(("acme", f"NF#acme#person:p{n % 300}", f"f{n}") for n in range(2_000)),
        *(("acme", f"FN#acme#f{n}", f"person:p{n % 300}") for n in range(1_000)),
        *(("globex", f"NF#globex#person:p{n % 50}", f"f{n}") for n in range(600)),
    ]
    for i in range(0, len(items), 25):
        requests = [{"PutRequest": {"Item": {"pk": {"S": pk}, "sk": {"S": sk}}}} for _, pk, sk in items[i : i + 25]]
        aws_stack.ddb.batch_write_item(RequestItems={"semfs-entities": requests})

    class OutOfTime(FakeContext):
        def get_remaining_time_in_millis(self) -> int:
            return 60_000  # the handler keeps 60 s back: a page per pass

    aws_stack.cold("reembed")
    handler = aws_stack.handlers["reembed"].lambda_handler
    started = time.monotonic()
    passes = [handler({"task": "purge_tenant", "tenant": "acme", "confirm": "acme"}, OutOfTime())]
    while passes[-1].get("continued"):
        event = aws_stack.sqs_event(MAINTENANCE_QUEUE_URL)
        assert len(event["Records"]) == 1, passes
        passes.append(handler(event, OutOfTime()))
        assert len(passes) <= 60, passes[-1]
    took = time.monotonic() - started
    assert len(passes) >= 5 and passes[-1]["done"] is True
    walks = {
        "objects",
        "mail_items",
        "tag_items",
        "saved_views",
        "principals",
        "entity_items",
        "mail_accounts",
        "records",
    }
    assert {p["stopped_in"] for p in passes[:-1]} <= walks  # each item-table step scans the table in passes
    assert sum(p.get("entity_items", 0) for p in passes) >= 3_000  # each pass reports what it erased
    left = [k for k in _entity_keys(aws_stack) if "#acme" in k]
    assert left == [] and len([k for k in _entity_keys(aws_stack) if "#globex" in k]) == 600
    print(f'\n{{"erased_items": 3000, "passes": {len(passes)}, "seconds": {took:.2f}}}')
