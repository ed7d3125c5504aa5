"""Bundles (issue 53.1): a zip, a tar.gz, a winmail.dat and a PDF's embedded files, each member a file of its
own, found by search; built with the real libraries (zipfile, tarfile, pypdfium2's attachment writer, a TNEF
written by the MS-OXTNEF layout); bombs and crowds refused whole; nesting bounded; access and versions as
for any file."""

from __future__ import annotations

import io
import struct
import tarfile
import zipfile
from email.message import EmailMessage

import pytest

from semfs.bootstrap import Container
from semfs.domain.models import SearchFilters, SearchRequest
from semfs.domain.outcomes import Outcome
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.mail import ingest_mail
from semfs.pipeline.intake.register import Provenance
from semfs.pipeline.principals import add_user, principal_for
from semfs.pipeline.query.search import search
from semfs.ports.repository import RecordQuery

pytestmark = pytest.mark.integration
T = "acme"
HARBOUR = b"# Harbour dredging\n\nThe dredging of the north basin starts in March under permit HB-7731."
BUDGET = b"Budget note: the quay wall repairs cost 412,000 euros, paid from the maintenance reserve."


def zipped(files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return out.getvalue()


def tarred(files: dict[str, bytes], mode: str = "w:gz") -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode=mode) as t:  # type: ignore[call-overload]
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def records(c: Container) -> list[object]:
    return c.repo.query(RecordQuery(tenant_id=T, limit=1000))


def found(c: Container, query: str) -> list[str]:
    return [h.filename for h in search(c, T, SearchRequest(query=query, mode="keyword")).results]


def test_a_zips_members_are_files_of_their_own_and_the_zip_lists_them(container: Container) -> None:
    inner = zipped({"notes/budget.txt": BUDGET})
    bundle = zipped(
        {
            "docs/harbour.md": HARBOUR,
            "docs/": b"",
            "__MACOSX/docs/._harbour.md": b"\x00\x05\x16\x07",
            "docs/.DS_Store": b"\x00\x00\x00\x01Bud1",
            "archive/older.zip": inner,
        }
    )
    reg = ingest_bytes(container, T, bundle, "project.zip")
    zip_record = container.repo.get(T, reg.record.file_id)
    assert zip_record.outcome is Outcome.OK and zip_record.mime_type == "application/zip"
    listed = {m["path"]: m for m in zip_record.provenance["members"]}
    assert set(listed) == {"docs/harbour.md", "archive/older.zip"}  # no folders, no other systems' litter

    harbour = container.repo.get(T, listed["docs/harbour.md"]["file_id"])
    assert harbour.outcome is Outcome.OK and harbour.upload_context == "inside project.zip: docs/harbour.md"
    assert harbour.provenance["bundle"] == {
        "file_id": zip_record.file_id,
        "name": "project.zip",
        "path": "docs/harbour.md",
    }
    assert "harbour.md" in found(container, "dredging north basin permit")
    assert "budget.txt" in found(container, "quay wall repairs")  # a zip inside the zip, unpacked in turn
    assert "project.zip" in found(container, "harbour.md")  # the bundle by what it holds

    before = len(records(container))
    again = ingest_bytes(container, T, bundle, "project.zip")
    assert not again.created and len(records(container)) == before  # the same bundle: nothing new


def test_a_new_version_of_a_bundle_makes_its_changed_members_the_next_versions(container: Container) -> None:
    where = "path:/home/me/project.zip"
    prov = Provenance(source_key=where, version_key=where)
    ingest_bytes(container, T, zipped({"harbour.md": HARBOUR}), "project.zip", prov)
    changed = HARBOUR.replace(b"March", b"April") + b"\n\nThe permit was extended."
    ingest_bytes(container, T, zipped({"harbour.md": changed}), "project.zip", prov)
    members = [r for r in records(container) if r.filename == "harbour.md"]  # type: ignore[attr-defined]
    assert len(members) == 2 and len({m.lineage_id for m in members}) == 1  # type: ignore[attr-defined]
    latest = [m for m in members if m.is_latest]  # type: ignore[attr-defined]
    assert len(latest) == 1 and latest[0].version == 2  # type: ignore[attr-defined]


def test_a_tar_gz_and_a_message_inside_a_zip(container: Container) -> None:
    ingest_bytes(container, T, tarred({"site/harbour.md": HARBOUR}), "site.tar.gz")
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "Ines <ines@port.example>", "ops@acme.example", "Quay wall budget"
    mail["Message-ID"] = "<quay-1@port.example>"
    mail.set_content("The budget note is attached.")
    mail.add_attachment(BUDGET, maintype="text", subtype="plain", filename="budget.txt")
    ingest_bytes(container, T, zipped({"mail/quay.eml": mail.as_bytes()}), "exported-mail.zip")
    assert "harbour.md" in found(container, "dredging north basin")
    (budget,) = [r for r in records(container) if r.filename == "budget.txt"]  # type: ignore[attr-defined]
    assert budget.upload_context == "inside quay.eml: budget.txt"  # type: ignore[attr-defined]
    assert "budget.txt" in found(container, "quay wall repairs")
    assert "quay.eml" in found(container, "budget note attached")  # the message's own text is its own


