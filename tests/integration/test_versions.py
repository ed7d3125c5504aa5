"""Versions mean "the same document, changed": the same source and text that is plausibly a revision."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from semfs import demo
from semfs.bootstrap import Container
from semfs.domain.models import SearchRequest
from semfs.pipeline.catalogue.trash import trash
from semfs.pipeline.catalogue.versions import detach_version, link_version
from semfs.pipeline.intake.ingest import ingest_bytes
from semfs.pipeline.intake.register import Provenance
from semfs.pipeline.maintenance.reconcile import reconcile
from semfs.pipeline.query.search import search
from semfs.pipeline.record_update import update
from tests.builders import run_cli

run = run_cli

pytestmark = pytest.mark.integration
T = "acme"
SODIUM = (
    "# libsodium\n\nSodium is a modern, easy-to-use software library for encryption, decryption, signatures, "
    "password hashing and more. It is a portable, cross-compilable, installable, packageable fork of NaCl."
)
RECIPE = (
    "# Sourdough bread\n\nMix 500 g of flour with 350 g of water and 100 g of starter. Rest for an hour, add "
    "salt, fold every thirty minutes, then shape the loaf and bake it at 240 degrees for forty minutes."
)


def test_same_name_in_two_folders_is_two_documents(cli: CliRunner, tmp_path: Path) -> None:
    # given: libsodium's README and a recipe, both README.markdown, in two folders
    (tmp_path / "libsodium").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "libsodium" / "README.markdown").write_text(SODIUM)
    (tmp_path / "other" / "README.markdown").write_text(RECIPE)
    run(cli, "ingest", str(tmp_path / "libsodium"))
    out = json.loads(run(cli, "ingest", str(tmp_path / "other"), "--json"))
    # then: the recipe is a new document, and both stay findable
    assert [r["version"] for r in out["files"]] == [1]
    assert json.loads(run(cli, "search", "encryption library", "--json"))["results"][0]["filename"] == "README.markdown"
    assert "Sourdough" in run(cli, "search", "bake bread loaf", "--json")
    found = {r["title"] for r in json.loads(run(cli, "search", "readme", "--mode", "keyword", "--json"))["results"]}
    assert len(found) == 2


def test_the_same_path_edited_is_the_next_version(cli: CliRunner, tmp_path: Path) -> None:
    note = tmp_path / "README.markdown"
    note.write_text(SODIUM)
    run(cli, "ingest", str(note))
    note.write_text(SODIUM + "\n\nVersion 1.0.20 adds AEGIS-256 and removes deprecated functions.")
    (row,) = json.loads(run(cli, "ingest", str(note), "--json"))["files"]
    assert row["version"] == 2
    lineage = json.loads(run(cli, "versions", row["file_id"], "--json"))
    assert [v["version"] for v in lineage] == [1, 2]
    assert "AEGIS-256" in (lineage[1]["change_summary"] or "")


def test_the_same_path_with_unrelated_text_starts_its_own_document(container: Container) -> None:
    where = Provenance(version_key="path:/home/ann/README.markdown")
    first = ingest_bytes(container, T, SODIUM.encode(), "README.markdown", where).record
    other = ingest_bytes(container, T, RECIPE.encode(), "README.markdown", where).record
    assert (other.version, other.lineage_id, other.previous_version_id) == (1, f"l_{other.file_id[2:]}", None)
    assert other.provenance["version_link"] == "detached" and other.provenance["detached_from"] == first.file_id
    assert container.repo.get(T, first.file_id).is_latest and other.is_latest
    assert {
        r.file_id for r in search(container, T, SearchRequest(query="readme markdown", mode="keyword")).results
    } == {
        first.file_id,
        other.file_id,
    }


def test_an_explicit_previous_version_always_wins(container: Container) -> None:
    first = ingest_bytes(container, T, SODIUM.encode(), "a.md").record
    second = ingest_bytes(container, T, RECIPE.encode(), "b.md", Provenance(previous_version_id=first.file_id)).record
    assert (second.version, second.lineage_id) == (2, first.lineage_id)


def test_naming_an_older_version_follows_the_lineages_latest_and_never_forks_it(container: Container) -> None:
    """Issue 47.9: register() given an older version's id made a second "version 2" (the CLI resolved the latest
    first; other callers did not). Every caller gets one rule: after the newest version not in the trash, with a
    number no version has had. So do links made afterwards (``link_version`` to an old version)."""
    first = ingest_bytes(container, T, demo._contract(1), "supply.docx").record
    named = Provenance(previous_version_id=first.file_id)  # always the first, the oldest
    second = ingest_bytes(container, T, demo._contract(2), "supply-v2.docx", named).record
    third = ingest_bytes(container, T, demo._contract(3), "supply-v3.docx", named).record
    assert [(r.version, r.previous_version_id) for r in (second, third)] == [(2, first.file_id), (3, second.file_id)]
    trash(container, T, third.file_id)  # the newest in the trash keeps its number, and may come back
    fourth = ingest_bytes(container, T, demo._contract(2) + b" ", "supply-v4.docx", named).record
    assert (fourth.version, fourth.previous_version_id) == (4, second.file_id)
    apart = ingest_bytes(container, T, SODIUM.encode(), "notes.md").record
    linked = link_version(container, T, apart.file_id, first.file_id)
    assert (linked.version, linked.previous_version_id) == (5, fourth.file_id)
    versions = [v.version for v in container.repo.lineage(T, first.lineage_id)]
    assert sorted(versions) == [1, 2, 3, 4, 5]  # one of each: no fork
    latest = [v.file_id for v in container.repo.lineage(T, first.lineage_id) if v.is_latest]
    assert latest == [linked.file_id]


def test_detach_and_relink(container: Container) -> None:
    first = ingest_bytes(container, T, demo._contract(1), "supply.docx").record
    second = ingest_bytes(
        container, T, demo._contract(2), "supply.docx", Provenance(previous_version_id=first.file_id)
    ).record
    detached = detach_version(container, T, second.file_id)
    assert (detached.version, detached.is_latest) == (1, True)
    assert container.repo.get(T, first.file_id).is_latest  # the lineage it left has its latest back
    hits = search(container, T, SearchRequest(query="supply agreement", mode="keyword")).results
    assert {h.file_id for h in hits} == {first.file_id, second.file_id}
    relinked = link_version(container, T, second.file_id, first.file_id)
    assert (relinked.version, relinked.lineage_id, relinked.is_latest) == (2, first.lineage_id, True)
    assert not container.repo.get(T, first.file_id).is_latest
    hits = search(container, T, SearchRequest(query="supply agreement", mode="keyword")).results
    assert [h.file_id for h in hits] == [second.file_id]


def test_the_cli_detaches_and_relinks(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(SODIUM)
    (tmp_path / "b.md").write_text(RECIPE)
    (a,) = json.loads(run(cli, "ingest", str(tmp_path / "a.md"), "--json"))["files"]
    (b,) = json.loads(run(cli, "ingest", str(tmp_path / "b.md"), "--previous-version", a["file_id"], "--json"))["files"]
    assert b["version"] == 2
    assert [v["version"] for v in json.loads(run(cli, "versions", b["file_id"], "--detach", "--json"))] == [1]
    lineage = json.loads(run(cli, "versions", b["file_id"], "--link-to", a["file_id"], "--json"))
    assert [v["file_id"] for v in lineage] == [a["file_id"], b["file_id"]]


def test_reconcile_detaches_old_same_name_links(container: Container) -> None:
    # given: a lineage made under the old rule (same filename alone), which recorded no link kind
    first = ingest_bytes(container, T, SODIUM.encode(), "README.markdown").record
    second = ingest_bytes(
        container, T, RECIPE.encode(), "README.markdown", Provenance(previous_version_id=first.file_id)
    ).record
    update(
        container.repo,
        T,
        second.file_id,
        lambda r: r.evolve(provenance={k: v for k, v in r.provenance.items() if k != "version_link"}),
    )
    # when
    report = reconcile(container)
    # then
    assert report["versions_not_revisions"] == {"found": 1, "fixed": 1}
    moved = container.repo.get(T, second.file_id)
    assert (moved.version, moved.is_latest, container.repo.get(T, first.file_id).is_latest) == (1, True, True)
    assert reconcile(container)["versions_not_revisions"]["found"] == 0


def test_the_drop_folder_waits_until_a_slow_writer_is_done(container: Container, tmp_path: Path) -> None:
    from semfs.server import start_inbox

    inbox = tmp_path / "inbox"
    stop = start_inbox(container, inbox, T, interval_s=0.05, settle_s=1.5)
    try:
        with (inbox / "minutes.txt").open("w") as f:  # appended over ~1 s, never still for 1.5 s (10 gaps)
            for n in range(8):
                f.write(f"Item {n}: the board discussed topic number {n} at length.\n")
                f.flush()
                time.sleep(0.15)
        deadline = time.time() + 20
        while time.time() < deadline and not (inbox / "processed" / "minutes.txt").exists():
            threading.Event().wait(0.05)
    finally:
        stop.set()
    (hit,) = search(container, T, SearchRequest(query="board discussed topic", mode="keyword")).results
    assert hit.version == 1
    text = "\n".join(b["text"] for b in [{"text": s.text} for s in hit.snippets])
    assert "Item 0" in text or "topic" in text
    record = container.repo.get(T, hit.file_id)
    assert record.size_bytes == (inbox / "processed" / "minutes.txt").stat().st_size  # the whole file


def test_files_registered_at_once_are_still_one_copy_and_one_lineage(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`semfs ingest` has two files in the pipeline at once (and `semfs serve` takes requests side by side).
    Whether a file copies a stored one, or is the next version of one, is read and then written: two threads
    that both read before either wrote stored two originals of one text, or two "version 1"s of one thread's
    attachment. Here each thread's read waits (a second at most) for the other's, so that two threads that may
    read at once always do."""
    meet = threading.Barrier(2, timeout=1)
    reads = container.repo.find_by_sha256, container.repo.find_latest

    def met(read: Callable[..., object]) -> Callable[..., object]:
        def waiting(*args: object) -> object:
            found = read(*args)
            with contextlib.suppress(threading.BrokenBarrierError):  # one at a time: the other never comes
                meet.wait()
            return found

        return waiting

    monkeypatch.setattr(container.repo, "find_by_sha256", met(reads[0]))
    monkeypatch.setattr(container.repo, "find_latest", met(reads[1]))

    def both(*calls: tuple[bytes, str, Provenance]) -> list[object]:
        done: list[object] = [None, None]

        def one(n: int) -> None:
            data, name, prov = calls[n]
            done[n] = ingest_bytes(container, T, data, name, prov).record

        threads = [threading.Thread(target=one, args=(n,)) for n in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return done

    copies = both((SODIUM.encode(), "README.md", Provenance()), (SODIUM.encode(), "README.markdown", Provenance()))
    assert sorted(str(r.outcome) for r in copies) == ["OK", "SKIPPED_DUPLICATE"]  # type: ignore[attr-defined]
    thread = Provenance(thread_subject="Supply agreement")
    drafts = both((demo._contract(1), "supply.docx", thread), (demo._contract(2), "supply.docx", thread))
    assert sorted(r.version for r in drafts) == [1, 2]  # type: ignore[attr-defined]
    assert len({r.lineage_id for r in drafts}) == 1  # type: ignore[attr-defined]


def test_a_new_version_whose_previous_is_still_being_read_waits_for_it(
    container: Container, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two attachments of one thread in the pipeline at once: the second is registered as the first's next
    version, and its Enrich judges that link against the first's text, which may not be read yet. Judged against
    no text it was detached into a lineage of its own: two "version 1"s (the fresh-clone CI's failure). Now it
    waits for the text while the first is unread; past the wait the link is kept unjudged."""
    import semfs.pipeline.stages.enrich as enrich
    from semfs.pipeline.intake.ingest import process
    from semfs.pipeline.intake.register import register

    thread = Provenance(thread_subject="Supply agreement")
    first = register(container, T, demo._contract(1), "supply.docx", thread).record  # registered, not yet read
    monkeypatch.setattr(enrich, "PREVIOUS_WAIT_S", 0.2, raising=False)
    second = ingest_bytes(container, T, demo._contract(2), "supply.docx", thread).record
    assert (second.version, second.previous_version_id) == (2, first.file_id)
    assert second.provenance.get("version_link") != "detached"

    third_data = demo._contract(3)
    process(container, first)  # the first is read now; a third version judged against the second, read
    third = ingest_bytes(container, T, third_data, "supply.docx", thread).record
    assert third.version == 3 and third.change_summary

    monkeypatch.setattr(
        enrich, "PREVIOUS_WAIT_S", 30.0, raising=False
    )  # a previous version read while the next one waits
    terms = "# Delivery terms\n\nGoods ship within ten days of the order. Freight is paid by the buyer.\n"
    fourth_reg = register(container, T, terms.encode(), "terms.md", thread).record
    later = threading.Timer(0.3, lambda: process(container, fourth_reg))
    later.start()
    fifth = ingest_bytes(container, T, terms.replace("ten", "twelve").encode(), "terms.md", thread).record
    later.join()
    assert (fifth.version, fifth.previous_version_id) == (2, fourth_reg.file_id) and fifth.change_summary