def test_a_pdfs_embedded_files_are_files_of_their_own(container: Container) -> None:
    import pypdfium2 as pdfium

    from semfs import demo

    pdf = pdfium.PdfDocument(demo._security_pdf())
    attachment = pdf.new_attachment("harbour.md")
    attachment.set_data(HARBOUR)
    out = io.BytesIO()
    pdf.save(out)
    reg = ingest_bytes(container, T, out.getvalue(), "report.pdf")
    record = container.repo.get(T, reg.record.file_id)
    assert record.outcome is Outcome.OK and record.mime_type == "application/pdf"  # still read as a PDF
    assert [m["path"] for m in record.provenance["members"]] == ["harbour.md"]
    assert "harbour.md" in found(container, "dredging north basin")


def tnef(attachments: dict[str, bytes]) -> bytes:
    """A winmail.dat as MS-OXTNEF lays it out: signature, key, then attributes (level, id, length, data,
    checksum); each attachment opened by attAttachRendData, named by attAttachTitle, carried by attAttachData."""

    def attribute(level: int, kind: int, ident: int, data: bytes) -> bytes:
        checksum = sum(data) & 0xFFFF
        return struct.pack("<BIL", level, (kind << 16) | ident, len(data)) + data + struct.pack("<H", checksum)

    out = struct.pack("<LH", 0x223E9F78, 0x0102)
    out += attribute(1, 0x0009, 0x9006, struct.pack("<L", 0x00010000))  # attTnefVersion
    out += attribute(1, 0x0007, 0x9007, b"1252\x00\x00\x00\x00")  # attOemCodepage
    for name, data in attachments.items():
        out += attribute(2, 0x0006, 0x9002, b"\x01\x00\xff\xff\xff\xff" + b"\x00" * 8)  # attAttachRendData
        out += attribute(2, 0x0001, 0x8010, name.encode("ascii") + b"\x00")  # attAttachTitle
        out += attribute(2, 0x0006, 0x800F, data)  # attAttachData
    return out


def test_a_winmail_dat_gives_up_its_attachments(container: Container) -> None:
    mail = EmailMessage()
    mail["From"], mail["To"], mail["Subject"] = "Ines <ines@port.example>", "ops@acme.example", "Dredging"
    mail["Message-ID"] = "<tnef-1@port.example>"
    mail.set_content("See the attached plan.")
    mail.add_attachment(
        tnef({"harbour.md": HARBOUR}), maintype="application", subtype="ms-tnef", filename="winmail.dat"
    )
    result = ingest_mail(container, T, mail.as_bytes())
    (dat,) = [f.record for f in result.files if f.record.filename == "winmail.dat"]
    record = container.repo.get(T, dat.file_id)
    assert record.mime_type == "application/vnd.ms-tnef" and [m["path"] for m in record.provenance["members"]] == [
        "harbour.md"
    ]
    (member,) = [r for r in records(container) if r.filename == "harbour.md"]  # type: ignore[attr-defined]
    assert member.thread_id == dat.thread_id and member.source_message_id == "<tnef-1@port.example>"  # type: ignore[attr-defined]
    assert "harbour.md" in found(container, "dredging north basin")


def test_a_bomb_and_a_crowd_store_no_member_and_end_with_their_outcome(container: Container) -> None:
    bomb = zipped({"zeros.txt": b"0" * (60 * 1024 * 1024)})  # 60 MB of zeros: ~60 KB deflated, > 200x
    reg = ingest_bytes(container, T, bomb, "bomb.zip")
    record = container.repo.get(T, reg.record.file_id)
    assert record.outcome is Outcome.REJECTED_ARCHIVE_BOMB and "members" not in record.provenance
    crowd = zipped({f"n/{i}.txt": b"x" for i in range(1_001)}, zipfile.ZIP_STORED)
    reg = ingest_bytes(container, T, crowd, "crowd.zip")
    record = container.repo.get(T, reg.record.file_id)
    assert record.outcome is Outcome.REJECTED_ARCHIVE_BOMB and "more than 1,000 files" in (record.error or "")
    assert {r.filename for r in records(container)} == {"bomb.zip", "crowd.zip"}  # type: ignore[attr-defined]


def test_nesting_is_unpacked_three_deep_and_the_fourth_is_only_listed(container: Container) -> None:
    data = zipped({"deep.md": HARBOUR})
    for level in range(4, 0, -1):
        data = zipped({f"level{level}.zip": data})
    ingest_bytes(container, T, data, "outer.zip")
    names = {r.filename for r in records(container)}  # type: ignore[attr-defined]
    assert names == {"outer.zip", "level1.zip", "level2.zip", "level3.zip"}  # level3 is listed, not unpacked
    assert "level3.zip" in found(container, "level4.zip")


def test_members_are_read_by_whom_the_bundle_is(container: Container) -> None:
    add_user(container, T, "root", role="admin")
    add_user(container, T, "alice")
    add_user(container, T, "bob")
    from semfs.pipeline.principals import new_file_access

    access = new_file_access(container, principal_for(container, T, "alice"))
    ingest_bytes(container, T, zipped({"harbour.md": HARBOUR}), "private.zip", Provenance(access=access))
    assert {tuple(r.readers) for r in records(container)} == {("u:alice",)}  # type: ignore[attr-defined]
    bob = principal_for(container, T, "bob")
    request = SearchRequest(query="dredging north basin", mode="keyword", filters=SearchFilters().read_as(bob.tokens()))
    hits = search(container, T, request)
    assert hits.results == []
